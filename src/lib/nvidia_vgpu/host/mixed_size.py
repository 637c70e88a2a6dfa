"""NVIDIA's mixed-size mode as nvidia-smi reports it: whether a GPU can
hold time-sliced vGPUs of several sizes at once, whether it is in that
mode now, and how many vGPUs of each type fit on it then.

Read for list-vgpu-types, on GPUs whose vGPUs are mdevs on their VFs:
an operator planning two sizes on one GPU needs these figures, and they
are the driver's, not a table the charm keeps.

The forms are those of NVIDIA's vGPU User Guide (17.x), "Putting a GPU
Into Mixed-Size Mode" and "Placing a vGPU on a Physical GPU in Mixed-Size
Mode" (docs/facts/mixed-size.md), each GPU's part under
its "GPU 00000000:41:00.0" line:
- `nvidia-smi -q`: "Heterogeneous Time-Slice Sizes : Supported" under
  "vGPU Device Capability", and "vGPU Heterogeneous Mode : Enabled"
  (Disabled; N/A on a GPU in MIG mode) under "GPU Virtualization Mode";
- `nvidia-smi vgpu -s -v`: each type from "vGPU Type ID : 0x392" on,
  with "Placement Size" and "Supported Placement IDs"; the number of
  supported placement IDs is the most vGPUs of the type the GPU holds in
  mixed-size mode.
Both are read by their field names (host/supported_types.py).
"""
import uuid
from typing import Dict, Iterable, Mapping, Optional, Tuple

from nvidia_vgpu.host import mig, nvidia_smi, supported_types, sysfs
from nvidia_vgpu.host.hostfs import host_path
from nvidia_vgpu.model import MixedSize

SIZES_FIELD = 'Heterogeneous Time-Slice Sizes'
MODE_FIELD = 'vGPU Heterogeneous Mode'
QUERY = ('nvidia-smi', '-q')


def parse_support(text: str
                  ) -> Dict[str, Tuple[Optional[bool], Optional[str]]]:
    """GPU -> (whether it can mix sizes, its mode now), from
    `nvidia-smi -q`; None for what the output does not say."""
    found = {}
    for address, fields in supported_types.by_gpu(text).items():
        supported: Optional[bool] = None
        mode: Optional[str] = None
        for name, value in fields:
            if name == SIZES_FIELD:
                supported = value.lower() == 'supported'
            elif name == MODE_FIELD:
                mode = value or None
        found[address] = (supported, mode)
    return found


def _support() -> Dict[str, Tuple[Optional[bool], Optional[str]]]:
    code, text = nvidia_smi.run(QUERY)
    return parse_support(text) if code == 0 else {}


def in_mode(addresses: Iterable[str]) -> Dict[str, bool]:
    """GPU -> whether it is in mixed-size mode now, from one
    `nvidia-smi -q` (the boot unit's question)."""
    support = _support()
    return {address: MixedSize(None, support.get(
        address, (None, None))[1]).enabled for address in addresses}


def read(addresses: Iterable[str],
         report: Optional[supported_types.Report] = None
         ) -> Dict[str, MixedSize]:
    """GPU -> what its driver says of mixed-size mode, for each of these
    GPUs that nvidia-smi reports on: `nvidia-smi -q`, and the report of
    supported types (a hook's own, where it reads it for more)."""
    wanted = sorted(addresses)
    if not wanted:
        return {}
    support = _support()
    placements = supported_types.parse_placements(
        (report or supported_types.Report()).text())
    return {address: MixedSize(support[address][0], support[address][1],
                               placements.get(address, {}))
            for address in wanted if address in support}


def make_placed(vf: str, type_id: str, placement: int) -> str:
    """Make the vGPU for Nova to take on a VF (spare_uuid) and fix its
    placement before any VM starts with it; its UUID (OSError where the
    VF cannot take it)."""
    made = spare_uuid(vf, type_id, placement)
    sysfs.create_mdev(vf, type_id, made)
    sysfs.set_placement(made, placement)
    return made


# uuid5's namespace for the vGPUs the charm makes for Nova to take.
SPARE_NAMESPACE = uuid.UUID('5d1c3e0a-6f4b-4c55-9a39-3c1f0e6b7a21')
MACHINE_ID = '/etc/machine-id'


def spare_uuid(vf: str, type_id: str, placement: int) -> str:
    """The UUID of the vGPU the charm makes on a VF for Nova: the same
    for the same host, VF, type and placement (a hook or boot that
    makes it again makes the same one; the machine's id keeps it apart
    from other hosts', which a migrating guest meets)."""
    try:
        with open(host_path(MACHINE_ID)) as stream:
            machine = stream.read().strip()
    except OSError:
        machine = ''
    return str(uuid.uuid5(SPARE_NAMESPACE, '/'.join(
        (machine, vf, type_id, str(placement)))))


def set_mode(address: str, enabled: bool = True) -> Optional[str]:
    """Put a GPU in mixed-size mode (or back in equal-size mode), as
    NVIDIA's guide does after its VFs are enabled and before any vGPU
    exists (runtime state, gone at every reboot); None when done, else
    what nvidia-smi said (it refuses while a vGPU exists on the GPU: "In
    use by another client")."""
    argv = ('nvidia-smi', 'vgpu', '-i', mig.bus_id(address), '-shm',
            '1' if enabled else '0')
    code, said = nvidia_smi.run(argv)
    if code == 0:
        return None
    return '{} {}: {}'.format(
        ' '.join(argv), 'gave no answer in time' if code is None else
        'exited {}'.format(code), said.strip())


def on_demand(addresses: Iterable[str], report: supported_types.Report
              ) -> Mapping[str, MixedSize]:
    """GPU -> MixedSize for these GPUs, nvidia-smi run once when first
    asked: a hook asks only where the mappings name a GPU under two
    types (nova/mixed_sizes.py)."""
    wanted = sorted(addresses)
    return supported_types.Table(lambda: read(wanted, report))
