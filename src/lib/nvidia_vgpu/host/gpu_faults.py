"""GPU hardware health as the host reports it this boot: NVIDIA's Xid
messages in the kernel log, nvidia-smi's uncorrected ECC count and row
remapping per GPU, and which GPUs nvidia-smi no longer lists.

Read where monitoring or the vgpu-health action asks, and the driver
runs, in a few seconds at most: one journalctl and two nvidia-smi
queries, each with a time limit (a GPU that has failed can hang
nvidia-smi: bounded.py). The queries are nvidia-smi's CSV forms, whose
field names its man page lists, not its human report, whose layout
changes between driver branches.

- `journalctl -k -b -o cat`: the kernel's messages since this boot.
  NVIDIA's form is "NVRM: Xid (PCI:0000:84:00): 79, pid=..., ...": the
  GPU's domain, bus and device, then the Xid number (NVIDIA's *Xid
  Errors* catalogue says what each means).
- `--query-gpu=pci.bus_id,ecc.errors.uncorrected.volatile.total`:
  uncorrected ECC errors since the driver loaded ([N/A]: no ECC).
- `--query-remapped-rows=gpu_bus_id,remapped_rows.pending,
  remapped_rows.failure`: Ampere and later (0 or 1; [N/A] before Ampere,
  and on a GPU in MIG mode with GPU instances). A driver without this
  query fails it; the ECC count still stands.
"""
import os
import re
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple

from nvidia_vgpu import model, names
from nvidia_vgpu.host import bounded, nvidia_smi
from nvidia_vgpu.host.hostfs import host_path

KERNEL_LOG = ('journalctl', '-k', '-b', '-o', 'cat', '--no-pager', '-q')
LOG_TIMEOUT_S = 20
# Both queries of a healthy 16-GPU host answer within a second or two.
QUERY_TIMEOUT_S = 10
ECC_QUERY = ('nvidia-smi',
             '--query-gpu=pci.bus_id,ecc.errors.uncorrected.volatile.total',
             '--format=csv,noheader,nounits')
ROWS_QUERY = ('nvidia-smi', '--query-remapped-rows=gpu_bus_id,'
              'remapped_rows.pending,remapped_rows.failure',
              '--format=csv,noheader')
XID = re.compile(r'NVRM: Xid \(PCI:(?P<bus>' + names.PCI_BUS_DEVICE +
                 r')\): (?P<xid>\d{1,4}),')
PCI_DEVICES = '/sys/bus/pci/devices'
NVIDIA_DRIVER = 'nvidia'


def xids_seen(log: str) -> Tuple[model.XidSeen, ...]:
    """Each (GPU, Xid) of a kernel log, counted, with its last line; in
    the order first seen."""
    seen: Dict[Tuple[str, int], model.XidSeen] = {}
    for line in log.splitlines():
        found = XID.search(line)
        if not found:
            continue
        key = (found.group('bus').lower() + '.0', int(found.group('xid')))
        count = seen[key].count + 1 if key in seen else 1
        seen[key] = model.XidSeen(key[0], key[1], count, line.strip())
    return tuple(seen.values())


def csv_rows(text: str, columns: int) -> Dict[str, List[str]]:
    """GPU address -> the values of each line that starts with a bus
    id and has as many columns as asked (others are nvidia-smi's
    messages)."""
    rows = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.split(',')]
        found = names.BUS_ID.fullmatch(cells[0]) \
            if len(cells) == columns else None
        if found:
            rows[found.group('address').lower()] = cells[1:]
    return rows


def count_of(cell: str) -> Optional[int]:
    """An nvidia-smi count; None for [N/A], [Not Supported] and the like."""
    return int(cell) if cell.isdigit() else None


def flag_of(cell: str) -> Optional[bool]:
    """An nvidia-smi yes/no, as 1/0 or Yes/No; None for [N/A]."""
    value = cell.strip().lower()
    if value in ('1', 'yes'):
        return True
    if value in ('0', 'no'):
        return False
    return None


def counters(ecc_text: str, rows_text: Optional[str]
             ) -> Dict[str, model.GpuErrorCounters]:
    """Each GPU's counters from the two queries' output (rows_text None:
    the row remapping query failed)."""
    rows = csv_rows(rows_text, 3) if rows_text is not None else {}
    found = {}
    for address, (ecc,) in csv_rows(ecc_text, 2).items():
        pending, failed = rows.get(address, ('', ''))
        found[address] = model.GpuErrorCounters(
            count_of(ecc), flag_of(pending), flag_of(failed))
    return found


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else 'no output'


def bound_to_nvidia(addresses: Sequence[str]) -> FrozenSet[str]:
    """The GPUs among these whose PCI function the nvidia driver holds
    (a GPU given to a guest whole, on vfio-pci, is not nvidia-smi's)."""
    found = set()
    for address in addresses:
        link = host_path(os.path.join(PCI_DEVICES, address, 'driver'))
        try:
            if os.path.basename(os.readlink(link)) == NVIDIA_DRIVER:
                found.add(address)
        except OSError:
            continue
    return frozenset(found)


def read(gpus: Sequence[str]) -> model.GpuFaultFacts:
    """This boot's GPU faults of the host whose NVIDIA GPUs are these."""
    code, log = bounded.run(KERNEL_LOG, LOG_TIMEOUT_S)
    log_problem = None if code == 0 else '{} ({})'.format(
        _first_line(log), 'exit {}'.format(code) if code else 'no answer')
    bound = bound_to_nvidia(gpus)
    code, ecc_text = nvidia_smi.run(ECC_QUERY, QUERY_TIMEOUT_S)
    found = counters(ecc_text, None) if code is not None else {}
    if code is None or (code and not found):
        return model.GpuFaultFacts(
            xids_seen(log) if log_problem is None else (),
            counters=None, unanswered=_first_line(ecc_text), bound=bound,
            kernel_log_problem=log_problem)
    rows_code, rows_text = nvidia_smi.run(ROWS_QUERY, QUERY_TIMEOUT_S)
    return model.GpuFaultFacts(
        xids_seen(log) if log_problem is None else (),
        counters=counters(ecc_text, rows_text if rows_code is not None
                          else None),
        bound=bound, kernel_log_problem=log_problem)
