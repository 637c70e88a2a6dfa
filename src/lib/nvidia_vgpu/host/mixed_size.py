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
Both are read by their field names (host/supported_types.py).
"""
from typing import Dict, Iterable, Optional, Tuple

from nvidia_vgpu.host import nvidia_smi, supported_types
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


def read(addresses: Iterable[str]) -> Dict[str, MixedSize]:
    """GPU -> what its driver says of mixed-size mode, for each of these
    GPUs that nvidia-smi reports on: two runs for all of them."""
    wanted = sorted(addresses)
    if not wanted:
        return {}
    code, text = nvidia_smi.run(QUERY)
    support = parse_support(text) if code == 0 else {}
    code, text = nvidia_smi.run(supported_types.COMMAND)
    placements = supported_types.parse_placements(text) if code == 0 else {}
    return {address: MixedSize(support[address][0], support[address][1],
                               placements.get(address, {}))
            for address in wanted if address in support}
