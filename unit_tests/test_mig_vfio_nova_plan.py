"""What Nova gets from a GPU in MIG mode on NVIDIA's vendor-specific
VFIO driver (nova/plan.py, nova/capacity.py): each MIG-backed type one
typed VF per GPU instance of its profile, none given twice, the VFs
already typed kept with their type.

There a VF's creatable_vgpu_types lists a MIG-backed type only while a
GPU instance of its profile is free, so once every instance is held no
VF lists the type: the VFs holding it still offer it (the snapshot adds
each typed VF's own type, host/snapshot.with_typed_vfs), named as the
charm recorded it. Type numbers and names are those of the H100 SXM5
fixtures (scenarios/mig/)."""
from typing import Dict, Optional, Sequence

from nvidia_vgpu import model
from nvidia_vgpu.host import snapshot as host_snapshot
from nvidia_vgpu.nova import plan
from snapshots import EPOXY, NOBLE, function, rules, vf_addresses
from test_plan import unit_status

H100 = '0000:41:00.0'
VFS = vf_addresses(H100, 8)
SMALL, LARGE = 'nvidia-1130', 'nvidia-1133'
NAMES = {SMALL: 'NVIDIA H100XM-1-10C', LARGE: 'NVIDIA H100XM-3-40C'}
PROFILE_OF = {SMALL: '1g.10gb', LARGE: '3g.40gb'}
# mig-layout {'1g.10gb': 4, '3g.40gb': 1}, as nvidia-smi mig -lgi lists it
INSTANCES = ('3g.40gb', '1g.10gb', '1g.10gb', '1g.10gb', '1g.10gb')
BOTH = "{'H100XM-1-10C': ['10de:2330'], 'H100XM-3-40C': ['10de:2330']}"
# The names the charm recorded when it gave VFs these types
RECORDED = {1130: NAMES[SMALL], 1133: NAMES[LARGE]}


def h100_vfio(typed: Optional[Dict[str, str]] = None,
              instances: Sequence[str] = INSTANCES,
              recorded: Optional[Dict[int, str]] = None
              ) -> model.HostSnapshot:
    """An H100 SXM5 on noble's vendor-specific VFIO driver, in MIG mode
    with these GPU instances; typed: VF -> the type it holds (each holds
    an instance of its profile). Each VF lists what is still free, as
    the driver does; recorded: the names the charm recorded."""
    typed = typed or {}
    held = [PROFILE_OF[vgpu_type] for vgpu_type in typed.values()]
    free = list(instances)
    for profile in held:
        free.remove(profile)
    listed = {vgpu_type: name for vgpu_type, name in NAMES.items()
              if PROFILE_OF[vgpu_type] in free}
    offered = {H100: {}}
    offered.update({vf: dict(listed) for vf in VFS})
    numbers = {vf: int(vgpu_type.split('-')[1])
               for vf, vgpu_type in typed.items()}
    gpu = model.MigGpu(H100, 0, 'Enabled', 'Enabled', (), tuple(
        model.GpuInstance(number, 0, profile, '0:1')
        for number, profile in enumerate(instances, 1)))
    return model.HostSnapshot(
        (function(H100, '2330', '16c1', 'GH100 [H100 SXM5 80GB]'),),
        (model.HostGpu(H100, True, VFS, True, '10de:2330:10de:16c1', 8),),
        '570.172.07', EPOXY,
        offered=host_snapshot.with_typed_vfs(
            offered, numbers, RECORDED if recorded is None else recorded),
        vf_device_ids={vf: '2330' for vf in VFS},
        libvirt_version=NOBLE[0], qemu_version=NOBLE[1],
        mig={H100: gpu}, vf_current_types=numbers)


def vfs_per_type(snapshot: model.HostSnapshot, text: str = BOTH
                 ) -> Dict[str, Sequence[str]]:
    decided = plan.plan_nova(snapshot, text, None, rules(EPOXY), None, None)
    assert decided.problem is None, decided.problem
    return decided.vf_types


SEVEN = ('1g.10gb',) * 7
ONE_SIZE = "{'H100XM-1-10C': ['10de:2330']}"


