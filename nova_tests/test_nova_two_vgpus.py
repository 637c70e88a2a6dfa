"""Two vGPUs for one guest, as Nova itself takes the flavor properties
that list-vgpu-types gives for them.

On the mdev path the charm's properties are two request groups of one
vGPU each with group_policy=isolate: Nova's scheduler must turn them
into two groups on different providers, and its libvirt driver must
create a vGPU on each provider Placement allocated. Before Gazpacho
(nova 33) the driver creates the first group's vGPU only (bug 1758086),
which is why the charm offers the properties only from there on
(families.several_vgpus_per_guest). On NVIDIA's vendor-specific VFIO
driver a vGPU is a PCI device, and the flavor asks for two of its
alias, which Nova's PCI tracker meets only with two typed VFs.
"""
from typing import Dict
from urllib import parse

import pytest
from nova import objects
from nova.scheduler import utils as scheduler_utils

from charm_side import publish
from nvidia_vgpu.nova import families, resource_classes
from test_nova_counts import (  # noqa: F401 (stop_nova: autouse fixture)
    L40S, NOBLE_VERSIONS, NOVA_COMMON, NOVA_MAJOR, l40s, nova_on, start_nova,
    stop_nova, v100)

V100_1, V100_2 = '0000:84:00.0', '0000:85:00.0'
BOTH_GPUS_8Q = "{'nvidia-108': ['%s', '%s']}" % (V100_1, V100_2)


def extra_specs(properties: str) -> Dict[str, str]:
    """The flavor's extra specs, as `openstack flavor set --property`
    sets each of list-vgpu-types' space-separated properties."""
    return dict(item.split('=', 1) for item in properties.split())


def placement_query(properties: str) -> Dict[str, str]:
    """What Nova's scheduler asks Placement's allocation candidates for,
    for a flavor with these properties besides its size."""
    objects.register_all()
    flavor = objects.Flavor(vcpus=8, memory_mb=16384, root_gb=80,
                            ephemeral_gb=0, swap=0,
                            extra_specs=extra_specs(properties))
    request = scheduler_utils.ResourceRequest.from_request_spec(
        objects.RequestSpec(flavor=flavor, is_bfv=False))
    return dict(parse.parse_qsl(request.to_querystring()))


@pytest.mark.parametrize('resource_class', ['VGPU', 'CUSTOM_VGPU_V100_8Q'])
def test_the_two_vgpu_flavor_is_two_groups_on_different_providers(
        resource_class):
    query = placement_query(resource_classes.flavor_property_for(
        2, 'nvidia-108', resource_class, vendor_vfio=False))
    assert query['group_policy'] == 'isolate'
    groups = {key: value for key, value in query.items()
              if key.startswith('resources') and key != 'resources'}
    assert groups == {'resources1': '{}:1'.format(resource_class),
                      'resources2': '{}:1'.format(resource_class)}
    # The guest's size stays in the unnumbered group, on the host itself.
    assert 'VGPU' not in query['resources']


def test_nova_creates_a_vgpu_on_each_gpu_where_the_charm_offers_two(
        tmp_path, fake_commands):
    compute = nova_on(tmp_path, fake_commands, [v100(V100_1), v100(V100_2)],
                      BOTH_GPUS_8Q)
    compute.report()
    created = compute.allocate_for_one_guest([V100_1, V100_2])
    if families.several_vgpus_per_guest(NOVA_COMMON, False):
        assert sorted(created) == [(V100_1, 'nvidia-108'),
                                   (V100_2, 'nvidia-108')]
    else:
        # Placement took two vGPUs and the guest gets one: why
        # list-vgpu-types gives no two-per-guest properties here.
        assert len(created) == 1
    assert families.several_vgpus_per_guest(NOVA_COMMON, False) == (
        NOVA_MAJOR >= 33)


@pytest.mark.skipif(NOVA_MAJOR < 31, reason='Nova takes typed VFs from '
                    'Epoxy (31) on')
@pytest.mark.parametrize('typed_vfs, fits', [
    ("['0000:41:00.4', '0000:41:00.5']", True),
    ("['0000:41:00.4']", False)])
def test_two_vgpus_on_vendor_vfio_take_two_typed_vfs(
        tmp_path, fake_commands, typed_vfs, fits):
    two = extra_specs(resource_classes.flavor_property_for(
        2, 'nvidia-1148', 'CUSTOM_NVIDIA_1148', vendor_vfio=True))
    published = publish(tmp_path, fake_commands, [l40s(L40S)],
                        "{'nvidia-1148': %s}" % typed_vfs, NOVA_COMMON)
    assert published.status is None, published.status
    compute = start_nova(tmp_path, published.nova_conf, [l40s(L40S)],
                         database=True, versions=NOBLE_VERSIONS)
    compute.report_pci()
    assert compute.flavor_fits(two) is fits
