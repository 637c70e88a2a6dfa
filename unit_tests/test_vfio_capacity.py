"""On NVIDIA's vendor-specific VFIO driver a GPU takes a time-sliced type
on at most its maximum per GPU, whatever its VFs number, and a VF lists
only what it can take now: the charm gives Nova (and types) no more VFs
than that maximum, which it reads from `nvidia-smi vgpu -s -v` ("Max
Instances"), sysfs having no description on this path
(host/supported_types.py, nova/capacity.py).

Figures: an RTX PRO 6000 Blackwell with 48 VFs, 24 DC-4Q at most (a
third-party capture, docs/facts/mixed-size.md).
"""
import pytest

from nvidia_vgpu import model
from nvidia_vgpu.host import supported_types
from nvidia_vgpu.nova import plan
from snapshots import EPOXY, NOBLE, function, rules, vf_addresses

GPU = '0000:38:00.0'
VFS = vf_addresses(GPU, 48)
DC_4Q = 'nvidia-1521'
NAMES = {'nvidia-1518': 'NVIDIA RTX Pro 6000 Blackwell DC-2B',
         DC_4Q: 'NVIDIA RTX Pro 6000 Blackwell DC-4Q'}
# `nvidia-smi vgpu -s -v` in the form NVIDIA prints it, with the fields
# that sit beside "Max Instances"
SUPPORTED = '''GPU 00000000:38:00.0
    vGPU Type ID                          : 0x5ee
        Name                              : NVIDIA RTX Pro 6000 Blackwell DC-2B
        Max Instances                     : 32
        Max Instances Per VM              : 1
        Max Instances Per GI              : N/A
    vGPU Type ID                          : 0x5f1
        Name                              : NVIDIA RTX Pro 6000 Blackwell DC-4Q
        Max Instances Per VM              : 16
        Max Instances                     : 24
    vGPU Type ID                          : 0x5f2
        Name                              : NVIDIA RTX Pro 6000 Blackwell DC-6Q
        Max Instances                     : N/A
'''


def test_each_types_maximum_is_read_not_its_per_vm_count():
    assert supported_types.parse_max_instances(SUPPORTED) == {
        (GPU, 'nvidia-1518'): 32, (GPU, DC_4Q): 24}


def rtx_pro(typed=(), most=24) -> model.HostSnapshot:
    """The GPU on noble's vendor-specific VFIO driver; typed: VFs that
    hold DC-4Q (each lists it, the others while fewer than `most` do)."""
    full = most is not None and len(typed) >= most
    offered = {GPU: {}}
    offered.update({vf: {DC_4Q: NAMES[DC_4Q]} if vf in typed else
                    {'nvidia-1518': NAMES['nvidia-1518']} if full else
                    dict(NAMES) for vf in VFS})
    return model.HostSnapshot(
        (function(GPU, '2bb5', '0000', 'GB202GL'),),
        (model.HostGpu(GPU, True, VFS, True, '10de:2bb5', 48),),
        '580.105.06', EPOXY, offered=offered,
        vf_device_ids={vf: '2bb5' for vf in VFS},
        libvirt_version=NOBLE[0], qemu_version=NOBLE[1],
        vf_current_types={vf: 1521 if vf in typed else 0 for vf in VFS},
        max_instances={} if most is None else {(GPU, DC_4Q): most})


def given(snapshot, text="{'DC-4Q': ['10de:2bb5']}"):
    decided = plan.plan_nova(snapshot, text, None, rules(EPOXY), None, None)
    assert decided.problem is None, decided.problem
    return decided.vf_types.get(DC_4Q, [])


@pytest.mark.parametrize('typed, expected', [
    ((), list(VFS[:24])),
    # VFs that hold the type stay with it; free ones fill up in order
    (VFS[40:44], list(VFS[:20]) + list(VFS[40:44])),
    # a full GPU: its typed VFs, though no other VF lists the type
    (VFS[24:48], list(VFS[24:48])),
])
def test_the_gpu_named_gives_as_many_vfs_as_its_maximum(typed, expected):
    assert given(rtx_pro(typed)) == expected


def test_vfs_named_within_the_maximum_are_given_as_written():
    text = "{'DC-4Q': ['0000:38:00.4', '0000:38:05.3']}"
    assert given(rtx_pro(), text) == ['0000:38:00.4', '0000:38:05.3']


def test_without_the_maximum_every_vf_named_is_given():
    assert given(rtx_pro(most=None)) == list(VFS)


def test_status_counts_the_vgpus_nova_gets():
    decided = plan.plan_nova(rtx_pro(), "{'DC-4Q': ['10de:2bb5']}", None,
                             rules(EPOXY), None, None)
    assert decided.sriov_capacity == {DC_4Q: {GPU: 24}}
