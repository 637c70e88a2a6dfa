"""What nova.conf needs for a set of vGPU mappings, per Nova's option names.

The charm class for the installed OpenStack release says which names
apply (model.NovaOptions); these functions only turn validated mappings into
the sections nova-compute renders, and the JSON the principal reads.
"""
import json
from typing import (Dict, Iterable, List, Mapping, Optional, Sequence,
                    Tuple)

from nvidia_vgpu.nova import vfio_migration
from nvidia_vgpu.nova.mappings import Mappings
from nvidia_vgpu import model

NOVA_CONF = '/etc/nova/nova.conf'
# charm-nova-compute asks for service 'nova-compute' then 'nova' and
# honours only the first it finds; publish one of them only.
NOVA_SERVICE = 'nova'

Sections = Dict[str, List[List[str]]]
# Placement's standard class for vGPUs, Nova's default mdev_class.
VGPU = 'VGPU'


# Before Caracal, with one type enabled, LibvirtDriver's
# _get_vgpu_type_per_pgpu returns it for every device without looking at
# the addresses (nova 21.2.4, 25.2.1, 28.3.1); Queens to Train have no
# addresses at all.
QUEENS = model.NovaOptions('enabled_vgpu_types', None)
USSURI = model.NovaOptions('enabled_vgpu_types', 'vgpu_')
# nova 24-28 register [mdev_<type>] mdev_class in LibvirtDriver.__init__
# only when several types are enabled; with one, every vGPU is VGPU
# (nova/virt/libvirt/driver.py _get_supported_vgpu_types, 24.0.0-28.3.1).
XENA = model.NovaOptions('enabled_mdev_types', 'mdev_', mdev_class_types=2)
# From 29.0.0 it registers them always, and a device outside every
# type's device_addresses gets no type (nova 29.2.1). Caracal's
# [mdev_<type>] max_instances is not used: capacity.py says why.
CARACAL = model.NovaOptions('enabled_mdev_types', 'mdev_', mdev_class_types=1,
                            address_types=1)
EPOXY = CARACAL._replace(managed_no_vfs=True)


def nova_sections(mappings: Mappings, options: model.NovaOptions,
                  classes: Optional[Mapping[str, str]] = None) -> Sections:
    """The nova.conf sections for these mappings; none for no mappings.

    Without per-type groups, Nova applies its one type to every GPU, so
    the addresses have nowhere to go (the caller has checked there is
    only one type). On SR-IOV GPUs the mappings already hold only as
    many VFs per GPU as it can host (capacity.py).

    classes: type -> Placement resource class; mdev_class is written
    beside device_addresses (Nova 29+ leaves a type without addresses in
    VGPU whatever its class) and only for a class other than Nova's
    default VGPU, so that the default publishes what it always has. The
    caller has checked that this nova honours it (resource_classes.py).
    """
    if not mappings:
        return {}
    sections: Sections = {
        'devices': [[options.type_list_option, ', '.join(mappings)]]}
    if options.type_group_prefix:
        for vgpu_type, addresses in mappings.items():
            group = [['device_addresses', ','.join(addresses)]]
            resource_class = (classes or {}).get(vgpu_type, VGPU)
            if resource_class != VGPU:
                if options.mdev_class_types is None:
                    raise ValueError('this nova has no mdev_class')
                group.append(['mdev_class', resource_class])
            sections[options.type_group_prefix + vgpu_type] = group
    return sections


def devices_nova_adds(mappings: Mappings, options: model.NovaOptions,
                      offered: Mapping[str, Iterable[str]]
                      ) -> Dict[str, List[str]]:
    """type -> the devices Nova gives it although the mappings do not.

    offered: mdev device -> the types it offers (sysfs). Where the host
    enables fewer types than this Nova needs to honour device_addresses
    (one, before Caracal), Nova uses its one type on every device that
    offers it: a GPU left out of the mappings, and on an SR-IOV GPU the
    VFs beyond what it can host (capacity.py chose fewer). Nothing can be
    written to stop that on those releases; the operator is told.
    """
    if not mappings or len(mappings) >= options.address_types:
        return {}
    adds = {}
    for vgpu_type, named in mappings.items():
        extra = sorted(device for device, types in offered.items()
                       if vgpu_type in types and device not in named)
        if extra:
            adds[vgpu_type] = extra
    return adds


def adds_summary(adds: Mapping[str, Sequence[str]],
                 gpu_of: Mapping[str, str]) -> List[str]:
    """Status phrases for devices_nova_adds: a whole GPU by its address,
    VFs counted per GPU (gpu_of: VF -> its physical GPU)."""
    phrases = []
    for vgpu_type, devices in sorted(adds.items()):
        gpus: List[str] = []
        vfs: Dict[str, int] = {}
        for device in sorted(devices):
            if device in gpu_of and gpu_of[device] != device:
                vfs[gpu_of[device]] = vfs.get(gpu_of[device], 0) + 1
            else:
                gpus.append(device)
        parts = gpus + ['{} VF{} of {}'.format(
            count, '' if count == 1 else 's', gpu)
            for gpu, count in sorted(vfs.items())]
        phrases.append(
            'Nova also gives {} to {} (before Caracal, Nova gives a host\'s '
            'only vGPU type to every device offering it: give another GPU '
            'here a second type, or upgrade)'.format(
                vgpu_type, ', '.join(parts)))
    return phrases


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


def pci_passthrough_section(vfs: Dict[str, List[Tuple[str, str]]],
                            classes: Optional[Mapping[str, Tuple[str, str]]]
                            = None, live_migratable: bool = False
                            ) -> List[List[str]]:
    """[pci] entries for VFs NVIDIA's vendor-specific VFIO driver typed.

    vfs: vGPU type -> [(VF address, PCI device id)]. Each VF is offered
    as-is (managed: no, Nova must not rebind it) under the type's
    resource class, and an alias lets a flavor ask for it
    (pci_passthrough:alias=nvidia-1148:1). classes: type -> (resource
    class, alias name); by default the type's own class, CUSTOM_NVIDIA_<N>,
    and an alias named after the type. live_migratable: tag every entry
    and alias "yes" (vfio_migration.py says where the host allows it:
    Nova migrates only what both say, and refuses to start with the tag
    on an older libvirt or QEMU). Values are JSON built from validated
    addresses, types and classes only.
    """
    chosen = {vgpu_type: (classes or {}).get(
        vgpu_type, (resource_class(vgpu_type), vgpu_type))
        for vgpu_type in vfs}
    tag = {vfio_migration.TAG: vfio_migration.YES} if live_migratable else {}
    entries: List[List[str]] = []
    for vgpu_type in vfs:
        for address, product in vfs[vgpu_type]:
            entries.append(['device_spec', json.dumps(dict({
                'vendor_id': '10de', 'product_id': product,
                'address': address, 'resource_class':
                chosen[vgpu_type][0], 'managed': 'no'}, **tag),
                sort_keys=True)])
    for vgpu_type in vfs:
        alias = dict({'device_type': 'type-VF',
                      'name': chosen[vgpu_type][1],
                      'resource_class': chosen[vgpu_type][0]}, **tag)
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
