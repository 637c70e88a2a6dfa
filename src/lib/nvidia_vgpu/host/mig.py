"""MIG as the NVIDIA driver reports it, through nvidia-smi: each
MIG-capable GPU's mode (current, and pending until a reset or a reboot),
its GPU instance profiles and the GPU instances that exist; and the
commands that set the mode and make GPU instances.

The mode comes from nvidia-smi's CSV query, a stable interface. Profiles
and instances have no CSV form: their tables (`nvidia-smi mig -lgip`,
`-lgi`, as NVIDIA's MIG User Guide prints them) are read row by row, by
the fields that start each row; anything else in them is ignored.
"""
import re
import subprocess
from typing import (Callable, Dict, List, Optional, Sequence, Tuple,
                    TypeVar)

from nvidia_vgpu.host import nvidia_smi
from nvidia_vgpu.model import GiProfile, GpuInstance, MigGpu

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


def create(address: str, profiles: Sequence[str]) -> Tuple[int, str]:
    """Make GPU instances of these profiles, in this order; those before
    one that does not fit stay (NVIDIA's MIG User Guide)."""
    return _change(('nvidia-smi', 'mig', '-i', bus_id(address), '-cgi',
                    ','.join(profiles)))


def destroy(address: str, ids: Sequence[int]) -> Tuple[int, str]:
    """Remove these GPU instances (refused while a vGPU has one)."""
    return _change(('nvidia-smi', 'mig', '-i', bus_id(address), '-dgi',
                    '-gi', ','.join(str(number) for number in ids)))


def disable(address: str) -> Tuple[int, str]:
    """Take a GPU out of MIG mode."""
    return _change(('nvidia-smi', '-i', bus_id(address), '-mig', '0'))
