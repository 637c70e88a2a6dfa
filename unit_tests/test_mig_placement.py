"""GPU instances that fit, whatever the driver would choose (issue 36,
item 2): the charm computes where each GPU instance starts from the
placements the GPU lists (nvidia-smi mig -lgipp), keeps those that exist
where they are, and refuses a layout the GPU cannot hold before anything
is destroyed, naming what of it fits.

The boards' placements are those of ../shared/reference/
lifecycle-facts.md section 3 (NVIDIA's MIG User Guide, and a real H100
80GB output); profile ids differ by board, so profiles are looked up by
name."""
import pytest

from nvidia_vgpu import model
from nvidia_vgpu.host import mig as host_mig
from nvidia_vgpu.mig import instances, layout, plan
from nvidia_vgpu.model import GiPlacement, GiProfile, GpuInstance, MigGpu

H100 = '0000:41:00.0'
A30 = '0000:81:00.0'
# An 80 GB A100 or H100: 8 memory slices, as -lgip and -lgipp list them.
H100_PROFILES = (
    GiProfile(19, '1g.10gb', 7, 7, tuple(range(7)), 1),
    GiProfile(20, '1g.10gb+me', 1, 1, tuple(range(7)), 1),
    GiProfile(15, '1g.20gb', 4, 4, (0, 2, 4, 6), 2),
    GiProfile(14, '2g.20gb', 3, 3, (0, 2, 4), 2),
    GiProfile(9, '3g.40gb', 2, 2, (0, 4), 4),
    GiProfile(5, '4g.40gb', 1, 1, (0,), 4),
    GiProfile(0, '7g.80gb', 1, 1, (0,), 8))
# An A30: 4 memory slices, and its own ids (14 is 1g.6gb here).
A30_PROFILES = (
    GiProfile(14, '1g.6gb', 4, 4, (0, 1, 2, 3), 1),
    GiProfile(5, '2g.12gb', 2, 2, (0, 2), 2),
    GiProfile(0, '4g.24gb', 1, 1, (0,), 4))
GPUS = [model.HostGpu(H100, True, ids='10de:2330:10de:16c1'),
        model.HostGpu(A30, True, ids='10de:20b7:10de:1532')]


def gpu(instances=(), profiles=H100_PROFILES, address=H100):
    """A GPU in MIG mode with these (profile, 'start:size') instances."""
    ids = {profile.name: profile.id for profile in profiles}
    return MigGpu(address, 0, 'Enabled', 'Enabled', profiles, tuple(
        GpuInstance(number, ids[name], name, placement)
        for number, (name, placement) in enumerate(instances, 1)))


def starts(placed):
    return [(instance.profile, instance.start) for instance in placed]


@pytest.mark.parametrize('wanted,taken,found', [
    # Largest first at its lowest start leaves three 1g.10gb, not four:
    # the search puts the 3g.40gb at 4.
    (['3g.40gb'] + ['1g.10gb'] * 4, [],
     [('3g.40gb', 4), ('1g.10gb', 0), ('1g.10gb', 1), ('1g.10gb', 2),
      ('1g.10gb', 3)]),
    # In the order NVIDIA's guide shows failing, placed, it fits.
    (['1g.10gb', '1g.10gb', '2g.20gb', '3g.40gb'], [],
     [('1g.10gb', 2), ('1g.10gb', 3), ('2g.20gb', 0), ('3g.40gb', 4)]),
    (['7g.80gb'], [], [('7g.80gb', 0)]),
    # Beside instances that exist.
    (['1g.10gb'] * 4, [(4, 4)],
     [('1g.10gb', 0), ('1g.10gb', 1), ('1g.10gb', 2), ('1g.10gb', 3)]),
    (['3g.40gb'], [(0, 1), (1, 1)], [('3g.40gb', 4)]),
    # Seven compute slices, nine memory slices: no choice fits.
    (['3g.40gb', '3g.40gb', '1g.10gb'], [], None),
    (['1g.20gb'] * 4 + ['1g.10gb'], [], None),
    (['1g.10gb'] * 4, [(0, 4)], None),
    (['4g.40gb'], [(1, 1)], None),
])
def test_each_instance_gets_a_start_that_fits(wanted, taken, found):
    placed = instances.place(wanted, H100_PROFILES, taken)
    assert (starts(placed) if placed is not None else None) == found


def test_profiles_are_found_by_name_and_made_by_the_boards_own_id():
    """On the A30 id 14 is 1g.6gb; on the A100 and H100, 2g.20gb."""
    a30 = instances.to_make(['2g.12gb', '1g.6gb', '1g.6gb'],
                            gpu(profiles=A30_PROFILES, address=A30))
    assert a30 == (GiPlacement('2g.12gb', 5, 0), GiPlacement('1g.6gb', 14, 2),
                   GiPlacement('1g.6gb', 14, 3))
    h100 = instances.to_make(['2g.20gb'], gpu())
    assert h100 == (GiPlacement('2g.20gb', 14, 0),)
    # How nvidia-smi is asked: -cgi PROFILE_ID:START.
    assert [host_mig.cgi_token(one) for one in a30 + h100] == [
        '5:0', '14:2', '14:3', '14:0']


