"""Profile names in the mappings become each host's own type ids."""
import pytest

from nvidia_vgpu import names
from nvidia_vgpu.nova import mappings, profiles
from nvidia_vgpu.model import HostGpu

V100 = '10de:1db4:10de:1214'
A40 = '10de:2235:10de:145a'
A100 = '10de:20b5:10de:1533'
L40S = '10de:26b9:10de:1851'

# Names as the drivers print them (shared/reference host facts, section 5).
V100_TYPES = {'nvidia-105': 'GRID V100-1Q', 'nvidia-108': 'GRID V100-8Q',
              'nvidia-301': 'GRID V100-16C'}
A40_TYPES = {'nvidia-557': 'NVIDIA A40-1Q', 'nvidia-558': 'NVIDIA A40-2Q'}
A100_TYPES = {'nvidia-692': 'GRID A100D-4C', 'nvidia-699': 'GRID A100D-1-10C',
              'nvidia-700': 'GRID A100D-2-20C'}
L40S_TABLE = {'nvidia-1145': 'NVIDIA L40S-1B', 'nvidia-1148': 'NVIDIA L40S-2Q'}

A40_VFS = ('0000:41:00.4', '0000:41:00.5')
A100_VFS = ('0000:81:00.4', '0000:81:00.5')


def v100(address='0000:84:00.0'):
    return HostGpu(address, False, ids=V100)


def a40(vfs=A40_VFS):
    return HostGpu('0000:41:00.0', True, vfs, ids=A40)


def offered(*gpus_and_types):
    """device -> {type id: name}: the PF or each VF lists the types."""
    table = {}
    for gpu, types in gpus_and_types:
        for device in gpu.virtual_functions or (gpu.address,):
            table[device] = dict(types)
        if gpu.virtual_functions:
            table[gpu.address] = {}
    return table


def resolve(text, gpus, table):
    return profiles.resolve(mappings.parse(text), gpus, table)


@pytest.mark.parametrize('driver_name, profile', [
    ('GRID V100-8Q', 'V100-8Q'),
    ('GRID A100D-1-10C', 'A100D-1-10C'),
    ('NVIDIA A100D-1-10C', 'A100D-1-10C'),
    ('NVIDIA L40S-2Q', 'L40S-2Q'),
    ('NVIDIA RTX6000-Ada-4Q', 'RTX6000-Ada-4Q'),
    ('NVIDIA RTX Pro 6000 Blackwell DC-4-96Q', 'DC-4-96Q'),
    ('V100-8Q', 'V100-8Q'),
    ('', None),
    ('GRID V100-8Q (8GB)', None),
    ('nvidia-108', None),
])
def test_the_profile_is_the_last_word_of_the_drivers_name(driver_name,
                                                          profile):
    assert names.profile_of(driver_name) == profile


def test_type_ids_pass_through_untouched():
    wanted = mappings.parse("{'nvidia-108': ['0000:84:00.0']}")
    result = profiles.resolve(wanted, [v100()], None)
    assert result.mappings == wanted
    assert not profiles.named(wanted)
    assert profiles.summary(result) == []


def test_a_profile_name_becomes_the_gpus_type_id():
    result = resolve("{'V100-8Q': ['0000:84:00.0']}", [v100()],
                     offered((v100(), V100_TYPES)))
    assert result.mappings == {'nvidia-108': ['0000:84:00.0']}
    assert result.problems == []
    assert profiles.summary(result) == ['V100-8Q is nvidia-108']


def test_before_the_driver_runs_nothing_is_guessed():
    result = resolve("{'V100-8Q': ['0000:84:00.0'], "
                     "'nvidia-222': ['0000:8a:00.0']}", [v100()], None)
    assert result.mappings == {'nvidia-222': ['0000:8a:00.0']}
    assert result.unresolved == ['V100-8Q']
    assert result.resolved == {}


def test_on_sriov_gpus_the_names_are_read_on_the_vfs():
    gpus = [a40(), HostGpu('0000:81:00.0', True, A100_VFS, ids=A100)]
    result = resolve("{'A40-2Q': ['10de:2235'], "
                     "'A100D-1-10C': ['0000:81:00.0']}",
                     gpus, offered((gpus[0], A40_TYPES),
                                   (gpus[1], A100_TYPES)))
    assert result.mappings == {'nvidia-558': ['10de:2235'],
                               'nvidia-699': ['0000:81:00.0']}
    host = mappings.for_host(result.mappings, gpus, offered(
        (gpus[0], A40_TYPES), (gpus[1], A100_TYPES)))
    assert host.problems == []
    assert host.mappings == {'nvidia-558': list(A40_VFS),
                             'nvidia-699': list(A100_VFS)}


def test_an_sriov_gpu_without_vfs_yet_is_waited_for():
    result = resolve("{'A40-2Q': ['0000:41:00.0']}", [a40(vfs=())], {})
    assert result.mappings == {}
    assert result.unresolved == ['A40-2Q']
    assert result.waiting == ['0000:41:00.0']


