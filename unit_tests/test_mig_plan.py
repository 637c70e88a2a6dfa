"""The MIG plan (nvidia_vgpu.mig.plan): which GPUs go into MIG mode and
which GPU instances are made or removed, now or once guests are gone."""
import pytest

from nvidia_vgpu import model
from nvidia_vgpu.mig import plan
from nvidia_vgpu.model import GiProfile, GpuInstance, MigGpu

H100 = '0000:41:00.0'
H100_B = '0000:c1:00.0'
A40 = '0000:84:00.0'
L40S = '0000:85:00.0'
GPUS = [model.HostGpu(H100, True, ids='10de:2330:10de:16c1'),
        model.HostGpu(H100_B, True, ids='10de:2330:10de:16c1'),
        model.HostGpu(A40, True, ids='10de:2235:10de:145a'),
        model.HostGpu(L40S, True, vendor_vfio=True,
                      ids='10de:26b9:10de:1851')]
PROFILES = (GiProfile(19, '1g.10gb', 7, 7), GiProfile(15, '1g.20gb', 4, 4),
            GiProfile(9, '3g.40gb', 2, 2), GiProfile(0, '7g.80gb', 1, 1))
LAYOUT = {'10de:2330': {'1g.10gb': 4, '3g.40gb': 1}}
WANTED = ('3g.40gb', '1g.10gb', '1g.10gb', '1g.10gb', '1g.10gb')


def made(found):
    """GPU -> the profiles of the GPU instances the plan makes."""
    return {gpu: tuple(instance.profile for instance in instances)
            for gpu, instances in found.create.items()}


def h100(address=H100, mode='Enabled', pending=None, instances=()):
    return MigGpu(address, 0, mode, pending or mode,
                  PROFILES if mode == 'Enabled' else (),
                  tuple(GpuInstance(number, profile_id, profile, '0:1')
                        for number, (profile_id, profile)
                        in enumerate(instances, 1)))


GIS = [(9, '3g.40gb')] + [(19, '1g.10gb')] * 4


def test_before_the_driver_runs_only_what_is_wanted_is_known():
    found = plan.plan(LAYOUT, GPUS, None, {})
    assert found == model.MigPlan(wanted={H100: WANTED, H100_B: WANTED})


def test_an_address_wins_over_a_selector_for_its_gpu():
    layout = dict(LAYOUT, **{H100_B: {'7g.80gb': 1}})
    assert plan.for_host(layout, GPUS) == {
        H100: {'1g.10gb': 4, '3g.40gb': 1}, H100_B: {'7g.80gb': 1}}


def test_a_gpu_out_of_mig_mode_and_unused_is_switched_now():
    found = plan.plan(LAYOUT, GPUS, {H100: h100(mode='Disabled')}, {})
    assert found.enable == (H100,) and found.create == {}


def test_a_gpu_whose_mode_waits_for_a_reset_says_so():
    found = plan.plan(LAYOUT, GPUS, {
        H100: h100(mode='Disabled', pending='Enabled')}, {})
    assert found.reset_pending == (H100,) and found.enable == ()


def test_gpu_instances_are_made_largest_first_and_only_those_missing():
    found = plan.plan(LAYOUT, GPUS, {H100: h100()}, {})
    assert made(found) == {H100: WANTED} and found.destroy == {}
    # A GPU that lists no placements: the driver places them, by name.
    assert found.create[H100][0] == model.GiPlacement('3g.40gb', 9, None)
    found = plan.plan(LAYOUT, GPUS, {H100: h100(instances=GIS[:2])}, {})
    assert made(found) == {H100: WANTED[2:]} and found.destroy == {}
    # Both H100s as the layout wants them: nothing to do.
    assert plan.plan(LAYOUT, GPUS, {
        H100: h100(instances=GIS), H100_B: h100(H100_B, instances=GIS)},
        {}) == model.MigPlan(wanted={H100: WANTED, H100_B: WANTED})


def test_missing_instances_are_made_even_under_guests():
    """Adding beside the GIs guests use disturbs nobody."""
    found = plan.plan(LAYOUT, GPUS, {H100: h100(instances=GIS[:1])},
                      {H100: ['instance-1']})
    assert made(found) == {H100: WANTED[1:]} and found.held == {}


