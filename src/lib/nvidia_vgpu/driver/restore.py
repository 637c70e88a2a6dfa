"""Give guests their vGPUs back at boot, before nova-compute starts.

On NVIDIA's vendor-specific VFIO driver (no mdev), each VF's vGPU type is
set again from what the charm wrote (types are lost at every reboot).

Mediated devices vanish at every reboot. From Dalmatian on, Nova keeps
them itself through libvirt and mdevctl; before that its own re-creation
is unreliable, so the charm installs a oneshot unit running this module
with the host's python3 (standard library only). It needs nothing from
the controller: the guests' libvirt definitions say which vGPU UUIDs they
use, the inventory the charm keeps says where each one lived, and the
configured mappings (rewritten at every config change) place the rest.

    python3 -m nvidia_vgpu.restore        # what the boot unit runs
"""
import os
import sys
from typing import Dict, List, NamedTuple, Set, Tuple

from nvidia_vgpu import model
from nvidia_vgpu.host import boot_records, libvirt, sysfs, templates
from nvidia_vgpu.host.hostfs import host_path

UNIT = 'nvidia-vgpu-restore-mdevs.service'


class Creation(NamedTuple):
    uuid: str
    parent: str
    type_id: str


def plan(wanted: List[str], existing: Set[str],
         inventory: Dict[str, Tuple[str, str]],
         mappings: Dict[str, List[str]],
         available: Dict[str, Dict[str, int]]
         ) -> Tuple[List[Creation], List[str]]:
    """Where to recreate each missing vGPU; and those that cannot be.

    A vGPU goes back where the inventory last saw it if that device
    still offers its type; otherwise, when the mappings name a single
    type, onto a mapped device with a free instance of it.
    """
    free = {device: dict(types) for device, types in available.items()}
    creations: List[Creation] = []
    unresolved: List[str] = []
    single_type = next(iter(mappings)) if len(mappings) == 1 else None
    for uuid in sorted(set(wanted) - existing):
        parent, type_id = inventory.get(uuid, (None, None))
        if not (parent and free.get(parent, {}).get(type_id, 0) > 0):
            parent, type_id = None, single_type
            for device in mappings.get(single_type or '', []):
                if free.get(device, {}).get(single_type, 0) > 0:
                    parent = device
                    break
        if parent is None:
            unresolved.append(uuid)
            continue
        free[parent][type_id] -= 1
        creations.append(Creation(uuid, parent, type_id))
    return creations, unresolved


def inventory_to_keep(now: Dict[str, Tuple[str, str]],
                      recorded: Dict[str, Tuple[str, str]],
                      referenced: Set[str]) -> Dict[str, List[str]]:
    """What the inventory should say: every vGPU that exists now, and
    where a vGPU a guest's definition still names but that is missing
    now was last seen (the next boot puts it back there, and the health
    check says where it was); a vGPU no guest names is forgotten."""
    kept = {uuid: list(place) for uuid, place in now.items()}
    for uuid, place in recorded.items():
        if uuid not in kept and uuid in referenced:
            kept[uuid] = list(place)
    return kept


def record_inventory(host: model.HostSnapshot) -> bool:
    """Remember where every vGPU lives now (for the next boot), from what
    the hook read of the host already."""
    return boot_records.save_json(boot_records.INVENTORY, inventory_to_keep(
        {mdev.uuid: (mdev.parent, mdev.type_id) for mdev in host.mdevs},
        dict(host.recorded_mdevs), set(host.mdev_users)))


def unit_text(lib_dir: str) -> str:
    """The boot unit that runs this module (lib_dir: the charm's lib/),
    from its template (which names the units it comes between)."""
    return templates.render(UNIT, {'lib_dir': lib_dir})


def vf_type_numbers(vf_types: Dict[str, List[str]]) -> Dict[str, int]:
    """VF -> the number of the vGPU type Nova was given it with (what
    current_vgpu_type takes), from type -> its VFs."""
    return {vf: int(vgpu_type.rsplit('-', 1)[1])
            for vgpu_type, vfs in vf_types.items() for vf in vfs}


def apply_vf_types(vf_types: Dict[str, int]) -> List[str]:
    """Give each VF its vGPU type (vendor-specific VFIO); the changed."""
    return [vf for vf, type_id in sorted(vf_types.items())
            if sysfs.set_vgpu_type(vf, int(type_id))]


def main() -> int:
    settings = boot_records.load_json(boot_records.SETTINGS)
    for vf in apply_vf_types(settings.get('vf_vgpu_types', {})):
        print('set the vGPU type of VF {}'.format(vf))
    if not settings.get('restore_mdevs'):
        return 0
    users = libvirt.mdev_users()
    existing = {mdev.uuid for mdev in sysfs.mediated_devices()}
    inventory = {uuid: tuple(place) for uuid, place in
                 boot_records.load_json(boot_records.INVENTORY).items()}
    mappings = boot_records.load_json(boot_records.MAPPINGS)
    devices = {parent for parent, _ in inventory.values()}
    devices.update(device for listed in mappings.values()
                   for device in listed)
    available = {device: {t.type_id: t.available_instances or 0
                          for t in sysfs.read_mdev_types(device)}
                 for device in sorted(devices)}
    creations, unresolved = plan(sorted(users), existing, inventory,
                                 mappings, available)
    for creation in creations:
        path = host_path(os.path.join(
            sysfs.MDEV_BUS, creation.parent, 'mdev_supported_types',
            creation.type_id, 'create'))
        with open(path, 'w') as stream:
            stream.write(creation.uuid)
        print('restored vGPU {} ({}) on {} for {}'.format(
            creation.uuid, creation.type_id, creation.parent,
            ', '.join(users[creation.uuid])))
    for uuid in unresolved:
        print('cannot place vGPU {} of {}: no record and no single mapped '
              'type with a free instance'.format(uuid, ', '.join(
                  users[uuid])), file=sys.stderr)
    return 1 if unresolved else 0


if __name__ == '__main__':
    sys.exit(main())
