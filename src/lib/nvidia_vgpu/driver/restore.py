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

    python3 -m nvidia_vgpu.restore        # what the boot unit runs

This module reads and writes; what to write is restore_plan's to decide.
"""
import os
import sys
from typing import Dict, List, Mapping, Tuple

from nvidia_vgpu import model
from nvidia_vgpu.driver import restore_plan
from nvidia_vgpu.host import boot_records, libvirt, sysfs, templates
from nvidia_vgpu.host.hostfs import host_path

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
    path = host_path(os.path.join(
        sysfs.MDEV_BUS, creation.parent, 'mdev_supported_types',
        creation.type_id, 'create'))
    with open(path, 'w') as stream:
        stream.write(creation.uuid)


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
    """The boot unit: VFs' types, then (where the charm asks: before
    Dalmatian, or while a vGPU a guest uses has no definition) vGPUs."""
    for problem in boot_records.problems():
        print(problem, file=sys.stderr)
    for vf in apply_vf_types(boot_records.recorded_vf_types()):
        print('set the vGPU type of VF {}'.format(vf))
    if boot_records.load_json(boot_records.SETTINGS).get(
            'restore_mdevs') is not True:
        return 0
    return restore_mdevs()


if __name__ == '__main__':
    sys.exit(main())
