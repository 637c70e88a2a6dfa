"""Two time-sliced sizes on one L40S in NVIDIA's mixed-size mode, as
Nova's own driver takes them: the charm's decision rendered into
nova.conf, the vGPUs the charm makes for Nova on the host, and Nova's
LibvirtDriver reporting the providers and placing guests.

What the charm promises here: Placement gets one provider per VF the
charm gave a size, in that size's class, no more than the charm made;
and a guest Placement puts on a VF gets the vGPU the charm made there at
its fixed placement (Nova takes an existing, unassigned vGPU of the VF's
type before it creates one: LibvirtDriver._allocate_mdevs), never one
the vGPU Manager would place itself.

Figures: NVIDIA's vGPU 17 User Guide, Appendix A.3.4, the 48 GB
placement table with Ada's 1 GB row (docs/facts/mixed-size.md).
"""
import importlib.metadata

import pytest

from charm_side import publish
from nova_host import NODE, libvirt_name, per_gpu
from nvidia_vgpu.host import mixed_size
from sim.host import vf_addresses
from test_nova_counts import NOVA_COMMON, start_nova

NOVA_MAJOR = int(importlib.metadata.version('nova').split('.')[0])
GPU = '0000:41:00.0'
VFS = vf_addresses(GPU, 32)
ONE_Q, TWO_Q = 'nvidia-1147', 'nvidia-1148'
PLACEMENTS = {
    ONE_Q: {'size': 1, 'ids': [0, 5, 6, 11, 12, 17, 18, 23, 24, 29, 30, 35,
                               36, 41, 42, 47]},
    TWO_Q: {'size': 2, 'ids': [0, 4, 6, 10, 12, 16, 18, 22, 24, 28, 30, 34,
                               36, 40, 42, 46]},
}
CLASSES = {ONE_Q: 'CUSTOM_VGPU_L40S_1Q', TWO_Q: 'CUSTOM_VGPU_L40S_2Q'}


def l40s(mode):
    """An L40S on jammy: its vGPUs are mdevs on its 32 VFs; its driver
    mixes sizes (mode: whether it is in mixed-size mode now)."""
    return {
        'address': GPU, 'vendor': '10de', 'device': '26b9',
        'class': '030200', 'subsystem_vendor': '10de',
        'subsystem_device': '1851',
        'sriov': {
            'total_vfs': 32,
            'vf_mdev_types': {
                ONE_Q: {'name': 'NVIDIA L40S-1Q', 'available_instances': 1,
                        'description': 'num_heads=4, frl_config=60, '
                        'framebuffer=1024M, max_resolution=5120x2880, '
                        'max_instance=32'},
                TWO_Q: {'name': 'NVIDIA L40S-2Q', 'available_instances': 1,
                        'description': 'num_heads=4, frl_config=60, '
                        'framebuffer=2048M, max_resolution=7680x4320, '
                        'max_instance=24'}},
            'mixed_size': {'supported': True, 'mode': mode,
                           'placements': PLACEMENTS}}}


def nvidia_smi(mode):
    """What the charm reads of mixed-size mode, in NVIDIA's forms."""
    query = ('GPU 00000000:41:00.0\n'
             '    vGPU Device Capability\n'
             '        Heterogeneous Time-Slice Sizes    : Supported\n'
             '    GPU Virtualization Mode\n'
             '        vGPU Heterogeneous Mode           : {}\n'.format(mode))
    supported = 'GPU 00000000:41:00.0\n'
    for type_id, placed in sorted(PLACEMENTS.items()):
        supported += (
            '    vGPU Type ID                          : {:#x}\n'
            '        Placement Size                    : {}\n'
            '        Supported Placement IDs           : {}\n').format(
                int(type_id.split('-')[1]), placed['size'],
                ' '.join(str(start) for start in placed['ids']))
    return {'-q': query, '-v': supported}


def charm_then_nova(tmp_path, fake_commands):
    """The charm decides with the GPU still in equal-size mode (its hook
    then sets the mode and makes the vGPUs), Nova starts on the host as
    the hook leaves it."""
    published = publish(
        tmp_path, fake_commands, [l40s('Disabled')],
        "{'L40S-1Q': ['%s'], 'L40S-2Q': ['%s']}" % (GPU, GPU), NOVA_COMMON,
        resource_class='per-profile', nvidia_smi=nvidia_smi('Disabled'))
    assert published.status is None, published.status
    made = [{'uuid': mixed_size.spare_uuid(vf, type_id, start),
             'parent': vf, 'type': type_id}
            for vf, type_id, start in published.mixed_creates]
    compute = start_nova(tmp_path, published.nova_conf, [l40s('Enabled')],
                         made)
    return compute, made


def test_placement_gets_each_size_on_the_vfs_the_charm_made_it(
        tmp_path, fake_commands):
    compute, made = charm_then_nova(tmp_path, fake_commands)
    report = compute.report()
    assert report == {mdev['parent']: {CLASSES[mdev['type']]: 1}
                      for mdev in made}
    assert per_gpu(report, compute.host) == {GPU: {CLASSES[ONE_Q]: 8,
                                                   CLASSES[TWO_Q]: 8}}


@pytest.mark.parametrize('size', [ONE_Q, TWO_Q])
def test_a_guest_gets_the_vgpu_the_charm_made_and_placed(
        tmp_path, fake_commands, size):
    compute, made = charm_then_nova(tmp_path, fake_commands)
    vgpu = next(mdev for mdev in made if mdev['type'] == size)
    compute.report()    # the providers, as Nova keeps them for this
    chosen = compute.driver._allocate_mdevs({
        compute.tree.data('{}_{}'.format(
            NODE, libvirt_name(vgpu['parent']))).uuid: {
                'resources': {CLASSES[size]: 1}}})
    assert chosen == [vgpu['uuid']]
    assert compute.created == []
