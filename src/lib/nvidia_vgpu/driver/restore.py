"""Give guests their vGPUs back at boot, before nova-compute starts.

On NVIDIA's vendor-specific VFIO driver (no mdev), each VF's vGPU type is
set again from what the charm wrote (types are lost at every reboot).

Mediated devices vanish at every reboot unless defined. From Dalmatian
on, Nova defines those it creates (libvirt, mdevctl) and the charm
defines those made before; before that Nova's own re-creation is
unreliable, so the charm installs a oneshot unit running this module
with the host's python3 (standard library only). It needs nothing from
the controller: the guests' libvirt definitions say which vGPU UUIDs they
use, the inventory the charm keeps says where each one lived, and the
configured mappings (rewritten at every config change) place the rest.

On a GPU that mixes time-sliced sizes, NVIDIA's mixed-size mode is lost
at every reboot too: the unit sets it again before any VM starts, and
gives each of the GPU's VFs its vGPU at the placement the charm chose
(nova/mixed_sizes.py).

    python3 -m nvidia_vgpu.restore        # what the boot unit runs

This module reads and writes; what to write is restore_plan's to decide.
"""
import sys
from typing import Callable, Dict, List, Mapping, Tuple

from nvidia_vgpu import model
from nvidia_vgpu.driver import restore_plan
from nvidia_vgpu.host import (boot_records, libvirt, mixed_size, sysfs,
                              templates)

UNIT = 'nvidia-vgpu-restore-mdevs.service'


def unit_text(lib_dir: str) -> str:
    """The boot unit that runs this module (lib_dir: the charm's lib/),
    from its template (which names the units it comes between)."""
    return templates.render(UNIT, {'lib_dir': lib_dir})


def record_inventory(host: model.HostSnapshot) -> bool:
    """Remember where every vGPU lives now (for the next boot), from what
    the hook read of the host already; True if the record changed."""
    return boot_records.save_json(boot_records.INVENTORY,
                                  restore_plan.inventory(host))


def apply_vf_types(vf_types: Mapping[str, int]) -> List[str]:
    """Give each VF its vGPU type (vendor-specific VFIO); the changed."""
    return [vf for vf, number in restore_plan.vf_types_to_set(vf_types)
            if sysfs.set_vgpu_type(vf, number)]


def create(creation: restore_plan.Creation) -> None:
    """Make a vGPU: its UUID written to its type's create file."""
    sysfs.create_mdev(creation.parent, creation.type_id, creation.uuid)


def set_mixed_modes(record: Mapping[str, Mapping[str, Tuple[str, int]]]
                    ) -> bool:
    """Put each GPU that mixes sizes back in mixed-size mode, before any
    VM starts (the mode is lost at every reboot). mdevctl started the
    GPU's defined vGPUs as its VFs appeared, and the mode cannot change
    while one exists: they are removed, the mode set, and they are made
    again, the same. False where a mode could not be set (said)."""
    wanted = sorted(gpu for gpu, placed in record.items() if placed)
    if not wanted:
        return True
    done = True
    for gpu, enabled in sorted(mixed_size.in_mode(wanted).items()):
        if enabled:
            continue
        vfs = set(sysfs.sriov_virtual_functions(gpu))
        in_the_way = [mdev for mdev in sysfs.mediated_devices()
                      if mdev.parent in vfs]
        removed = [mdev for mdev in in_the_way if _sysfs(
            'remove vGPU ' + mdev.uuid, sysfs.remove_mdev, mdev.uuid)]
        failure = mixed_size.set_mode(gpu)
        if failure:
            done = False
            print('{} stays in equal-size mode, so its VFs offer one size: '
                  '{}'.format(gpu, failure), file=sys.stderr)
        else:
            print('put {} in mixed-size mode'.format(gpu))
        for mdev in removed:
            done = _sysfs('make vGPU {} again'.format(mdev.uuid),
                          sysfs.create_mdev, mdev.parent, mdev.type_id,
                          mdev.uuid) and done
    return done


def _sysfs(what: str, write: Callable[..., None], *args: str) -> bool:
    """A sysfs write of the boot unit: False where it failed (said), so
    that one vGPU's failure leaves the others' restoring going."""
    try:
        write(*args)
    except OSError as error:
        print('cannot {}: {}'.format(what, error), file=sys.stderr)
        return False
    return True


