"""Which VFs of each SR-IOV GPU Nova is given (nvidia_vgpu.nova.capacity): as
many as the GPU can host of the type, lowest first, never taking away a
VF a guest's vGPU lives on."""
from nvidia_vgpu.nova import capacity
from nvidia_vgpu.model import HostGpu


def vfs(prefix, count):
    """VF addresses as an A40 numbers them: .4 onwards."""
    result = []
    for index in range(count):
        number = 4 + index
        result.append('{}:{:02x}.{}'.format(prefix, number // 8, number % 8))
    return result


A40_1 = vfs('0000:51', 32)
A40_2 = vfs('0000:52', 32)
GPUS = [HostGpu('0000:51:00.0', True, tuple(A40_1)),
        HostGpu('0000:52:00.0', True, tuple(A40_2)),
        HostGpu('0000:84:00.0', False)]
CAPACITIES = {('0000:51:00.0', 'nvidia-557'): 24,
              ('0000:52:00.0', 'nvidia-557'): 24}


def test_each_gpu_gives_its_lowest_vfs_up_to_its_capacity():
    limited = capacity.limit_to_capacity(
        {'nvidia-557': sorted(A40_1 + A40_2)}, GPUS, CAPACITIES, set())
    assert limited == {'nvidia-557': A40_1[:24] + A40_2[:24]}
    assert capacity.per_gpu(limited, GPUS) == {
        'nvidia-557': {'0000:51:00.0': 24, '0000:52:00.0': 24}}


def test_a_vf_in_use_outside_the_lowest_stays_and_a_free_one_gives_way():
    chosen = capacity.vfs_to_publish(A40_1, 24, {A40_1[30]})
    assert chosen == sorted(A40_1[:23] + [A40_1[30]])
    assert len(chosen) == 24


def test_vfs_in_use_are_kept_even_beyond_the_capacity():
    in_use = set(A40_1[-3:])
    assert capacity.vfs_to_publish(A40_1, 2, in_use) == sorted(in_use)


def test_an_unknown_capacity_gives_every_vf():
    assert capacity.vfs_to_publish(reversed(A40_1), None, set()) == A40_1


def test_fewer_vfs_listed_than_the_gpu_can_host_are_all_given():
    assert capacity.vfs_to_publish(A40_1[:3], 24, set()) == A40_1[:3]


def test_gpus_without_sriov_and_unlisted_types_are_left_alone():
    wanted = {'nvidia-108': ['0000:84:00.0'], 'nvidia-566': A40_2[:5]}
    assert capacity.limit_to_capacity(wanted, GPUS, CAPACITIES, set()) == \
        wanted


def test_the_choice_does_not_depend_on_the_order_given():
    one = capacity.limit_to_capacity(
        {'nvidia-557': A40_2 + A40_1}, GPUS, CAPACITIES, set())
    other = capacity.limit_to_capacity(
        {'nvidia-557': list(reversed(A40_1 + A40_2))}, GPUS, CAPACITIES,
        set())
    assert one == other


def test_occupants_are_vgpus_now_and_guests_vgpus_to_come_back():
    existing = [('aaaa', A40_1[0], 'nvidia-557')]   # any mdev, used or not
    recorded = {'bbbb': (A40_1[9], 'nvidia-558'),
                'cccc': (A40_1[7], 'nvidia-557')}
    # bbbb: a guest's vGPU gone at a reboot; cccc: no guest uses it.
    assert capacity.occupants(existing, ['aaaa', 'bbbb'], recorded) == {
        A40_1[0]: 'nvidia-557', A40_1[9]: 'nvidia-558'}


# An H100 in MIG mode cut into four 1g.10gb and one 3g.40gb GPU instance:
# nvidia-1130 (H100XM-1-10C) has 4 vGPUs, nvidia-1133 (H100XM-3-40C) 1.
H100 = '0000:41:00.0'
H100_VFS = vfs('0000:41', 16)
H100_GPUS = [HostGpu(H100, True, tuple(H100_VFS))]
MIG_CAPACITIES = {(H100, 'nvidia-1130'): 4, (H100, 'nvidia-1133'): 1}
BOTH = {'nvidia-1130': H100_VFS, 'nvidia-1133': H100_VFS}


def shared(wanted, occupied=None, capacities=None, mig_gpus=(H100,)):
    return capacity.share_mig_gpus(
        wanted, H100_GPUS, MIG_CAPACITIES if capacities is None
        else capacities, occupied or {}, mig_gpus)


def test_each_mig_backed_type_gets_as_many_vfs_as_instances_none_twice():
    assert shared(BOTH) == {'nvidia-1130': H100_VFS[:4],
                            'nvidia-1133': H100_VFS[4:5]}


def test_a_vf_hosting_a_vgpu_stays_with_its_type_and_no_other():
    occupied = {H100_VFS[0]: 'nvidia-1133', H100_VFS[9]: 'nvidia-1130'}
    assert shared(BOTH, occupied) == {
        'nvidia-1130': H100_VFS[1:4] + [H100_VFS[9]],
        'nvidia-1133': [H100_VFS[0]]}


def test_a_vf_hosting_an_unmapped_type_is_given_to_none():
    assert shared(BOTH, {H100_VFS[0]: 'nvidia-1131'}) == {
        'nvidia-1130': H100_VFS[1:5], 'nvidia-1133': H100_VFS[5:6]}


def test_a_type_whose_instances_are_unknown_gets_no_vf_beside_others():
    assert shared(BOTH, capacities={(H100, 'nvidia-1130'): 4}) == {
        'nvidia-1130': H100_VFS[:4], 'nvidia-1133': []}


def test_one_type_or_a_gpu_not_in_mig_mode_is_left_as_it_is():
    one = {'nvidia-1130': H100_VFS}
    assert shared(one) == one
    assert shared(BOTH, mig_gpus=()) == BOTH


def test_the_share_does_not_depend_on_the_order_given():
    assert shared({'nvidia-1133': list(reversed(H100_VFS)),
                   'nvidia-1130': H100_VFS}) == shared(BOTH)


def test_summary_says_how_many_vgpus_each_gpu_offers():
    assert capacity.summary({
        'nvidia-557': {'0000:51:00.0': 24, '0000:52:00.0': 24},
        'nvidia-697': {'0000:41:00.0': 2},
        'nvidia-566': {'0000:51:00.0': 1, '0000:52:00.0': 3}}) == [
        'nvidia-557: 24 vGPUs per GPU on 2 GPUs',
        'nvidia-697: 2 vGPUs on 1 GPU',
        'nvidia-566: 1+3 vGPUs on 2 GPUs']
