"""`nvidia-smi vgpu -s -v`: the vGPU types each GPU supports, as its
driver describes them, read where sysfs does not say: the most vGPUs of
a type one GPU holds ("Max Instances"), which NVIDIA's vendor-specific
VFIO driver (no mdev, no description file) gives nowhere else, and a
type's placements in mixed-size mode ("Placement Size", "Supported
Placement IDs").

The form, each GPU's part under its "GPU 00000000:41:00.0" line and
each type's fields under its "vGPU Type ID : 0x392", is that of NVIDIA's
vGPU User Guide ("Placing a vGPU on a Physical GPU in Mixed-Size Mode")
and of a third-party capture on an RTX PRO 6000 Blackwell, driver
580.105.06 (docs/facts/mixed-size.md). Lines are read by
their field names ("Max Instances", not "Max Instances Per VM");
anything else is ignored, and a field a driver does not print is simply
absent.
"""
import re
from typing import (Any, Callable, Dict, Iterator, List, Mapping, Optional,
                    Tuple)

from nvidia_vgpu.host import nvidia_smi
from nvidia_vgpu.model import GiFit, Placements
from nvidia_vgpu.names import BUS_ID, profile_of, type_id

COMMAND = ('nvidia-smi', 'vgpu', '-s', '-v')
# "GPU 00000000:41:00.0": each GPU's part of the output starts so
GPU_HEADER = re.compile(r'^GPU\s+(?P<bus>' + BUS_ID.pattern + r')\s*$',
                        re.ASCII)
# "        Heterogeneous Time-Slice Sizes    : Supported"
FIELD = re.compile(r'^\s*(?P<name>[A-Za-z][A-Za-z -]*?)\s*:\s*(?P<value>.*?)'
                   r'\s*$', re.ASCII)
# "vGPU Type ID : 0x392": the driver's type number, in hex
HEX_TYPE_NUMBER = re.compile(r'0x[0-9a-fA-F]{1,5}', re.ASCII)
COUNT = re.compile(r'[0-9]{1,4}', re.ASCII)
PLACEMENT_IDS = re.compile(r'[0-9]{1,4}(?:\s+[0-9]{1,4}){0,63}', re.ASCII)


def by_gpu(text: str) -> Dict[str, List[Tuple[str, str]]]:
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


def _per_type(text: str) -> Dict[str, Dict[str, Dict[str, str]]]:
    """GPU -> {type id (nvidia-<N>): {field: value}}."""
    found: Dict[str, Dict[str, Dict[str, str]]] = {}
    for address, fields in by_gpu(text).items():
        types = found.setdefault(address, {})
        current: Optional[Dict[str, str]] = None
        for name, value in fields:
            if name == 'vGPU Type ID':
                current = (types.setdefault(type_id(int(value, 16)), {})
                           if HEX_TYPE_NUMBER.fullmatch(value) else None)
            elif current is not None:
                current.setdefault(name, value)
    return found


def parse_max_instances(text: str) -> Dict[Tuple[str, str], int]:
    """(GPU, type id) -> the most vGPUs of the type the GPU holds."""
    return {(address, vgpu_type): int(fields['Max Instances'])
            for address, types in _per_type(text).items()
            for vgpu_type, fields in types.items()
            if COUNT.fullmatch(fields.get('Max Instances', ''))}


def parse_placements(text: str) -> Dict[str, Dict[str, Placements]]:
    """GPU -> {type id: its placement size and supported placement IDs
    in mixed-size mode}; types without both fields are left out."""
    found: Dict[str, Dict[str, Placements]] = {}
    for address, types in _per_type(text).items():
        found[address] = {}
        for vgpu_type, fields in types.items():
            size = fields.get('Placement Size', '')
            ids = fields.get('Supported Placement IDs', '')
            if COUNT.fullmatch(size) and int(size) and \
                    PLACEMENT_IDS.fullmatch(ids):
                found[address][vgpu_type] = Placements(int(size), tuple(
                    int(start) for start in ids.split()))
    return found


def parse_gi_fits(text: str) -> Dict[Tuple[str, str], GiFit]:
    """(GPU, type) -> the GPU instance profile a type runs on and how
    many of its vGPUs one instance holds ("GPU Instance Profile ID",
    "Max Instances Per GI"), for the types that give both as numbers (a
    time-sliced type reads N/A): on Blackwell several time-sliced vGPUs
    share one GPU instance, whose size their name does not give
    (DC-1-3Q: eight on a 1g.24gb+gfx). A type is keyed by its id and by
    its profile name ("Name"), as vgpu-device-mappings may give either:
    a name mapped to a GPU whose instances offer it nowhere is still
    sized right."""
    found: Dict[Tuple[str, str], GiFit] = {}
    for address, types in _per_type(text).items():
        for vgpu_type, fields in types.items():
            profile = fields.get('GPU Instance Profile ID', '')
            per_gi = fields.get('Max Instances Per GI', '')
            if COUNT.fullmatch(profile) and COUNT.fullmatch(per_gi) and \
                    int(per_gi):
                fit = GiFit(int(profile), int(per_gi))
                found[(address, vgpu_type)] = fit
                name = profile_of(fields.get('Name', ''))
                if name:
                    found[(address, name)] = fit
    return found


def table(report: 'Report', parse: Callable[[str], Dict[Any, Any]]
          ) -> 'Table':
    """One of the report's tables, parsed when first asked."""
    return Table(lambda: parse(report.text()))


class Report:
    """`nvidia-smi vgpu -s -v`, run once when first asked; '' where it
    does not answer."""

    def __init__(self) -> None:
        self._text: Optional[str] = None

    def text(self) -> str:
        if self._text is None:
            code, text = nvidia_smi.run(COMMAND)
            self._text = text if code == 0 else ''
        return self._text


class Table(Mapping):
    """A table nvidia-smi gives, read when first asked (a hook asks only
    for what it needs: a time-sliced type's maximum on the
    vendor-specific VFIO driver, a type's GPU instance on a GPU in MIG
    mode there, a GPU's mixed-size mode); empty where nvidia-smi does
    not answer. load: reads it."""

    def __init__(self, load: Callable[[], Dict[Any, Any]]) -> None:
        self._load = load
        self._found: Optional[Dict[Any, Any]] = None

    def _table(self) -> Dict[Any, Any]:
        if self._found is None:
            self._found = self._load()
        return self._found

    def __getitem__(self, key: Any) -> Any:
        return self._table()[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())