def place_mixed(record: Mapping[str, Mapping[str, Tuple[str, int]]]
                ) -> bool:
    """Give each VF of a GPU that mixes sizes its vGPU at its placement:
    the one there (a guest's, or one Nova defined), else one made for
    Nova to take. False where one could not be made or placed (said)."""
    on_vf = {mdev.parent: mdev for mdev in sysfs.mediated_devices()}
    done = True
    for _, placed in sorted(record.items()):
        for vf, (type_id, start) in sorted(placed.items()):
            mdev = on_vf.get(vf)
            if mdev is not None and mdev.type_id != type_id:
                continue    # a guest's of another type: kept as it is
            try:
                if mdev is None:
                    mixed_size.make_placed(vf, type_id, start)
                else:
                    sysfs.set_placement(mdev.uuid, start)
            except OSError as error:
                done = False
                print('cannot place a {} vGPU at {} on {}: {}'.format(
                    type_id, start, vf, error), file=sys.stderr)
    return done


def _recorded_places() -> Dict[str, Tuple[str, str]]:
    """The inventory the charm wrote: uuid -> (parent, type)."""
    return dict(boot_records.recorded_inventory())


def _free_instances(devices: List[str]) -> Dict[str, Dict[str, int]]:
    """Each device's free instances of each of its types; a device not
    on the host (a failed or removed GPU, a VF not enabled) is left out."""
    return {device: {t.type_id: t.available_instances or 0
                     for t in sysfs.read_mdev_types(device)}
            for device in devices
            if sysfs.device_present(device)}


def restore_mdevs() -> int:
    """Recreate the vGPUs guests use where the plan places them; 1 if
    one could not be placed (said on stderr)."""
    guests = libvirt.definitions()
    for guest, why in sorted(guests.unreadable.items()):
        print('cannot read the definition of guest {} ({}): its vGPUs are '
              'not known, so not restored'.format(guest, why),
              file=sys.stderr)
    users = guests.mdevs
    existing = {mdev.uuid for mdev in sysfs.mediated_devices()}
    inventory = _recorded_places()
    mappings = boot_records.recorded_mappings()
    available = _free_instances(
        restore_plan.devices_to_read(inventory, mappings))
    creations, unresolved = restore_plan.plan(
        sorted(users), existing, inventory, mappings, available)
    failed = False
    for creation in creations:
        try:
            create(creation)
        except OSError as error:
            # mdevctl may have started a defined one meanwhile (EEXIST);
            # either way the others still come back.
            if creation.uuid not in {mdev.uuid for mdev in
                                     sysfs.mediated_devices()}:
                failed = True
                print('cannot recreate vGPU {} ({}) on {} for {}: {}'.format(
                    creation.uuid, creation.type_id, creation.parent,
                    ', '.join(users[creation.uuid]), error), file=sys.stderr)
            continue
        print('restored vGPU {} ({}) on {} for {}'.format(
            creation.uuid, creation.type_id, creation.parent,
            ', '.join(users[creation.uuid])))
    for uuid in unresolved:
        parent = inventory.get(uuid, (None, None))[0]
        why = ('its device {} is not on this host (a failed or removed '
               'GPU, or VFs not enabled)'.format(parent)
               if parent and parent not in available else
               'no record and no single mapped type with a free instance')
        print('cannot place vGPU {} of {}: {}'.format(
            uuid, ', '.join(users[uuid]), why), file=sys.stderr)
    return 1 if unresolved or failed else 0


def main() -> int:
    """The boot unit: VFs' types; the GPUs that mix sizes back in
    mixed-size mode; (where the charm asks: before Dalmatian, or while a
    vGPU a guest uses has no definition) vGPUs; then each VF of a GPU
    that mixes sizes its vGPU at its placement."""
    for problem in boot_records.problems():
        print(problem, file=sys.stderr)
    for vf in apply_vf_types(boot_records.recorded_vf_types()):
        print('set the vGPU type of VF {}'.format(vf))
    mixed = boot_records.recorded_placements()
    done = set_mixed_modes(mixed)
    code = 0
    if boot_records.load_json(boot_records.SETTINGS).get(
            'restore_mdevs') is True:
        code = restore_mdevs()
    if not place_mixed(mixed) or not done:
        code = 1
    return code


if __name__ == '__main__':
    sys.exit(main())