def test_one_vf_can_be_named_by_its_address():
    result = resolve("{'A40-1Q': ['0000:41:00.5']}", [a40()],
                     offered((a40(), A40_TYPES)))
    assert result.mappings == {'nvidia-557': ['0000:41:00.5']}


def test_vendor_vfio_vfs_are_read_together():
    """Each VF lists only what it can still take: one already typed lists
    nothing, the GPU's types are what its VFs list together."""
    gpu = HostGpu('0000:41:00.0', True, A40_VFS, vendor_vfio=True, ids=L40S)
    table = {'0000:41:00.0': {}, A40_VFS[0]: {},
             A40_VFS[1]: dict(L40S_TABLE)}
    result = resolve("{'L40S-2Q': ['10de:26b9']}", [gpu], table)
    assert result.mappings == {'nvidia-1148': ['10de:26b9']}


def test_the_same_name_can_be_different_ids_on_different_gpus():
    """Illustrative ids: where two boards share a profile name, each GPU
    gets its own board's id, by address."""
    first, second = v100('0000:84:00.0'), v100('0000:85:00.0')
    table = {first.address: {'nvidia-1576': 'NVIDIA DC-4-24Q'},
             second.address: {'nvidia-1601': 'NVIDIA DC-4-24Q'}}
    result = resolve("{'DC-4-24Q': ['10de:1db4']}", [first, second], table)
    assert result.mappings == {'nvidia-1576': ['0000:84:00.0'],
                               'nvidia-1601': ['0000:85:00.0']}
    assert profiles.summary(result) == ['DC-4-24Q is nvidia-1576, '
                                        'nvidia-1601']


def test_a_near_miss_names_what_that_gpu_offers():
    result = resolve("{'V100-2Q': ['0000:84:00.0']}", [v100()],
                     offered((v100(), V100_TYPES)))
    assert result.mappings == {}
    assert result.problems == [
        'V100-2Q is not offered by the GPU at 0000:84:00.0 (it offers: '
        'V100-1Q, V100-8Q, V100-16C); see the list-vgpu-types action']


def test_a_near_miss_through_a_selector_names_the_selector():
    result = resolve("{'A40-2Q': ['10de:1db4']}", [v100()],
                     offered((v100(), V100_TYPES)))
    assert result.problems == [
        'A40-2Q is not offered by the GPU at 0000:84:00.0 (through '
        '10de:1db4) (it offers: V100-1Q, V100-8Q, V100-16C); see the '
        'list-vgpu-types action']


def test_a_gpu_the_driver_gives_no_types_offers_none():
    result = resolve("{'V100-8Q': ['0000:84:00.0']}", [v100()],
                     {'0000:84:00.0': {}})
    assert result.problems == [
        'V100-8Q is not offered by the GPU at 0000:84:00.0 (it offers: '
        'none); see the list-vgpu-types action']


def test_names_are_matched_whole_and_exactly():
    """V100-8Q is not V100D-8Q, V100-2B is not V100-2B4; no prefix, no
    case games. (V100-8Q4 is no name at all: only the B series has B4.)"""
    table = {'0000:84:00.0': {'nvidia-183': 'GRID V100D-8Q',
                              'nvidia-217': 'GRID V100-2B4'}}
    for text in ("{'V100-8Q': ['0000:84:00.0']}",
                 "{'V100-2B': ['0000:84:00.0']}",
                 "{'V100D-2B4': ['0000:84:00.0']}"):
        result = resolve(text, [v100()], table)
        assert result.mappings == {}, text
        assert 'it offers: V100D-8Q, V100-2B4' in result.problems[0]


def test_one_value_serves_gpus_of_different_models_at_one_address():
    """Other hosts have an A40 or a T4 where this one has its V100."""
    text = ("{'V100-8Q': ['0000:84:00.0'], 'T4-4Q': ['0000:84:00.0'], "
            "'A40-2Q': ['0000:84:00.0', '0000:41:00.0']}")
    gpus = [v100(), a40()]
    result = resolve(text, gpus, offered((gpus[0], V100_TYPES),
                                         (gpus[1], A40_TYPES)))
    assert result.problems == []
    assert result.mappings == {'nvidia-108': ['0000:84:00.0'],
                               'nvidia-558': ['0000:41:00.0']}
    assert result.unoffered == ['T4-4Q']
    assert profiles.summary(result) == [
        'A40-2Q is nvidia-558', 'V100-8Q is nvidia-108',
        'no GPU here offers T4-4Q']


def test_two_names_a_gpu_both_offers_are_refused():
    result = resolve("{'V100-8Q': ['0000:84:00.0'], "
                     "'V100-1Q': ['0000:84:00.0']}", [v100()],
                     offered((v100(), V100_TYPES)))
    assert result.mappings == {}
    assert result.problems == [
        'the GPU at 0000:84:00.0 offers both V100-1Q and V100-8Q; a device '
        'offers one type: give it one of them']


def a100():
    return HostGpu('0000:81:00.0', True, A100_VFS, ids=A100)


