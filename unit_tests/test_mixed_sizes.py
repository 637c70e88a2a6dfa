"""Two time-sliced sizes on one GPU (NVIDIA's mixed-size mode): what the
driver says of it is read (host/mixed_size.py), and where the driver
cannot mix sizes, two sizes on one mdev GPU are refused, however the VFs
are named (nova/plan.py): a GPU in the default equal-size mode holds one
size, and once a vGPU of one size exists every VF offers no other, so
Nova would offer vGPUs it could never create. Where it can, the plan is
test_mixed_size_plan.py's.

Forms and figures: NVIDIA's vGPU 17 User Guide, "Putting a GPU Into
Mixed-Size Mode", "Placing a vGPU on a Physical GPU in Mixed-Size Mode"
and Appendix A.3 (the 48 GB placements, Ada's 1 GB row); the L40S type
numbers of docs/facts/mixed-size.md.
"""
import pytest

from nvidia_vgpu import model
from nvidia_vgpu.host import mixed_size, supported_types
from nvidia_vgpu.nova import plan, type_listing
from snapshots import CARACAL, DRIVER, function, rules, vf_addresses

L40S = '0000:41:00.0'
VFS = vf_addresses(L40S, 8)
ONE_Q, TWO_Q, TWO_B = 'nvidia-1147', 'nvidia-1148', 'nvidia-1146'
NAMES = {ONE_Q: 'NVIDIA L40S-1Q', TWO_Q: 'NVIDIA L40S-2Q',
         TWO_B: 'NVIDIA L40S-2B'}
FRAMEBUFFER = {ONE_Q: '1024M', TWO_Q: '2048M', TWO_B: '2048M'}
MOST = {ONE_Q: 32, TWO_Q: 24, TWO_B: 24}

# `nvidia-smi -q`, the parts NVIDIA's guide shows, around other fields
QUERY = '''
==============NVSMI LOG==============

Driver Version                            : 550.54.16
Attached GPUs                             : 2
GPU 00000000:41:00.0
    Product Name                          : NVIDIA L40S
    vGPU Device Capability
        Fractional Multi-vGPU             : Supported
        Heterogeneous Time-Slice Profiles : Supported
        Heterogeneous Time-Slice Sizes    : Supported
    GPU Virtualization Mode
        Virtualization Mode               : Host VGPU
        Host VGPU Mode                    : SR-IOV
        vGPU Heterogeneous Mode           : Enabled

GPU 00000000:C1:00.0
    Product Name                          : Tesla V100-PCIE-32GB
    vGPU Device Capability
        Heterogeneous Time-Slice Sizes    : Not Supported
    GPU Virtualization Mode
        vGPU Heterogeneous Mode           : N/A
'''
# `nvidia-smi vgpu -s -v`: the guide's L4-6Q block and a type without
# placement fields
SUPPORTED = '''GPU 00000000:41:00.0
    vGPU Type ID                          : 0x392
        Name                              : NVIDIA L4-6Q
        Class                             : Quadro
        Placement Size                    : 6
        Supported Placement IDs           : 0 6 12 18
    vGPU Type ID                          : 0x393
        Name                              : NVIDIA L4-8Q
GPU 00000000:C1:00.0
    vGPU Type ID                          : 0x1b9
        Name                              : GRID V100-8Q
'''


def test_support_and_mode_are_read_per_gpu():
    assert mixed_size.parse_support(QUERY) == {
        L40S: (True, 'Enabled'), '0000:c1:00.0': (False, 'N/A')}


def test_placements_are_read_per_gpu_and_type():
    assert supported_types.parse_placements(SUPPORTED) == {
        L40S: {'nvidia-914': model.Placements(6, (0, 6, 12, 18))},
        '0000:c1:00.0': {}}
    assert model.MixedSize(True, 'Enabled', supported_types.parse_placements(
        SUPPORTED)[L40S]).most('nvidia-914') == 4


@pytest.mark.parametrize('text', [
    'simulated nvidia-smi -q: the simulator does not emulate it',
    'GPU 00000000:41:00.0\n    Placement Size : 6\n'
    '    Supported Placement IDs : 0 6 12 18\n',       # no type before
    'GPU 00000000:41:00.0\n    vGPU Type ID : 0x392\n'
    '    Supported Placement IDs : 0 x 12\n',          # not numbers
])
def test_what_is_not_in_nvidias_form_is_not_read(text):
    assert not any(supported_types.parse_placements(text).values())
    assert all(said == (None, None) for said in
               mixed_size.parse_support(text).values())


def l40s(types=(ONE_Q, TWO_Q)) -> model.HostSnapshot:
    """An L40S on jammy (mdev on its VFs), its VFs offering these
    types, none in use."""
    return model.HostSnapshot(
        (function(L40S, '26b9', '1851', 'AD102GL [L40S]'),),
        (model.HostGpu(L40S, True, VFS, False, '10de:26b9:10de:1851', 32),),
        DRIVER, CARACAL,
        offered=dict({L40S: {}}, **{vf: {vgpu_type: NAMES[vgpu_type]
                                         for vgpu_type in types}
                                    for vf in VFS}),
        type_descriptions={L40S: {
            vgpu_type: 'num_heads=4, frl_config=60, framebuffer={}, '
            'max_instance={}'.format(FRAMEBUFFER[vgpu_type], MOST[vgpu_type])
            for vgpu_type in types}})


