"""Several time-sliced sizes on one GPU whose driver mixes them: which VF
takes which size at which placement (nova/mixed_sizes.py), what Nova is
given, and what the hook does to the GPU (the mode, the vGPUs it makes
for Nova to take), from entering NVIDIA's mixed-size mode to leaving it.

Figures: the L40S's 48 GB placement table of NVIDIA's vGPU 17 User Guide,
Appendix A.3.4 (docs/facts/mixed-size.md), in snapshots.L40S_PLACEMENTS.
"""
import pytest

from nvidia_vgpu import model
from nvidia_vgpu.hook_plan import (decide as hook_decide, facts as hook_facts,
                                   survey)
from nvidia_vgpu.nova import mixed_sizes, plan
from snapshots import (CARACAL, DRIVER, L40S_PLACEMENTS, l40s_mdev, rules,
                       vf_addresses)

GPU = '0000:41:00.0'
VFS = vf_addresses(GPU, 32)
ONE_Q, TWO_Q = 'nvidia-1147', 'nvidia-1148'
BY_ADDRESS = "{'L40S-1Q': ['0000:41:00.0'], 'L40S-2Q': ['0000:41:00.0']}"


def decide(snapshot, text, published=None):
    return plan.plan_nova(snapshot, text, None, rules(CARACAL), published,
                          None)


def devices(decided, vgpu_type):
    return dict(decided.sections['mdev_' + vgpu_type])['device_addresses']


def slots(placed):
    """Every placement slot the plan's vGPUs take, once each or the test
    fails: no two of them overlap."""
    taken = [slot for vgpu_type, start in placed.values()
             for slot in range(start, start + L40S_PLACEMENTS[vgpu_type].size)]
    assert len(taken) == len(set(taken))
    return taken


def with_vgpus(snapshot, *vgpus, placements=None):
    """vGPUs (VF, type, guests) on the GPU, and the placements the charm
    recorded for its VFs."""
    mdevs = tuple(model.Mdev('00000000-0000-4000-8000-{:012d}'.format(i),
                             vf, vgpu_type)
                  for i, (vf, vgpu_type, _) in enumerate(vgpus))
    return snapshot._replace(
        mdevs=mdevs, mdev_users={mdev.uuid: list(guests) for mdev, (
            _, _, guests) in zip(mdevs, vgpus) if guests},
        recorded_placements={GPU: placements} if placements else {})


def test_by_the_gpus_address_each_size_gets_half_the_frame_buffer():
    """1Q and 2Q placements overlap: 8 of each, not 16 of either."""
    decided = decide(l40s_mdev(), BY_ADDRESS)
    assert decided.problem is None
    placed = decided.mixed[GPU].placed
    assert decided.mixed[GPU].counts() == {ONE_Q: 8, TWO_Q: 8}
    assert sorted(start for vgpu_type, start in placed.values()
                  if vgpu_type == TWO_Q) == [0, 4, 6, 10, 12, 16, 18, 22]
    assert sorted(start for vgpu_type, start in placed.values()
                  if vgpu_type == ONE_Q) == [24, 29, 30, 35, 36, 41, 42, 47]
    slots(placed)
    assert devices(decided, TWO_Q) == ','.join(VFS[:8])
    assert devices(decided, ONE_Q) == ','.join(VFS[8:16])
    assert decided.sriov_capacity == {ONE_Q: {GPU: 8}, TWO_Q: {GPU: 8}}


def test_entering_the_mode_sets_it_then_makes_each_vfs_vgpu_placed():
    work = decide(l40s_mdev(), BY_ADDRESS).mixed_work
    assert work.set_mode == (GPU,) and work.unset_mode == ()
    assert work.remove == () and work.place == ()
    assert [(vf, vgpu_type, start) for vf, vgpu_type, start in work.create
            ][:2] == [(VFS[0], TWO_Q, 0), (VFS[1], TWO_Q, 4)]
    assert len(work.create) == 16


