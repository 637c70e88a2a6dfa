"""MIG as the NVIDIA driver reports it, through nvidia-smi: each
MIG-capable GPU's mode (current, and pending until a reset or a reboot),
its GPU instance profiles and the GPU instances that exist; and the
commands that set the mode and make GPU instances.

The mode comes from nvidia-smi's CSV query, a stable interface. Profiles,
their placements and instances have no CSV form: their tables
(`nvidia-smi mig -lgip`, `-lgipp`, `-lgi`, as NVIDIA's MIG User Guide
prints them) are read row by row, by the fields that start each row;
anything else in them is ignored. A driver whose nvidia-smi has no
-lgipp lists no placements: its instances are then made where the
driver chooses, as before.
"""
import re
import subprocess
from typing import (Callable, Dict, List, Mapping, Optional, Sequence,
                    Tuple, TypeVar)

from nvidia_vgpu.host import nvidia_smi
from nvidia_vgpu.model import GiPlacement, GiProfile, GpuInstance, MigGpu

T = TypeVar('T')

QUERY = ('nvidia-smi', '--query-gpu=index,pci.bus_id,mig.mode.current,'
         'mig.mode.pending', '--format=csv,noheader')
# |   0  MIG 1g.10gb       19     7/7        9.50       No     14 ...
PROFILE_ROW = re.compile(
    r'^\|\s*(?P<gpu>\d+)\s+MIG\s+(?P<name>\S+)\s+(?P<id>\d+)\s+'
    r'(?P<free>\d+)/(?P<total>\d+)\s')
# |   0  MIG 1g.10gb      19        1          0:1     |
INSTANCE_ROW = re.compile(
    r'^\|\s*(?P<gpu>\d+)\s+MIG\s+(?P<name>\S+)\s+(?P<profile>\d+)\s+'
    r'(?P<id>\d+)\s+(?P<placement>\d+:\d+)\s')
# GPU  0 Profile ID  9 Placements: {0,4}:4
# GPU  0 Profile ID  0 Placement : {0}:8
PLACEMENT_ROW = re.compile(
    r'^\s*GPU\s+(?P<gpu>[0-9]+)\s+Profile\s+ID\s+(?P<id>[0-9]+)\s+'
    r'Placements?\s*:\s*\{(?P<starts>[0-9]+(?:\s*,\s*[0-9]+)*)\}\s*:\s*'
    r'(?P<size>[0-9]+)\s*$', re.ASCII)
# Memory slices no placement reaches (a GPU has 8): a row beyond is not
# read, so nothing reckons with a nonsense figure.
SLICES_BEYOND = 64
# A GPU's index (str.isdigit() also takes '²', which int() refuses).
DIGITS = re.compile(r'[0-9]+', re.ASCII)
# What nvidia-smi prints for a field the GPU does not have.
NOT_SUPPORTED = ('[N/A]', 'N/A', '[Not Supported]')


