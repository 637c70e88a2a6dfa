"""What the charm keeps on the host for its boot units, under
/var/lib/nova-compute-nvidia-vgpu: where each guest's vGPU lived, the
expanded mappings, and the boot settings (VFs' vGPU types, whether mdevs
are recreated). The boot unit (python3 -m nvidia_vgpu.restore) needs
nothing from the controller, only these files.
"""
import json
from typing import Dict, Tuple

from nvidia_vgpu.host.hostfs import host_path, write_if_changed

STATE_DIR = '/var/lib/nova-compute-nvidia-vgpu'
INVENTORY = STATE_DIR + '/mdevs.json'
MAPPINGS = STATE_DIR + '/mappings.json'
# {"restore_mdevs": bool, "vf_vgpu_types": {VF address: type id}}
SETTINGS = STATE_DIR + '/boot.json'
# {GPU address: [GPU instance profiles, largest first]}: mig-layout here
MIG = STATE_DIR + '/mig.json'


def load_json(path: str) -> dict:
    """A record the charm wrote; {} where there is none, or unreadable."""
    try:
        with open(host_path(path)) as stream:
            return json.load(stream)
    except (OSError, ValueError):
        return {}


def save_json(path: str, data: dict) -> bool:
    """Write host state for the boot unit; True if it changed."""
    return write_if_changed(
        path, json.dumps(data, sort_keys=True, indent=1) + '\n')


def recorded_inventory() -> Dict[str, Tuple[str, str]]:
    """Where the charm last saw each vGPU: uuid -> (parent, type)."""
    return {uuid: (place[0], place[1]) for uuid, place in
            load_json(INVENTORY).items()
            if isinstance(place, list) and len(place) == 2}


def recorded_vf_types() -> Dict[str, int]:
    """The vGPU type the charm gave each VF (vendor-specific VFIO), as
    the boot unit reads it."""
    types = load_json(SETTINGS).get('vf_vgpu_types', {})
    return {vf: int(number) for vf, number in types.items()
            if isinstance(number, int) and number} if isinstance(
                types, dict) else {}