BOTH_MIG_SIZES = ("{'A100D-1-10C': ['0000:81:00.0'], "
                  "'A100D-2-20C': ['0000:81:00.0']}")


def test_mig_backed_names_share_a_gpu_in_mig_mode():
    result = profiles.resolve(mappings.parse(BOTH_MIG_SIZES), [a100()],
                              offered((a100(), A100_TYPES)),
                              mig_gpus={'0000:81:00.0'})
    assert result.problems == []
    assert result.mappings == {'nvidia-699': ['0000:81:00.0'],
                               'nvidia-700': ['0000:81:00.0']}
    assert profiles.summary(result) == ['A100D-1-10C is nvidia-699',
                                        'A100D-2-20C is nvidia-700']


def test_outside_mig_mode_two_mig_backed_names_point_to_mig_layout():
    result = resolve(BOTH_MIG_SIZES, [a100()], offered((a100(), A100_TYPES)))
    assert result.mappings == {}
    assert result.problems == [
        'the GPU at 0000:81:00.0 offers both A100D-1-10C and A100D-2-20C; a '
        'device offers one type: give it one of them, or cut the GPU into '
        'GPU instances with mig-layout (MIG-backed types share a GPU in MIG '
        'mode)']


def test_a_time_sliced_name_shares_no_gpu_even_in_mig_mode():
    result = profiles.resolve(mappings.parse(
        "{'A100D-1-10C': ['0000:81:00.0'], 'A100D-4C': ['0000:81:00.0']}"),
        [a100()], offered((a100(), A100_TYPES)), mig_gpus={'0000:81:00.0'})
    assert result.mappings == {}
    assert result.problems == [
        'the GPU at 0000:81:00.0 offers both A100D-1-10C and A100D-4C; a '
        'device offers one type: give it one of them']


def test_no_name_a_gpu_offers_is_a_near_miss_listing_them_all():
    result = resolve("{'T4-4Q': ['0000:84:00.0'], "
                     "'A40-2Q': ['0000:84:00.0']}", [v100()],
                     offered((v100(), V100_TYPES)))
    assert result.problems == [
        'A40-2Q, T4-4Q are not offered by the GPU at 0000:84:00.0 (it '
        'offers: V100-1Q, V100-8Q, V100-16C); see the list-vgpu-types '
        'action']


def test_entries_that_are_no_gpu_here_are_reported_as_for_type_ids():
    result = resolve("{'V100-8Q': ['0000:c1:00.0', '10de:2235']}", [v100()],
                     offered((v100(), V100_TYPES)))
    assert result.mappings == {}
    assert (result.absent, result.unmatched) == (['0000:c1:00.0'],
                                                 ['10de:2235'])
    assert result.unoffered == [] and result.problems == []
    host = profiles.merged(result, mappings.for_host(
        result.mappings, [v100()], offered((v100(), V100_TYPES))))
    assert (host.absent, host.unmatched) == (['0000:c1:00.0'], ['10de:2235'])


def test_a_name_resolved_into_a_type_also_given_by_id_joins_it():
    result = resolve("{'nvidia-108': ['0000:85:00.0'], "
                     "'V100-8Q': ['0000:84:00.0']}",
                     [v100(), v100('0000:85:00.0')],
                     {'0000:84:00.0': V100_TYPES, '0000:85:00.0': V100_TYPES})
    assert result.mappings == {'nvidia-108': ['0000:84:00.0',
                                              '0000:85:00.0']}


def test_a_name_for_a_device_given_another_type_by_id_is_refused():
    gpus = [v100()]
    table = offered((v100(), V100_TYPES))
    result = resolve("{'nvidia-105': ['10de:1db4'], "
                     "'V100-8Q': ['0000:84:00.0']}", gpus, table)
    host = profiles.merged(result, mappings.for_host(result.mappings, gpus,
                                                     table))
    assert host.problems == [
        '0000:84:00.0 is claimed by both nvidia-105 and nvidia-108; a '
        'device offers one type']


def test_what_reaches_for_host_has_type_ids_only():
    text = ("{'V100-8Q': ['0000:84:00.0', '10de:1db4', '0000:c1:00.0'], "
            "'T4-4Q': ['0000:84:00.0', '10de:1eb8'], "
            "'A40-2Q': ['0000:41:00.0']}")
    for table in (None, offered((v100(), V100_TYPES))):
        result = resolve(text, [v100()], table)
        assert all(names.is_type_id(key)
                   for key in result.mappings), result


def test_a_name_the_driver_gives_two_types_is_not_guessed_between():
    table = {'0000:84:00.0': {'nvidia-108': 'GRID V100-8Q',
                              'nvidia-217': 'NVIDIA V100-8Q'}}
    result = resolve("{'V100-8Q': ['0000:84:00.0']}", [v100()], table)
    assert result.mappings == {}
    assert result.problems == [
        'V100-8Q names nvidia-108 and nvidia-217 on the GPU at '
        '0000:84:00.0; give the type id instead']