def _run(argv: Tuple[str, ...]) -> Optional[str]:
    """stdout of a successful run; None where it failed or is missing."""
    try:
        done = subprocess.run(list(argv), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE,
                              universal_newlines=True,
                              timeout=nvidia_smi.TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def address_of(bus_id: str) -> str:
    """nvidia-smi's 00000000:41:00.0 as lspci writes it: 0000:41:00.0."""
    domain, _, rest = bus_id.strip().partition(':')
    return '{}:{}'.format(domain[-4:], rest).lower()


def parse_modes(text: str) -> List[Tuple[int, str, str, str]]:
    """(index, address, current, pending) of each MIG-capable GPU in
    the CSV query's answer."""
    found = []
    for line in text.splitlines():
        fields = [field.strip() for field in line.split(',')]
        if len(fields) != 4 or not DIGITS.fullmatch(fields[0]):
            continue
        index, bus_id, current, pending = fields
        if current in NOT_SUPPORTED:
            continue
        found.append((int(index), address_of(bus_id), current, pending))
    return found


def _rows_by_gpu(text: str, pattern: 're.Pattern[str]',
                 make: Callable[['re.Match[str]'], T]) -> Dict[int, List[T]]:
    """The table's rows this pattern matches, made into records, by the
    GPU index that starts each row."""
    found: Dict[int, List[T]] = {}
    for line in text.splitlines():
        row = pattern.match(line)
        if row:
            found.setdefault(int(row.group('gpu')), []).append(make(row))
    return found


def parse_profiles(text: str) -> Dict[int, Tuple[GiProfile, ...]]:
    """GPU index -> its GPU instance profiles, from `mig -lgip`."""
    return {gpu: tuple(rows) for gpu, rows in _rows_by_gpu(
        text, PROFILE_ROW, lambda row: GiProfile(
            int(row.group('id')), row.group('name'),
            int(row.group('free')), int(row.group('total')))).items()}


def parse_placements(text: str
                     ) -> Dict[int, Dict[int, Tuple[Tuple[int, ...], int]]]:
    """GPU index -> profile id -> (the starts, the size) of its possible
    placements in memory slices, from `mig -lgipp`."""
    found: Dict[int, Dict[int, Tuple[Tuple[int, ...], int]]] = {}
    for gpu, rows in _rows_by_gpu(text, PLACEMENT_ROW, lambda row: (
            int(row.group('id')),
            tuple(sorted(int(start) for start in
                         row.group('starts').split(','))),
            int(row.group('size')))).items():
        found[gpu] = {profile: (starts, size)
                      for profile, starts, size in rows
                      if 0 < size and starts[-1] + size <= SLICES_BEYOND}
    return found


def with_placements(profiles: Sequence[GiProfile],
                    placements: Mapping[int, Tuple[Tuple[int, ...], int]]
                    ) -> Tuple[GiProfile, ...]:
    """A GPU's profiles, each with the placements -lgipp lists for its
    id (the id as this GPU numbers it)."""
    return tuple(profile._replace(starts=placements[profile.id][0],
                                  size=placements[profile.id][1])
                 if profile.id in placements else profile
                 for profile in profiles)


def parse_instances(text: str) -> Dict[int, Tuple[GpuInstance, ...]]:
    """GPU index -> its GPU instances, from `mig -lgi`."""
    return {gpu: tuple(sorted(rows)) for gpu, rows in _rows_by_gpu(
        text, INSTANCE_ROW, lambda row: GpuInstance(
            int(row.group('id')), int(row.group('profile')),
            row.group('name'), row.group('placement'))).items()}


def read() -> Dict[str, MigGpu]:
    """Each MIG-capable GPU by PCI address; {} where the host has no
    nvidia-smi, the driver does not run, or no GPU has MIG."""
    text = _run(QUERY)
    modes = parse_modes(text) if text else []
    if not modes:
        return {}
    profiles: Dict[int, Tuple[GiProfile, ...]] = {}
    instances: Dict[int, Tuple[GpuInstance, ...]] = {}
    if any(current == 'Enabled' for _, _, current, _ in modes):
        profiles = parse_profiles(_run(('nvidia-smi', 'mig', '-lgip')) or '')
        placements = parse_placements(
            _run(('nvidia-smi', 'mig', '-lgipp')) or '')
        profiles = {index: with_placements(listed, placements.get(index, {}))
                    for index, listed in profiles.items()}
        # With no instance, -lgi fails ("No GPU instances found").
        instances = parse_instances(
            _run(('nvidia-smi', 'mig', '-lgi')) or '')
    return {address: MigGpu(address, index, current, pending,
                            profiles.get(index, ()),
                            instances.get(index, ()))
            for index, address, current, pending in modes}


def bus_id(address: str) -> str:
    """A PCI address as nvidia-smi's -i takes it: 00000000:41:00.0."""
    domain, _, rest = address.partition(':')
    return '{:0>8}:{}'.format(domain, rest)


def _change(argv: Tuple[str, ...]) -> Tuple[int, str]:
    """Exit status and output (both streams) of a command that changes
    the GPU; 127 where nvidia-smi is missing, 124 where it gave no
    answer in time."""
    code, said = nvidia_smi.run(argv)
    return (124 if code is None else code), said.strip()


def enable(address: str) -> Tuple[int, str]:
    """Put a GPU in MIG mode (pending, where it is in use or needs a
    reset: the answer says which)."""
    return _change(('nvidia-smi', '-i', bus_id(address), '-mig', '1'))


def create(address: str,
           instances: Sequence[GiPlacement]) -> Tuple[int, str]:
    """Make these GPU instances, in this order; those before one that
    does not fit stay (NVIDIA's MIG User Guide). One with a start is
    asked for at it, by the GPU's own id for its profile (`-cgi 9:4`, the
    form nvidia-smi's help gives); one without, by its name, where the
    driver chooses."""
    return _change(('nvidia-smi', 'mig', '-i', bus_id(address), '-cgi',
                    ','.join(cgi_token(instance) for instance in instances)))


def cgi_token(instance: GiPlacement) -> str:
    """How -cgi takes one instance: PROFILE_ID:START, or its name."""
    if instance.start is None or instance.profile_id is None:
        return instance.profile
    return '{}:{}'.format(instance.profile_id, instance.start)


def destroy(address: str, ids: Sequence[int]) -> Tuple[int, str]:
    """Remove these GPU instances (refused while a vGPU has one)."""
    return _change(('nvidia-smi', 'mig', '-i', bus_id(address), '-dgi',
                    '-gi', ','.join(str(number) for number in ids)))


def disable(address: str) -> Tuple[int, str]:
    """Take a GPU out of MIG mode."""
    return _change(('nvidia-smi', '-i', bus_id(address), '-mig', '0'))