def test_a_layout_change_waits_for_every_guest_defined_on_the_gpu():
    layout = {H100: {'7g.80gb': 1}}
    found = plan.plan(layout, GPUS, {H100: h100(instances=GIS)},
                      {H100: ['instance-2', 'instance-1']})
    assert found.held == {H100: ('instance-1', 'instance-2')}
    assert found.destroy == {} and found.create == {}
    # Once they are gone, every GI is remade, the big ones first.
    found = plan.plan(layout, GPUS, {H100: h100(instances=GIS)}, {})
    assert found.destroy == {H100: (1, 2, 3, 4, 5)}
    assert made(found) == {H100: ('7g.80gb',)}


def test_switching_mode_waits_for_guests_on_the_gpu():
    found = plan.plan(LAYOUT, GPUS, {H100: h100(mode='Disabled')},
                      {H100: ['instance-9']})
    assert found.held == {H100: ('instance-9',)} and found.enable == ()


def test_a_gpu_left_out_of_the_layout_goes_back_once_unused():
    mig = {H100: h100(instances=GIS[:1])}
    found = plan.plan({}, GPUS, mig, {}, applied=[H100])
    assert found.destroy == {H100: (1,)} and found.disable == (H100,)
    found = plan.plan({}, GPUS, mig, {H100: ['instance-1']}, applied=[H100])
    assert found.held == {H100: ('instance-1',)} and found.disable == ()
    # One the charm did not put in MIG mode is not its to change.
    assert plan.plan({}, GPUS, mig, {}) == model.MigPlan()


@pytest.mark.parametrize('layout,mig,message', [
    ({A40: {'1g.10gb': 1}}, {},
     'GPU 0000:84:00.0 is not MIG-capable; mig-layout leaves it as it is'),
    ({L40S: {'1g.10gb': 1}}, {},
     'GPU 0000:85:00.0 is not MIG-capable; mig-layout leaves it as it is'),
    ({H100: {'1g.5gb': 2}}, {H100: h100()},
     'GPU 0000:41:00.0 has no GPU instance profile 1g.5gb; it has 1g.10gb '
     '(up to 7), 1g.20gb (up to 4), 3g.40gb (up to 2), 7g.80gb (up to 1)'),
    ({H100: {'1g.20gb': 5}}, {H100: h100()},
     'GPU 0000:41:00.0 holds at most 4 GPU instances of 1g.20gb, not 5'),
])
def test_what_cannot_apply_is_explained_and_nothing_changes(layout, mig,
                                                            message):
    found = plan.plan(layout, GPUS, mig, {})
    assert found.refused == {list(layout)[0]: message}
    assert (found.enable, found.create, found.destroy) == ((), {}, {})


# ------------------------------------- NVIDIA's vendor-specific VFIO driver

H100_VFIO = model.HostGpu(H100, True, ('0000:41:00.4', '0000:41:00.5',
                                       '0000:41:00.6'), vendor_vfio=True,
                          ids='10de:2330:10de:16c1')


def test_a_gpu_on_the_vendor_specific_vfio_driver_is_cut_the_same_way():
    found = plan.plan(LAYOUT, [H100_VFIO], {H100: h100()}, {})
    assert made(found) == {H100: WANTED} and found.refused == {}
    found = plan.plan(LAYOUT, [H100_VFIO], {H100: h100(mode='Disabled')}, {})
    assert found.enable == (H100,)


@pytest.mark.parametrize('mig,layout,applied,untyped', [
    # A remake: the VFs typed for no guest hold GIs; cleared first.
    ({H100: h100(instances=GIS)}, {H100: {'7g.80gb': 1}}, [],
     {H100: ('0000:41:00.4', '0000:41:00.6')}),
    # Into MIG mode: a time-sliced type holds the whole GPU.
    ({H100: h100(mode='Disabled')}, LAYOUT, [],
     {H100: ('0000:41:00.4', '0000:41:00.6')}),
    # Out of it, the layout emptied.
    ({H100: h100(instances=GIS)}, {}, [H100],
     {H100: ('0000:41:00.4', '0000:41:00.6')}),
    # Only adding GIs beside those there: the typed VFs keep theirs.
    ({H100: h100(instances=GIS[:2])}, LAYOUT, [], {}),
    # Nothing changes.
    ({H100: h100(instances=GIS)}, LAYOUT, [], {}),
])
def test_idle_typed_vfs_are_cleared_before_their_gpu_changes(
        mig, layout, applied, untyped):
    idle = {H100: ['0000:41:00.4', '0000:41:00.6']}
    found = plan.plan(layout, [H100_VFIO], mig, {}, applied=applied,
                      idle_typed=idle)
    assert found.untype == untyped