@pytest.mark.parametrize('existing,keep,found', [
    # Those that exist stay where they are; the rest go beside them.
    ([('1g.10gb', '0:1'), ('3g.40gb', '4:4')], True,
     [('1g.10gb', 1), ('1g.10gb', 2), ('1g.10gb', 3)]),
    # A 3g.40gb at 0 leaves no room for four 1g.10gb.
    ([('3g.40gb', '0:4')], True, None),
    # Instances the layout does not have: not the boot's to change.
    ([('7g.80gb', '0:8')], True, None),
    # Remade on the GPU emptied.
    ([('3g.40gb', '0:4')], False,
     [('3g.40gb', 4)] + [('1g.10gb', start) for start in range(4)]),
    ([('1g.10gb', '0:1'), ('1g.10gb', '1:1'), ('1g.10gb', '2:1'),
      ('1g.10gb', '3:1'), ('3g.40gb', '4:4')], True, []),
])
def test_what_is_missing_is_placed_beside_what_exists(existing, keep, found):
    wanted = ['3g.40gb'] + ['1g.10gb'] * 4
    made = instances.to_make(wanted, gpu(existing), keep=keep)
    assert (starts(made) if made is not None else None) == found


def test_without_placements_the_driver_places_them_as_before():
    """A driver whose nvidia-smi has no -lgipp (or an instance whose
    placement cannot be read): by name, where the driver chooses."""
    counted = tuple(profile._replace(starts=(), size=0)
                    for profile in H100_PROFILES)
    assert instances.to_make(['3g.40gb', '1g.10gb'], gpu(
        profiles=counted)) == (GiPlacement('3g.40gb', 9),
                               GiPlacement('1g.10gb', 19))
    assert host_mig.cgi_token(GiPlacement('3g.40gb', 9)) == '3g.40gb'
    unread = gpu([('1g.10gb', 'N/A')])
    assert instances.to_make(['1g.10gb', '1g.10gb'], unread) == (
        GiPlacement('1g.10gb', 19),)


@pytest.mark.parametrize('text,found', [
    ('4:4', (4, 4)), (' 0:1 ', (0, 1)), ('4', None), ('a:b', None),
    ('\u0664:4', None), ('100:1', None)])
def test_an_instances_placement_is_read_as_start_and_size(text, found):
    assert instances.span(text) == found


@pytest.mark.parametrize('counts,profiles,found', [
    ({'3g.40gb': 2, '1g.10gb': 1}, H100_PROFILES,
     [{'3g.40gb': 2}, {'3g.40gb': 1, '1g.10gb': 1}]),
    ({'1g.20gb': 4, '1g.10gb': 1}, H100_PROFILES,
     [{'1g.20gb': 4}, {'1g.20gb': 3, '1g.10gb': 1}]),
    ({'2g.12gb': 2, '1g.6gb': 2}, A30_PROFILES,
     [{'2g.12gb': 2}, {'2g.12gb': 1, '1g.6gb': 2}]),
])
def test_what_fits_of_a_layout_is_the_most_of_each_that_can_be_placed(
        counts, profiles, found):
    assert instances.largest_that_fit(counts, profiles) == found


@pytest.mark.parametrize('address,wanted,profiles,message', [
    (H100, {'3g.40gb': 2, '1g.10gb': 1}, H100_PROFILES,
     "GPU 0000:41:00.0 cannot hold {'3g.40gb': 2, '1g.10gb': 1}: they "
     "overlap in its memory slices at every placement it lists (nvidia-smi "
     "mig -lgipp); of these it holds {'3g.40gb': 2} or {'3g.40gb': 1, "
     "'1g.10gb': 1}"),
    (A30, {'2g.12gb': 2, '1g.6gb': 2}, A30_PROFILES,
     "GPU 0000:81:00.0 cannot hold {'2g.12gb': 2, '1g.6gb': 2}: they "
     "overlap in its memory slices at every placement it lists (nvidia-smi "
     "mig -lgipp); of these it holds {'2g.12gb': 2} or {'2g.12gb': 1, "
     "'1g.6gb': 2}"),
    # Only by name: the A30 has no 2g.20gb, whatever id 14 is there.
    (A30, {'2g.20gb': 1}, A30_PROFILES,
     'GPU 0000:81:00.0 has no GPU instance profile 2g.20gb; it has 1g.6gb '
     '(up to 4), 2g.12gb (up to 2), 4g.24gb (up to 1)'),
])
def test_a_layout_that_cannot_be_placed_is_refused_before_anything_goes(
        address, wanted, profiles, message):
    existing = [('1g.10gb', '{}:1'.format(start)) for start in range(4)] \
        if address == H100 else [('4g.24gb', '0:4')]
    found = plan.plan({address: wanted}, GPUS, {
        address: gpu(existing, profiles, address)}, {})
    assert found.refused == {address: message}
    assert (found.destroy, found.create, found.wanted) == ({}, {}, {})
    assert plan.blocked_message(found) == 'Invalid mig-layout: ' + message
    assert layout.fit(address, wanted, profiles) == message


def test_a_layout_that_fits_only_placed_is_made_whole_keeping_what_it_can():
    wanted = {H100: {'1g.10gb': 4, '3g.40gb': 1}}
    # Beside a 1g.10gb at 0: made at once, even under a guest.
    found = plan.plan(wanted, GPUS, {H100: gpu([('1g.10gb', '0:1')])},
                      {H100: ['instance-1']})
    assert starts(found.create[H100]) == [
        ('3g.40gb', 4), ('1g.10gb', 1), ('1g.10gb', 2), ('1g.10gb', 3)]
    assert found.destroy == {} and found.held == {}
    # Beside a 3g.40gb at 0 they do not fit: remade where no guest uses
    # the GPU, each at its own start; under a guest, the change waits.
    at_zero = {H100: gpu([('3g.40gb', '0:4')])}
    found = plan.plan(wanted, GPUS, at_zero, {})
    assert found.destroy == {H100: (1,)}
    assert starts(found.create[H100]) == [('3g.40gb', 4)] + [
        ('1g.10gb', start) for start in range(4)]
    found = plan.plan(wanted, GPUS, at_zero, {H100: ['instance-1']})
    assert found.held == {H100: ('instance-1',)}
    assert (found.destroy, found.create) == ({}, {})