def decide(snapshot, text):
    return plan.plan_nova(snapshot, text, None, rules(CARACAL), None, None)


@pytest.mark.parametrize('text, refusal', [
    # the GPU under both names
    ("{'L40S-1Q': ['0000:41:00.0'], 'L40S-2Q': ['0000:41:00.0']}",
     'the GPU at 0000:41:00.0 offers both L40S-1Q and L40S-2Q, two sizes; '),
    # each size on VFs of its own
    ("{'L40S-1Q': ['0000:41:00.4'], 'L40S-2Q': ['0000:41:00.5']}",
     'L40S-1Q (1024M) and L40S-2Q (2048M) on 0000:41:00.0 are different '
     'sizes; '),
    ("{'nvidia-1147': ['0000:41:00.4', '0000:41:00.6'], "
     "'nvidia-1148': ['0000:41:00.5']}",
     'L40S-1Q (1024M) and L40S-2Q (2048M) on 0000:41:00.0 are different '
     'sizes; '),
])
def test_two_sizes_are_refused_where_the_driver_cannot_mix_them(
        text, refusal):
    """The driver says nothing of mixed-size mode (a branch before it)
    or says it cannot: one size per GPU."""
    for said in ({}, {L40S: model.MixedSize(False, 'N/A')}):
        decided = decide(l40s()._replace(mixed_size=said), text)
        assert decided.sections is None
        assert decided.problem == ('blocked', (
            'Invalid vgpu-device-mappings: ' + refusal +
            'a GPU holds one vGPU size unless its driver mixes sizes '
            "(NVIDIA's mixed-size mode), which this GPU's does not say it "
            'does (list-vgpu-types): give it one size'))


def test_two_types_of_one_size_on_vfs_of_their_own_pass():
    """L40S-2Q and L40S-2B are one size: equal-size mode holds both."""
    decided = decide(l40s((TWO_B, TWO_Q)),
                     "{'L40S-2B': ['0000:41:00.4'], "
                     "'L40S-2Q': ['0000:41:00.5']}")
    assert decided.problem is None
    assert decided.host_mappings == {TWO_B: [VFS[0]], TWO_Q: [VFS[1]]}


def test_both_on_the_gpu_is_said_once_not_per_vf():
    """One type by the GPU's selector, one by its address: every VF is
    claimed twice, and the status says so once."""
    decided = decide(l40s((TWO_B, TWO_Q)),
                     "{'nvidia-1146': ['10de:26b9'], "
                     "'nvidia-1148': ['0000:41:00.0']}")
    assert decided.problem == ('blocked', (
        'Invalid vgpu-device-mappings: 0000:41:00.4 is claimed by both '
        'nvidia-1146 and nvidia-1148 (through 0000:41:00.0); a device '
        'offers one type'))


def _listed(mixed):
    offered = [model.GpuTypes(L40S, [[
        model.VgpuType(vgpu_type, vf, NAMES[vgpu_type],
                       'framebuffer={}, max_instance={}'.format(
                           FRAMEBUFFER[vgpu_type], MOST[vgpu_type]), 1)
        for vgpu_type in (ONE_Q, TWO_Q)] for vf in VFS], sriov=True)]
    return type_listing.listing(offered, 'VGPU', mixed_size={L40S: mixed})


def test_list_vgpu_types_gives_the_most_of_each_type_in_mixed_size_mode():
    listed = _listed(model.MixedSize(True, 'Disabled', {
        ONE_Q: model.Placements(1, tuple(range(0, 48, 3))),
        TWO_Q: model.Placements(2, (0, 4, 6, 10, 12, 16, 18, 22))}))
    assert listed['mixed_size'] == {L40S: {
        'supported': True, 'mode': 'disabled',
        'most_vgpus': {'L40S-1Q': 16, 'L40S-2Q': 8}}}
    assert listed['output'].splitlines()[-1] == (
        'Mixed sizes on 0000:41:00.0: supported by the driver (mode now: '
        'disabled); the most of each type in mixed-size mode: L40S-1Q x16, '
        "L40S-2Q x8; give the GPU's address under several sizes (each gets "
        'an even share) or each size VFs of its own')


def test_a_gpu_that_cannot_mix_sizes_says_so_and_one_that_is_silent_not():
    assert _listed(model.MixedSize(False, 'N/A'))['output'].splitlines()[
        -1] == ('Mixed sizes on 0000:41:00.0: not supported by this GPU '
                'and driver (one vGPU size per GPU)')
    silent = _listed(model.MixedSize(None, None))
    assert 'mixed_size' not in silent
    assert 'Mixed sizes' not in silent['output']
