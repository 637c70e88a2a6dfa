"""MIG at every boot: GPU instances never survive a reboot, and Hopper
and later GPUs come back out of MIG mode, so two oneshot units put back
what mig-layout asks for, in the order NVIDIA's and the operators' tools
agree on: MIG mode, then the VFs (sriov-manage -e, which destroys every
GPU instance), then the GPU instances, then the vGPUs on them (the
restore unit) and nova-compute:

    python3 -m nvidia_vgpu.driver.mig_boot mode        # before the VFs
    python3 -m nvidia_vgpu.driver.mig_boot instances   # after them

They read only the charm's record of this host's layout (standard library
and the host's python3, as the restore unit) and make only what is
missing: running one again changes nothing. Each GPU instance is made at
the start computed from the placements the GPU lists (the same pure
function as the hooks', mig/instances.py), so the layout comes up whole
whatever the driver would choose.
"""
import sys
from typing import Dict, List, Optional, Sequence, Tuple

from nvidia_vgpu import model
from nvidia_vgpu.host import boot_records, mig, sysfs, templates
from nvidia_vgpu.mig import instances

MODE_UNIT = 'nvidia-vgpu-mig-mode.service'
INSTANCES_UNIT = 'nvidia-vgpu-mig-instances.service'
UNITS = (MODE_UNIT, INSTANCES_UNIT)


def unit_texts(lib_dir: str) -> Dict[str, str]:
    """Both units (lib_dir: the charm's lib/), by name, from their
    templates (which name the units they come between)."""
    return {unit: templates.render(unit, {'lib_dir': lib_dir})
            for unit in UNITS}


def missing(wanted: Sequence[str], existing: Sequence[str]) -> List[str]:
    """The GPU instances still to make (wanted in order, less those that
    exist); none where some exist that the layout does not have: those
    are the charm's to change, once no guest uses them."""
    left, extra = instances.compare(wanted, existing)
    return [] if extra else left


def to_make(wanted: Sequence[str], gpu: model.MigGpu
            ) -> Optional[Tuple[model.GiPlacement, ...]]:
    """The GPU instances still to make on this GPU, each at its start,
    beside those there; None where they do not fit beside them (the
    next hook remakes the GPU's instances, where no guest uses them)."""
    if not missing(wanted, [gi.profile for gi in gpu.instances]):
        return ()
    return instances.to_make(wanted, gpu)


def apply(work: model.MigPlan) -> List[str]:
    """Do what the plan says now, in the order the GPU needs: clear the
    idle typed VFs that hold it, remove instances before the mode goes
    or new ones are made. What failed, as nvidia-smi (or the VF) said
    it (the plan of the next hook retries)."""
    failed = []
    for vf in sorted(vf for vfs in work.untype.values() for vf in vfs):
        problem = sysfs.clear_vgpu_type(vf)
        if problem:
            failed.append(problem)
    steps = ([(mig.destroy, gpu, ids) for gpu, ids in
              sorted(work.destroy.items())] +
             [(mig.disable, gpu, None) for gpu in work.disable] +
             [(mig.enable, gpu, None) for gpu in work.enable] +
             [(mig.create, gpu, profiles) for gpu, profiles in
              sorted(work.create.items())])
    for step, gpu, argument in steps:
        code, said = step(gpu) if argument is None else step(gpu, argument)
        if code:
            failed.append('{} (exit {})'.format(said, code))
    return failed


def main(argv: Sequence[str]) -> int:
    """Run a phase for every GPU in the record; 1 if any GPU failed (it
    is logged, and the others still go on)."""
    phase = argv[1] if len(argv) == 2 else ''
    if phase not in ('mode', 'instances'):
        print('usage: python3 -m nvidia_vgpu.driver.mig_boot mode|instances',
              file=sys.stderr)
        return 2
    for problem in boot_records.problems():
        print(problem, file=sys.stderr)
    layout = boot_records.recorded_mig()
    failed = False
    state = mig.read() if phase == 'instances' else {}
    for address, wanted in sorted(layout.items()):
        if phase == 'mode':
            code, said = mig.enable(address)
        else:
            code, said = _make(address, wanted, state.get(address))
        if said:
            print(said, file=sys.stderr if code else sys.stdout)
        failed = failed or code != 0
    return 1 if failed else 0


def _make(address: str, wanted: Sequence[str],
          gpu: Optional[model.MigGpu]) -> Tuple[int, str]:
    """Make what the record wants on one GPU: (exit status, what to
    log); (0, '') where nothing is missing."""
    if gpu is None or not gpu.enabled:
        return 1, ('GPU {} is not in MIG mode: no GPU instances '
                   'made'.format(address))
    todo = to_make(wanted, gpu)
    if todo is None:
        return 1, ('GPU {}: the GPU instances missing do not fit beside '
                   'those there; none made'.format(address))
    return mig.create(address, todo) if todo else (0, '')


if __name__ == '__main__':
    sys.exit(main(sys.argv))