def test_nova_is_not_given_the_sizes_until_the_gpu_is_in_the_mode():
    """Decided before the hook sets the mode: nothing is published, and
    were the mode not to take, the status says so."""
    hook = hook_decide.decide(
        hook_facts.HookFacts(l40s_mdev(), hook_facts.Relations(
            nova_vgpu=({},), juju_version='3.6.4')),
        {'vgpu-device-mappings': BY_ADDRESS}, hook_facts.UnitState(
            installed=model.Installed('0' * 64, 'nvidia-vgpu-ubuntu-550',
                                      DRIVER, ('nvidia-vgpu-mgr',))))
    assert hook.publish is False
    assert hook.status.blocked == ('blocked', (
        "NVIDIA's mixed-size mode of 0000:41:00.0 is not yet what "
        'vgpu-device-mappings needs, so Nova keeps its settings: nvidia-smi '
        'could not change it (juju debug-log says why); the next hook tries '
        'again'))
    assert hook.boot.placements[GPU][VFS[0]] == [TWO_Q, 0]


def test_a_hook_with_nothing_changed_does_nothing():
    """In the mode, each planned VF holding its vGPU at its recorded
    placement: no work."""
    first = decide(l40s_mdev(), BY_ADDRESS).mixed[GPU].placed
    settled = with_vgpus(l40s_mdev('Enabled'), *[
        (vf, vgpu_type, []) for vf, (vgpu_type, _) in sorted(first.items())],
        placements=first)
    decided = decide(settled, BY_ADDRESS)
    assert decided.mixed[GPU].placed == first
    assert not any(decided.mixed_work)


def test_each_size_on_vfs_of_its_own_fits_where_placements_allow():
    decided = decide(l40s_mdev('Enabled'), "{'L40S-1Q': ['%s', '%s'], "
                     "'L40S-2Q': ['%s', '%s']}" % VFS[:4])
    assert decided.problem is None
    # the larger size first, each at the lowest placement left
    assert decided.mixed[GPU].placed == {
        VFS[2]: (TWO_Q, 0), VFS[3]: (TWO_Q, 4),
        VFS[0]: (ONE_Q, 6), VFS[1]: (ONE_Q, 11)}


def test_too_many_of_each_size_is_refused_with_what_fits():
    text = "{'L40S-1Q': [%s], 'L40S-2Q': [%s]}" % (
        ', '.join("'%s'" % vf for vf in VFS[:16]),
        ', '.join("'%s'" % vf for vf in VFS[16:32]))
    decided = decide(l40s_mdev('Enabled'), text)
    assert decided.sections is None
    assert decided.problem == ('blocked', (
        'Invalid vgpu-device-mappings: 0000:41:00.0 in mixed-size mode '
        'cannot hold 16 L40S-1Q and 16 L40S-2Q, their placements overlap: '
        'with the other sizes as given it holds at most 0 L40S-1Q and 0 '
        'L40S-2Q; list fewer VFs, or name the GPU by its address under each '
        'size for an even share'))


def test_a_guests_vgpu_keeps_its_placement_when_the_vfs_change():
    """A guest on the 1Q vGPU at 24; its VF named again: it stays at 24,
    the others are placed around it."""
    guest = with_vgpus(l40s_mdev('Enabled'), (VFS[8], ONE_Q, ['instance-a']),
                       placements={VFS[8]: (ONE_Q, 24)})
    decided = decide(guest, "{'L40S-1Q': ['%s', '%s'], "
                     "'L40S-2Q': ['%s']}" % (VFS[8], VFS[9], VFS[0]))
    assert decided.mixed[GPU].placed[VFS[8]] == (ONE_Q, 24)
    slots(decided.mixed[GPU].placed)
    assert VFS[8] not in {vf for vf, _, _ in decided.mixed_work.create}


@pytest.mark.parametrize('mode, mappings, change', [
    ('Disabled', BY_ADDRESS, 'enters'),
    ('Enabled', "{'L40S-2Q': ['0000:41:00.0']}", 'leaves'),
])
def test_a_mode_change_waits_for_the_guests_on_the_gpu(
        mode, mappings, change):
    guest = with_vgpus(l40s_mdev(mode), (VFS[0], TWO_Q, ['instance-a']),
                       (VFS[1], TWO_Q, []),
                       placements={VFS[0]: (TWO_Q, 0)})
    decided = decide(guest, mappings)
    assert decided.sections is None
    assert decided.problem == ('waiting', (
        'Change of vgpu-device-mappings waits for guests using vGPUs: '
        "0000:41:00.0 {} NVIDIA's mixed-size mode, which cannot change while "
        'a vGPU exists on it (instance-a): move them to another host '
        '(openstack server migrate), and the next hook changes it').format(
            change))


