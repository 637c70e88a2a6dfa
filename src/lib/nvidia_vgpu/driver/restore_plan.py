"""What the boot gives guests back, decided from what was read: which
vGPUs to recreate and where, which type each VF takes again, and what
the inventory of vGPUs should say. driver/restore.py reads the host and
the charm's records, asks these, and writes what they answer.

Pure, and the standard library only: the host's python3 imports it at
boot (python3 -m nvidia_vgpu.restore), outside the charm's venv.
"""
from typing import (Any, Collection, Dict, List, Mapping, NamedTuple, Set,
                    Tuple)

from nvidia_vgpu import model, names


class Creation(NamedTuple):
    """A vGPU to make again: its UUID, on which device, of which type."""

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
    type, onto a mapped device with a free instance of it. One whose
    device is gone (not in `available`: a failed or removed GPU) is not
    moved to another: its guest's allocation in Placement is on the
    device that is gone, so it waits for that device (a GPU swapped in
    at the same address) or for the guest to move.
    """
    free = {device: dict(types) for device, types in available.items()}
    creations: List[Creation] = []
    unresolved: List[str] = []
    single_type = next(iter(mappings)) if len(mappings) == 1 else None
    for uuid in sorted(set(wanted) - existing):
        parent, type_id = inventory.get(uuid, (None, None))
        if parent and parent not in free:
            unresolved.append(uuid)
            continue
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


def transient_in_use(host: model.HostSnapshot) -> List[str]:
    """The vGPUs guests' definitions name (running or not) that no
    persistent definition brings back at a boot: created through sysfs,
    by Nova before Dalmatian or by the restore unit, or missing now."""
    return sorted(set(host.mdev_users) - set(host.persistent_mdevs))


def to_define(host: model.HostSnapshot,
              transient: List[str]) -> Tuple[model.Mdev, ...]:
    """The running vGPUs to make persistent, as Nova 30 makes those it
    creates: each of the transient ones guests use (transient_in_use)
    that exists now."""
    return tuple(mdev for mdev in host.mdevs if mdev.uuid in transient)


def devices_to_read(inventory: Mapping[str, Tuple[str, str]],
                    mappings: Mapping[str, List[str]]) -> List[str]:
    """The devices whose free instances plan() needs, in order: where
    the inventory last saw a vGPU, and those the mappings name."""
    devices = {parent for parent, _ in inventory.values()}
    devices.update(device for listed in mappings.values()
                   for device in listed)
    return sorted(devices)


def vf_type_numbers(vf_types: Dict[str, List[str]]) -> Dict[str, int]:
    """VF -> the number of the vGPU type Nova was given it with (what
    current_vgpu_type takes), from type -> its VFs."""
    return {vf: names.type_number(vgpu_type)
            for vgpu_type, vfs in vf_types.items() for vf in vfs}


def mig_backed_names(numbers: Collection[int],
                     offered: Mapping[str, Mapping[str, str]]
                     ) -> Dict[str, str]:
    """The driver's name of each MIG-backed type among these numbers,
    as the devices name them now (str(number) -> name): the next hook
    needs them once every GPU instance of the type's profile is held,
    when the driver lists the type on no VF."""
    found: Dict[str, str] = {}
    for table in offered.values():
        for listed, name in table.items():
            number = names.type_number(listed)
            if number in numbers and name and names.gi_profile_of(name):
                found[str(number)] = name
    return dict(sorted(found.items()))


def vf_types_to_set(vf_types: Mapping[str, Any]) -> List[Tuple[str, int]]:
    """Each VF with the type number to give it, in the VFs' order, from
    the VF -> number the charm keeps (vf_type_numbers)."""
    return [(vf, int(number)) for vf, number in sorted(vf_types.items())]


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


def inventory(host: model.HostSnapshot) -> Dict[str, List[str]]:
    """The inventory to keep after what a hook read of the host."""
    return inventory_to_keep(
        {mdev.uuid: (mdev.parent, mdev.type_id) for mdev in host.mdevs},
        dict(host.recorded_mdevs), set(host.mdev_users))
