"""NVIDIA's mixed-size mode as nvidia-smi reports it: whether a GPU can
hold time-sliced vGPUs of several sizes at once, whether it is in that
mode now, and how many vGPUs of each type fit on it then.

Read for list-vgpu-types, on GPUs whose vGPUs are mdevs on their VFs:
an operator planning two sizes on one GPU needs these figures, and they
are the driver's, not a table the charm keeps.

The forms are those of NVIDIA's vGPU User Guide (17.x), "Putting a GPU
Into Mixed-Size Mode" and "Placing a vGPU on a Physical GPU in Mixed-Size
Mode" (../shared/reference/mixed-size-facts.md), each GPU's part under
its "GPU 00000000:41:00.0" line:
- `nvidia-smi -q`: "Heterogeneous Time-Slice Sizes : Supported" under
  "vGPU Device Capability", and "vGPU Heterogeneous Mode : Enabled"
  (Disabled; N/A on a GPU in MIG mode) under "GPU Virtualization Mode";
- `nvidia-smi vgpu -s -v`: each type from "vGPU Type ID : 0x392" on,
  with "Placement Size" and "Supported Placement IDs"; the number of
  supported placement IDs is the most vGPUs of the type the GPU holds in
  mixed-size mode.
Lines are read by their field names; anything else is ignored, and a
field a driver does not print is simply absent.
"""
import re
from typing import Dict, Iterable, List, Optional, Tuple

from nvidia_vgpu.host import nvidia_smi
from nvidia_vgpu.model import MixedSize, Placements
from nvidia_vgpu.names import BUS_ID, type_id

# "GPU 00000000:41:00.0": each GPU's part of the output starts so
GPU_HEADER = re.compile(r'^GPU\s+(?P<bus>' + BUS_ID.pattern + r')\s*$',
                        re.ASCII)
# "        Heterogeneous Time-Slice Sizes    : Supported"
FIELD = re.compile(r'^\s*(?P<name>[A-Za-z][A-Za-z -]*?)\s*:\s*(?P<value>.*?)'
                   r'\s*$', re.ASCII)
# "vGPU Type ID : 0x392": the driver's type number, in hex
HEX_TYPE_NUMBER = re.compile(r'0x[0-9a-fA-F]{1,5}', re.ASCII)
SIZE = re.compile(r'[0-9]{1,4}', re.ASCII)
PLACEMENT_IDS = re.compile(r'[0-9]{1,4}(?:\s+[0-9]{1,4}){0,63}', re.ASCII)
SIZES_FIELD = 'Heterogeneous Time-Slice Sizes'
MODE_FIELD = 'vGPU Heterogeneous Mode'
QUERY = ('nvidia-smi', '-q')
SUPPORTED_TYPES = ('nvidia-smi', 'vgpu', '-s', '-v')


def _by_gpu(text: str) -> Dict[str, List[Tuple[str, str]]]:
    """GPU address -> the (field, value) lines of its part of the
    output, in order."""
    found: Dict[str, List[Tuple[str, str]]] = {}
    fields: Optional[List[Tuple[str, str]]] = None
    for line in text.splitlines():
        header = GPU_HEADER.match(line)
        if header:
            fields = found.setdefault(header.group('address').lower(), [])
            continue
        field = FIELD.match(line)
        if field and fields is not None:
            fields.append((field.group('name'), field.group('value')))
    return found


def parse_support(text: str
                  ) -> Dict[str, Tuple[Optional[bool], Optional[str]]]:
    """GPU -> (whether it can mix sizes, its mode now), from
    `nvidia-smi -q`; None for what the output does not say."""
    found = {}
    for address, fields in _by_gpu(text).items():
        supported: Optional[bool] = None
        mode: Optional[str] = None
        for name, value in fields:
            if name == SIZES_FIELD:
                supported = value.lower() == 'supported'
            elif name == MODE_FIELD:
                mode = value or None
        found[address] = (supported, mode)
    return found


def parse_placements(text: str) -> Dict[str, Dict[str, Placements]]:
    """GPU -> {type id (nvidia-<N>): its placement size and supported
    placement IDs}, from `nvidia-smi vgpu -s -v`; types without both
    fields (a driver that prints none) are left out."""
    found: Dict[str, Dict[str, Placements]] = {}
    for address, fields in _by_gpu(text).items():
        placements = found.setdefault(address, {})
        current: Optional[str] = None
        size: Optional[int] = None
        for name, value in fields:
            if name == 'vGPU Type ID':
                current = (type_id(int(value, 16))
                           if HEX_TYPE_NUMBER.fullmatch(value) else None)
                size = None
            elif name == 'Placement Size' and SIZE.fullmatch(value):
                size = int(value)
            elif (name == 'Supported Placement IDs' and current and size
                    and PLACEMENT_IDS.fullmatch(value)):
                placements[current] = Placements(size, tuple(
                    int(start) for start in value.split()))
    return found


def read(addresses: Iterable[str]) -> Dict[str, MixedSize]:
    """GPU -> what its driver says of mixed-size mode, for each of these
    GPUs that nvidia-smi reports on: two runs for all of them."""
    wanted = sorted(addresses)
    if not wanted:
        return {}
    code, text = nvidia_smi.run(QUERY)
    support = parse_support(text) if code == 0 else {}
    code, text = nvidia_smi.run(SUPPORTED_TYPES)
    placements = parse_placements(text) if code == 0 else {}
    return {address: MixedSize(support[address][0], support[address][1],
                               placements.get(address, {}))
            for address in wanted if address in support}