def test_the_type_gets_one_vf_per_gpu_instance_of_its_profile():
    assert vfs_per_type(h100_vfio(instances=SEVEN), ONE_SIZE) == {
        SMALL: list(VFS[:7])}
    # Beside a 3g.40gb instance no other type is mapped: four VFs.
    assert vfs_per_type(h100_vfio(), ONE_SIZE) == {SMALL: list(VFS[:4])}


def test_typed_vfs_keep_their_type_and_the_rest_fill_up_in_order():
    typed = {VFS[6]: SMALL, VFS[2]: SMALL}
    assert vfs_per_type(h100_vfio(typed), ONE_SIZE) == {
        SMALL: [VFS[0], VFS[1], VFS[2], VFS[6]]}


def test_two_sizes_on_one_gpu_are_refused_as_nova_refuses_them():
    """Nova puts a PF's VFs in Placement as one provider of one class
    (PlacementPciMixedResourceClassException, nova_tests/
    test_nova_mig_vfio.py): two types there would stop its updates."""
    decided = plan.plan_nova(h100_vfio(), BOTH, None, rules(EPOXY), None,
                             None)
    assert decided.sections is None
    assert decided.problem == ('blocked', (
        'Invalid vgpu-device-mappings: nvidia-1130 and nvidia-1133 both on '
        '0000:41:00.0, which runs NVIDIA\'s vendor-specific VFIO driver: '
        'Nova puts a GPU\'s VFs in Placement under one resource class and '
        'refuses two (it would stop updating this host in Placement); give '
        'the GPU one type'))


def test_a_gpu_whose_every_instance_is_held_still_offers_its_type():
    """No VF lists the type any more: the typed VFs name it, from the
    record, and nothing changes."""
    typed = dict(zip(VFS[:7], [SMALL] * 7))
    full = h100_vfio(typed, instances=SEVEN)
    assert all(not table for vf, table in full.offered.items()
               if vf not in typed)
    assert vfs_per_type(full, ONE_SIZE) == {SMALL: list(VFS[:7])}


def test_without_the_record_a_full_gpu_s_names_are_unknown():
    """The driver names a type nowhere once every instance of its
    profile is held: without the names the charm recorded, the name
    cannot be resolved, and Nova keeps what it has."""
    typed = dict(zip(VFS[:7], [SMALL] * 7))
    decided = plan.plan_nova(h100_vfio(typed, instances=SEVEN, recorded={}),
                             ONE_SIZE, None, rules(EPOXY), None, None)
    assert decided.sections is None


def test_a_type_without_instances_gets_no_vf_and_the_status_says_so():
    """No VF lists a type whose profile has no GPU instance, and none
    holds it: the driver names it nowhere, and its size says why."""
    snapshot = h100_vfio(instances=SEVEN)
    decided = plan.plan_nova(snapshot, "{'H100XM-3-40C': ['10de:2330']}",
                             None, rules(EPOXY), None, None)
    assert decided.vf_types == {}
    assert decided.without_instances == [
        ('H100XM-3-40C', '3g.40gb', H100)]
    assert unit_status(snapshot, decided)[1].startswith(
        'This GPU host gives Nova no vGPU: H100XM-3-40C gets no vGPU on '
        '0000:41:00.0: it has no 3g.40gb GPU instance (mig-layout).')


def test_the_record_keeps_the_names_of_the_mig_backed_types_given():
    from nvidia_vgpu.driver import restore_plan
    snapshot = h100_vfio()
    assert restore_plan.mig_backed_names({1130, 1133}, snapshot.offered) == {
        '1130': NAMES[SMALL], '1133': NAMES[LARGE]}
    # Time-sliced types are listed whatever their siblings hold.
    assert restore_plan.mig_backed_names(
        {1148}, {VFS[0]: {'nvidia-1148': 'NVIDIA L40S-2Q'}}) == {}


def test_two_time_sliced_types_on_vfs_of_one_gpu_are_refused_too():
    from snapshots import L40S_VFS, host, l40s
    decided = plan.plan_nova(
        host(l40s(), nova=EPOXY),
        "{'nvidia-1148': ['%s'], 'nvidia-1155': ['%s']}" % L40S_VFS[:2],
        None, rules(EPOXY), None, None)
    assert decided.sections is None
    assert decided.problem[1].startswith(
        'Invalid vgpu-device-mappings: nvidia-1148 and nvidia-1155 both on '
        '0000:41:00.0, which runs NVIDIA\'s vendor-specific VFIO driver')
