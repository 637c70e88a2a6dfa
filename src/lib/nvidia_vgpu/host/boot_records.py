"""What the charm keeps on the host for its boot units, under
/var/lib/nova-compute-nvidia-vgpu: where each guest's vGPU lived, the
expanded mappings, and the boot settings (VFs' vGPU types, whether mdevs
are recreated). The boot unit (python3 -m nvidia_vgpu.restore) needs
nothing from the controller, only these files.
"""
import json
import re
from typing import Dict, List, Tuple

from nvidia_vgpu import names
from nvidia_vgpu.host.hostfs import read_json_object, write_if_changed

STATE_DIR = '/var/lib/nova-compute-nvidia-vgpu'
INVENTORY = STATE_DIR + '/mdevs.json'
MAPPINGS = STATE_DIR + '/mappings.json'
# {"restore_mdevs": bool, "vf_vgpu_types": {VF address: type id},
#  "mixed_sizes": {GPU: {VF: [type id, placement ID]}}}
SETTINGS = STATE_DIR + '/boot.json'
# {GPU address: [GPU instance profiles, largest first]}: mig-layout here
MIG = STATE_DIR + '/mig.json'


RECORDS = (INVENTORY, MAPPINGS, SETTINGS, MIG)


def load_json(path: str) -> dict:
    """A record the charm wrote; {} where there is none, or it cannot be
    read as a JSON object (problems() says which)."""
    return read_json_object(path)[0]


def problems() -> List[str]:
    """Each record that exists but was ignored, and why: it is written
    again whole at the next hook that has something to record."""
    return [problem for problem in (read_json_object(path)[1]
                                    for path in RECORDS) if problem]


def save_json(path: str, data: dict) -> bool:
    """Write host state for the boot unit; True if it changed."""
    return write_if_changed(
        path, json.dumps(data, sort_keys=True, indent=1) + '\n')


def recorded_inventory() -> Dict[str, Tuple[str, str]]:
    """Where the charm last saw each vGPU: uuid -> (parent, type). An
    entry of any other shape is left out: the boot unit writes a UUID
    into a path made of the parent and the type."""
    return {uuid: (place[0], place[1]) for uuid, place in
            load_json(INVENTORY).items()
            if names.MDEV_UUID.fullmatch(uuid) and
            isinstance(place, list) and len(place) == 2 and
            all(isinstance(part, str) for part in place) and
            names.PCI_ADDRESS.fullmatch(place[0]) and
            names.TYPE_ID.fullmatch(place[1])}


def recorded_vf_types() -> Dict[str, int]:
    """The vGPU type the charm gave each VF (vendor-specific VFIO), as
    the boot unit reads it (it writes the number into the VF's sysfs)."""
    types = load_json(SETTINGS).get('vf_vgpu_types', {})
    return {vf: number for vf, number in types.items()
            if names.PCI_ADDRESS.fullmatch(vf) and isinstance(number, int)
            and not isinstance(number, bool) and number > 0} if isinstance(
                types, dict) else {}


def recorded_vf_type_names() -> Dict[int, str]:
    """The driver's name of each type the charm gave VFs, by number, as
    it read them when it gave them (vendor-specific VFIO: the driver
    lists a type only while it can create one more)."""
    found = load_json(SETTINGS).get('vf_vgpu_type_names', {})
    return {int(number): name for number, name in found.items()
            if number.isdigit() and isinstance(name, str) and
            len(name) <= 80 and names.profile_of(name) is not None} \
        if isinstance(found, dict) else {}


def recorded_placements() -> Dict[str, Dict[str, Tuple[str, int]]]:
    """GPU in mixed-size mode -> {VF: (its type, its placement ID)}, as
    the charm gave them; the boot unit writes the type into a path and
    the ID into the vGPU's vgpu_params, so an entry of another shape is
    left out."""
    found = load_json(SETTINGS).get('mixed_sizes', {})
    if not isinstance(found, dict):
        return {}
    return {gpu: {vf: (place[0], place[1]) for vf, place in vfs.items()
                  if names.PCI_ADDRESS.fullmatch(vf) and
                  isinstance(place, list) and len(place) == 2 and
                  isinstance(place[0], str) and
                  names.TYPE_ID.fullmatch(place[0]) and
                  _whole(place[1])}
            for gpu, vfs in found.items()
            if names.PCI_ADDRESS.fullmatch(gpu) and isinstance(vfs, dict)}


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and \
        0 <= value < 1024


def recorded_mig() -> Dict[str, List[str]]:
    """GPU -> the GPU instance profiles its boot units make (given to
    nvidia-smi as they are)."""
    return _lists_of_names(MIG, names.PCI_ADDRESS, names.GI_PROFILE)


def recorded_mappings() -> Dict[str, List[str]]:
    """vGPU type -> the devices the expanded mappings give it."""
    return _lists_of_names(MAPPINGS, names.TYPE_ID, names.PCI_ADDRESS)


def _lists_of_names(path: str, key: 're.Pattern[str]',
                    value: 're.Pattern[str]') -> Dict[str, List[str]]:
    """A record of name -> [names], each matching its grammar; an entry
    of another shape is left out."""
    return {name: list(listed) for name, listed in load_json(path).items()
            if key.fullmatch(name) and isinstance(listed, list) and
            all(isinstance(item, str) and value.fullmatch(item)
                for item in listed)}