def test_leaving_the_mode_removes_the_unused_vgpus_then_unsets_it():
    """One size again, no guest on the GPU: the vGPUs made for Nova go,
    the GPU goes back to equal-size mode, and Nova is given every VF the
    size takes there, once it has (the boot record still names the GPU
    until then)."""
    left = with_vgpus(l40s_mdev('Enabled'), (VFS[0], TWO_Q, []),
                      (VFS[8], ONE_Q, []),
                      placements={VFS[0]: (TWO_Q, 0), VFS[8]: (ONE_Q, 24)})
    decided = decide(left, "{'L40S-2Q': ['0000:41:00.0']}")
    assert decided.mixed == {}
    assert decided.mixed_work == model.MixedWork(
        remove=('00000000-0000-4000-8000-000000000000',
                '00000000-0000-4000-8000-000000000001'),
        unset_mode=(GPU,))
    assert mixed_sizes.unsettled(left, decided.mixed) == [GPU]
    assert mixed_sizes.boot_record(left, decided.mixed) == {GPU: {}}
    assert len(devices(decided, TWO_Q).split(',')) == 24


@pytest.mark.parametrize('mode', [None, 'Enabled'])
def test_a_selector_keeps_one_size_per_gpu(mode):
    """A selector names a model fleet-wide: no split, even where the
    driver could mix (and nvidia-smi is not asked)."""
    decided = decide(l40s_mdev(mode), "{'L40S-1Q': ['10de:26b9'], "
                     "'L40S-2Q': ['10de:26b9']}")
    assert decided.sections is None
    assert decided.problem == ('blocked', (
        'Invalid vgpu-device-mappings: the GPU at 0000:41:00.0 (through '
        '10de:26b9) offers both L40S-1Q and L40S-2Q, two sizes; sizes are '
        'mixed only on a GPU named by its address or its VFs, not by a '
        'selector (one value for a fleet): give the selector one size, or '
        'name the GPUs by address'))


def test_a_type_without_placements_cannot_be_mixed():
    without = l40s_mdev('Enabled')._replace(mixed_size={GPU: model.MixedSize(
        True, 'Enabled', {TWO_Q: L40S_PLACEMENTS[TWO_Q]})})
    decided = decide(without, "{'L40S-1Q': ['%s'], 'L40S-2Q': ['%s']}" % (
        VFS[0], VFS[1]))
    assert decided.problem == ('blocked', (
        'Invalid vgpu-device-mappings: the driver lists no mixed-size '
        'placements for L40S-1Q on 0000:41:00.0; give the GPU one size'))


def test_one_size_needs_no_nvidia_smi():
    """The driver is asked of mixed sizes only for a GPU named under two
    types: a lazy table that fails when read proves it is not."""
    class Unread(dict):
        def __getitem__(self, key):
            raise AssertionError('nvidia-smi was asked')
        __contains__ = __getitem__
    decided = decide(l40s_mdev(None)._replace(mixed_size=Unread()),
                     "{'L40S-2Q': ['0000:41:00.0']}")
    assert decided.problem is None and decided.mixed == {}


def test_the_vgpus_made_for_nova_count_as_free_until_a_guest_has_one():
    """Monitoring's free vGPUs on a GPU that mixes sizes: every VF holds
    a vGPU the charm made, which Nova takes; a guest's is not free."""
    planned = decide(l40s_mdev(), BY_ADDRESS).mixed[GPU].placed
    vgpus = [(vf, vgpu_type, ['instance-a'] if vf == VFS[0] else [])
             for vf, (vgpu_type, _) in sorted(planned.items())]
    settled = with_vgpus(l40s_mdev('Enabled'), *vgpus, placements=planned)
    published = {ONE_Q: sorted(vf for vf, (t, _) in planned.items()
                               if t == ONE_Q),
                 TWO_Q: sorted(vf for vf, (t, _) in planned.items()
                               if t == TWO_Q)}
    state = survey.gpu_state(settled.gpus[0], 'L40S', settled.offered, {})
    [counted] = survey.with_free([state], settled, published)
    free = {vgpu_type: sum(counted.types[vf][vgpu_type] for vf in vfs)
            for vgpu_type, vfs in published.items()}
    assert free == {ONE_Q: 8, TWO_Q: 7}