def test_a_vf_a_guest_uses_holds_the_change_and_none_is_cleared():
    found = plan.plan({H100: {'7g.80gb': 1}}, [H100_VFIO],
                      {H100: h100(instances=GIS)}, {H100: ['instance-1']},
                      idle_typed={H100: ['0000:41:00.6']})
    assert found.held == {H100: ('instance-1',)}
    assert found.untype == {} and found.destroy == {}


def test_idle_typed_vfs_are_those_no_guest_uses():
    host = model.HostSnapshot(
        (), (H100_VFIO,), '570.172.07', None,
        pci_users={'0000:41:00.5': ['instance-1']},
        vf_current_types={'0000:41:00.4': 1130, '0000:41:00.5': 1130,
                          '0000:41:00.6': 0})
    assert plan.idle_typed_vfs(host) == {H100: ['0000:41:00.4']}


def test_the_boot_record_keeps_what_guests_use_until_the_change_applies():
    previous = {H100: ['7g.80gb'], A40: ['1g.10gb']}
    held = plan.plan(LAYOUT, GPUS, {H100: h100(instances=[(0, '7g.80gb')]),
                                    H100_B: h100(H100_B)},
                     {H100: ['instance-1']})
    # The held GPU keeps its instances at the next boot; the refused one
    # (not MIG-capable, named by address before) keeps its record too.
    held = held._replace(refused={A40: 'GPU 0000:84:00.0 is not ...'})
    assert plan.boot_record(held, previous) == {
        A40: ['1g.10gb'], H100: ['7g.80gb'], H100_B: list(WANTED)}
    applied = plan.plan(LAYOUT, GPUS, {H100: h100(), H100_B: h100(H100_B)},
                        {})
    assert plan.boot_record(applied, previous) == {
        H100: list(WANTED), H100_B: list(WANTED)}


def test_guests_are_counted_on_the_gpu_whose_vf_holds_their_vgpu():
    vf = '0000:41:00.4'
    host = model.HostSnapshot(
        (), (model.HostGpu(H100, True, (vf,)),), '550.54.16', None,
        mdevs=(model.Mdev('u1', vf, 'nvidia-1130'),),
        mdev_users={'u1': ['instance-1'], 'gone': ['instance-2']},
        recorded_mdevs={'gone': (vf, 'nvidia-1130')},
        pci_users={'0000:c1:00.4': ['instance-3']})
    assert plan.users_by_gpu(host) == {H100: ['instance-1', 'instance-2']}


def test_the_status_lines_name_the_gpus_and_guests():
    assert plan.held_message({H100: ('instance-1',)}).startswith(
        'Change of mig-layout waits for guests using vGPUs: 0000:41:00.0 '
        'for instance-1; it applies once they are gone (migrate, resize')
    assert plan.blocked_message(model.MigPlan(reset_pending=(H100,))) == (
        'Reboot required: MIG mode of 0000:41:00.0 applies at the next '
        'boot (A100 and A30 switch only at a GPU reset or reboot)')
    assert plan.blocked_message(model.MigPlan(
        refused={A40: 'GPU 0000:84:00.0 is not MIG-capable', L40S: 'x'},
        reset_pending=(H100,))) == (
        'Invalid mig-layout: GPU 0000:84:00.0 is not MIG-capable (and 1 '
        'more GPUs)')
    assert plan.held_message({}) is None
    assert plan.blocked_message(model.MigPlan()) is None


def test_instances_the_boot_record_has_and_the_gpu_lacks_are_drift():
    record = {H100: list(WANTED), H100_B: ['7g.80gb'], A40: ['1g.10gb']}
    mig = {H100: h100(instances=GIS[:2]),
           H100_B: h100(H100_B, mode='Disabled', pending='Enabled')}
    # A GPU not in MIG mode yet is the reboot's to say, not drift.
    assert plan.instances_missing(record, mig) == {
        H100: ['1g.10gb', '1g.10gb', '1g.10gb']}
    assert plan.instances_missing(record, None) == {}
