"""What list-vgpu-types lists, from the one host reader's snapshot at the
listing's level (host/snapshot.read_listing): names and descriptions as
the first VF of an mdev GPU gives them, each VF's own free instances,
the vGPUs on the GPU's VFs, and on NVIDIA's vendor-specific VFIO driver
each VF's own table in type order. Type ids and names are those of the
shipped scenarios (scenarios/sriov/, scenarios/no-mdev/)."""
import pytest

from nvidia_vgpu import model
from nvidia_vgpu.nova import type_listing

A40 = '0000:41:00.0'
A40_VFS = ('0000:41:00.4', '0000:41:00.5')
V100 = '0000:84:00.0'
L40S = '0000:c1:00.0'
L40S_VFS = ('0000:c1:00.4', '0000:c1:00.5')


def _host():
    return model.HostSnapshot(
        functions=(), driver='550.90.05', nova_version=None,
        gpus=(model.HostGpu(A40, True, A40_VFS, total_vfs=None),
              model.HostGpu(V100, False),
              model.HostGpu(L40S, True, L40S_VFS, vendor_vfio=True,
                            total_vfs=None)),
        offered={
            A40_VFS[0]: {'nvidia-566': 'NVIDIA A40-48Q',
                         'nvidia-557': 'NVIDIA A40-2Q'},
            A40_VFS[1]: {'nvidia-566': 'NVIDIA A40-48Q',
                         'nvidia-557': 'NVIDIA A40-2Q'},
            V100: {'nvidia-108': 'GRID V100-8Q'},
            # As the driver's table is read, not in type order.
            L40S_VFS[0]: {'nvidia-1155': 'NVIDIA L40S-48Q',
                          'nvidia-1145': 'NVIDIA L40S-1B',
                          'nvidia-1148': 'NVIDIA L40S-2Q'},
            L40S_VFS[1]: {},
        },
        type_descriptions={
            A40: {'nvidia-557': 'max_instance=24',
                  'nvidia-566': 'max_instance=1'},
            V100: {'nvidia-108': 'max_instance=2'}},
        mdevs=(model.Mdev('uuid-1', A40_VFS[1], 'nvidia-566'),
               model.Mdev('uuid-2', V100, 'nvidia-108')),
        available={(A40_VFS[0], 'nvidia-557'): 1,
                   (A40_VFS[0], 'nvidia-566'): 1,
                   (A40_VFS[1], 'nvidia-557'): 0,
                   (A40_VFS[1], 'nvidia-566'): 0,
                   (V100, 'nvidia-108'): 1})


def test_an_mdev_gpus_vfs_each_list_the_first_vfs_types_with_their_own_free():
    a40 = type_listing.offered_types(_host())[0]
    assert (a40.gpu, a40.sriov, a40.vendor_vfio) == (A40, True, False)
    assert a40.per_device == [
        [model.VgpuType('nvidia-557', vf, 'NVIDIA A40-2Q',
                        'max_instance=24', free),
         model.VgpuType('nvidia-566', vf, 'NVIDIA A40-48Q',
                        'max_instance=1', free)]
        for vf, free in zip(A40_VFS, (1, 0))]
    # The vGPU on its second VF, not the V100's.
    assert a40.hosted == ['nvidia-566']


def test_a_gpu_without_vfs_lists_its_own_types():
    v100 = type_listing.offered_types(_host())[1]
    assert v100 == model.GpuTypes(V100, [[model.VgpuType(
        'nvidia-108', V100, 'GRID V100-8Q', 'max_instance=2', 1)]])


def test_a_vendor_vfio_vf_lists_what_it_can_still_take_in_type_order():
    l40s = type_listing.offered_types(_host())[2]
    assert (l40s.sriov, l40s.vendor_vfio, l40s.hosted) == (True, True, [])
    assert l40s.per_device == [
        [model.VgpuType('nvidia-' + number, L40S_VFS[0], name, '', 1)
         for number, name in (('1145', 'NVIDIA L40S-1B'),
                              ('1148', 'NVIDIA L40S-2Q'),
                              ('1155', 'NVIDIA L40S-48Q'))],
        []]


def test_an_unread_free_count_is_unknown_not_zero():
    host = _host()._replace(available={})
    assert {vgpu_type.available_instances
            for device in type_listing.offered_types(host)[0].per_device
            for vgpu_type in device} == {None}


# Nova releases as nova-common gives them: Caracal (29), Epoxy (31),
# Flamingo (32), Gazpacho (33).
CARACAL, EPOXY = '3:29.2.0-0ubuntu1', '3:31.0.0-0ubuntu1~cloud0'
FLAMINGO, GAZPACHO = '3:32.0.0-0ubuntu1', '3:33.0.0-0ubuntu1'


@pytest.mark.parametrize('nova, v100_two, l40s_two', [
    # Before Gazpacho Nova's libvirt driver creates the first request
    # group's vGPU only; typed VFs are PCI devices from Epoxy on.
    (None, None, None),
    (CARACAL, None, None),
    (EPOXY, None, 'pci_passthrough:alias=nvidia-1148:2'),
    (FLAMINGO, None, 'pci_passthrough:alias=nvidia-1148:2'),
    (GAZPACHO, 'resources1:VGPU=1 resources2:VGPU=1 group_policy=isolate',
     'pci_passthrough:alias=nvidia-1148:2'),
])
def test_two_vgpus_per_guest_only_where_this_nova_gives_them(
        nova, v100_two, l40s_two):
    versions = model.Versions(nova, None, None, None) if nova else None
    types = {(record['gpu'], record['type']): record for record in
             type_listing.listing(type_listing.offered_types(_host()),
                                  'VGPU', versions=versions)['types']}
    assert types[(V100, 'nvidia-108')]['flavor_property_two'] == v100_two
    assert types[(L40S, 'nvidia-1148')]['flavor_property_two'] == l40s_two
    output = type_listing.listing(type_listing.offered_types(_host()),
                                  'VGPU', versions=versions)['output']
    assert ('two per guest: ' in output) is bool(l40s_two)


def test_two_vgpus_per_guest_in_the_profiles_class():
    versions = model.Versions(GAZPACHO, None, None, None)
    v100 = [record for record in type_listing.listing(
        type_listing.offered_types(_host()), 'per-profile',
        versions=versions)['types'] if record['gpu'] == V100]
    assert [record['flavor_property_two'] for record in v100] == [
        'resources1:CUSTOM_VGPU_V100_8Q=1 resources2:CUSTOM_VGPU_V100_8Q=1 '
        'group_policy=isolate']
