"""What nova.conf needs for a set of vGPU mappings, per Nova's option names.

The charm class for the installed OpenStack release says which names
apply (NovaOptions); these functions only turn validated mappings into
the sections nova-compute renders, and the JSON the principal reads.
"""
import json
from typing import Dict, List, NamedTuple, Optional, Tuple

from nvidia_vgpu.mappings import Mappings

NOVA_CONF = '/etc/nova/nova.conf'
# charm-nova-compute asks for service 'nova-compute' then 'nova' and
# honours only the first it finds; publish one of them only.
NOVA_SERVICE = 'nova'

Sections = Dict[str, List[List[str]]]


class NovaOptions(NamedTuple):
    """Nova's vGPU option names in one release family."""

    type_list_option: str            # [devices] enabled_*_types
    type_group_prefix: Optional[str]  # None: no per-type groups (< Ussuri)
    # PCI passthrough of pre-typed VFs (vendor-specific VFIO, 31+)
    managed_no_vfs: bool = False


QUEENS = NovaOptions('enabled_vgpu_types', None)
USSURI = NovaOptions('enabled_vgpu_types', 'vgpu_')
XENA = NovaOptions('enabled_mdev_types', 'mdev_')
# Caracal's [mdev_<type>] max_instances is not used: capacity.py says why.
CARACAL = XENA
EPOXY = NovaOptions('enabled_mdev_types', 'mdev_', managed_no_vfs=True)


def nova_sections(mappings: Mappings, options: NovaOptions) -> Sections:
    """The nova.conf sections for these mappings; none for no mappings.

    Without per-type groups, Nova applies its one type to every GPU, so
    the addresses have nowhere to go (the caller has checked there is
    only one type). On SR-IOV GPUs the mappings already hold only as
    many VFs per GPU as it can host (capacity.py).
    """
    if not mappings:
        return {}
    sections: Sections = {
        'devices': [[options.type_list_option, ', '.join(mappings)]]}
    if options.type_group_prefix:
        for vgpu_type, addresses in mappings.items():
            sections[options.type_group_prefix + vgpu_type] = [
                ['device_addresses', ','.join(addresses)]]
    return sections


def subordinate_configuration(sections: Sections) -> Dict[str, dict]:
    """The blob charmhelpers' SubordinateConfigContext reads.

    Only 'sections' under the config file: any other key there would flow
    into nova.conf's template context.
    """
    return {NOVA_SERVICE: {NOVA_CONF: {'sections': sections}}}


def resource_class(vgpu_type: str) -> str:
    """Placement resource class for a vGPU type: nvidia-1148 ->
    CUSTOM_NVIDIA_1148 (validated type names make this safe)."""
    return 'CUSTOM_' + vgpu_type.upper().replace('-', '_')


def pci_passthrough_section(vfs: Dict[str, List[Tuple[str, str]]]
                            ) -> List[List[str]]:
    """[pci] entries for VFs NVIDIA's vendor-specific VFIO driver typed.

    vfs: vGPU type -> [(VF address, PCI device id)]. Each VF is offered
    as-is (managed: no, Nova must not rebind it) under the type's
    resource class, and an alias named after the type lets a flavor ask
    for it (pci_passthrough:alias=nvidia-1148:1). Values are JSON built
    from validated addresses and types only.
    """
    entries: List[List[str]] = []
    for vgpu_type in vfs:
        for address, product in vfs[vgpu_type]:
            entries.append(['device_spec', json.dumps({
                'vendor_id': '10de', 'product_id': product,
                'address': address, 'resource_class':
                resource_class(vgpu_type), 'managed': 'no'},
                sort_keys=True)])
    for vgpu_type in vfs:
        alias = {'device_type': 'type-VF', 'name': vgpu_type,
                 'resource_class': resource_class(vgpu_type)}
        products = {product for _, product in vfs[vgpu_type]}
        if len(products) == 1:
            # nova-compute parses the alias too (resize claims): without
            # [filter_scheduler] pci_in_placement there it refuses one
            # that lacks vendor_id and product_id (nova.pci.request).
            alias.update(vendor_id='10de', product_id=products.pop())
        entries.append(['alias', json.dumps(alias, sort_keys=True)])
    if entries:
        entries.append(['report_in_placement', 'True'])
    return entries
