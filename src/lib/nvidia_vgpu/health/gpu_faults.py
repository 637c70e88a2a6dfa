"""Which GPU hardware faults harm guests, how much, and what to do.

The rule (issue 37): a fault that has broken, or will break, the vGPUs
on a GPU is CRITICAL, and the GPU is to be emptied and replaced or
reset; one that leaves them running but asks for a GPU reset when its
guests can be moved is WARNING. What each Xid number means is NVIDIA's
*Xid Errors* catalogue (../shared/reference/lifecycle-facts.md, 6):

- CRITICAL: the GPU fell off the bus (Xid 79, or nvidia-smi no longer
  lists a GPU the nvidia driver holds), a row remapping failed (Xid 64,
  or remapped_rows.failure: the board has no spare memory rows left),
  a double-bit or an uncontained ECC error (Xid 48, 95: the guests on
  the GPU lost memory), and nvidia-smi not answering at all (a hung GPU
  hangs it; which GPU cannot be told);
- WARNING: uncorrected ECC errors counted without those Xids, a row
  remapping pending (Xid 63, or remapped_rows.pending: it applies at the
  next GPU reset), a contained ECC error (Xid 94: one guest's work was
  stopped, the GPU goes on), a high single-bit ECC rate (Xid 92).

Other Xid numbers (guest programs' faults, mostly) are counted for the
exporter but page for nothing.

Pure: the facts the host reader gathered (host/gpu_faults.py) and the
host's GPUs in, faults out; the verdict adds the guests on each GPU.
"""
from typing import (Callable, Dict, List, NamedTuple, Optional, Sequence,
                    Tuple)

from nvidia_vgpu import model

FELL_OFF_BUS = 'fell-off-bus'
ROW_REMAP_FAILED = 'row-remap-failed'
UNCORRECTED_ECC = 'uncorrected-ecc'
NO_ANSWER = 'nvidia-smi-no-answer'
ROW_REMAP_PENDING = 'row-remap-pending'
CONTAINED_ECC = 'contained-ecc'
SINGLE_BIT_RATE = 'single-bit-ecc-rate'

REPLACE = ('move its guests off this host (cold-migrate those whose vGPU '
           'is gone), then replace the GPU (Replacing a failed GPU)')
RESET = ('move its guests off this host, then reboot it to reset the GPU; '
         'if the fault comes back, replace the GPU (Replacing a failed GPU)')
RESET_WHEN_EMPTY = ('when its guests can be moved off this host, reboot it '
                    'to reset the GPU')
FIXES = {
    FELL_OFF_BUS: REPLACE, ROW_REMAP_FAILED: REPLACE,
    UNCORRECTED_ECC: RESET, ROW_REMAP_PENDING: RESET_WHEN_EMPTY,
    CONTAINED_ECC: RESET_WHEN_EMPTY, SINGLE_BIT_RATE: RESET_WHEN_EMPTY,
    NO_ANSWER: ('read journalctl -k -b for NVIDIA Xid messages to find '
                'the GPU, then move its guests off and reboot the host'),
}
# Xid number -> (fault, critical, what the GPU did)
XIDS: Dict[int, Tuple[str, bool, str]] = {
    79: (FELL_OFF_BUS, True, 'fell off the bus'),
    64: (ROW_REMAP_FAILED, True, 'failed to remap a memory row'),
    48: (UNCORRECTED_ECC, True, 'had a double-bit ECC error'),
    95: (UNCORRECTED_ECC, True, 'had an uncontained ECC error'),
    63: (ROW_REMAP_PENDING, False, 'recorded a row remapping'),
    94: (CONTAINED_ECC, False, 'had a contained ECC error'),
    92: (SINGLE_BIT_RATE, False, 'has a high single-bit ECC error rate'),
}


class GpuFault(NamedTuple):
    """One fault of one GPU (gpu None: of the host's GPUs, which one
    cannot be told)."""

    gpu: Optional[str]
    code: str
    critical: bool
    reasons: Tuple[str, ...]

    @property
    def fix(self) -> str:
        return FIXES[self.code]


def _times(count: int) -> str:
    return 'once' if count == 1 else '{} times'.format(count)


def faults(facts: model.GpuFaultFacts,
           gpus: Sequence[str]) -> List[GpuFault]:
    """The faults of these GPUs this boot, critical first, then by GPU;
    each GPU's worst fault of a kind says every reason seen for it."""
    found: Dict[Tuple[str, str], Tuple[bool, List[str]]] = {}

    def add(gpu: str, code: str, critical: bool, reason: str) -> None:
        was, reasons = found.get((gpu, code), (False, []))
        found[(gpu, code)] = (was or critical, reasons + [reason])

    for seen in facts.xids:
        if seen.gpu in gpus and seen.xid in XIDS:
            code, critical, what = XIDS[seen.xid]
            add(seen.gpu, code, critical, '{} (Xid {}, {} this boot)'.format(
                what, seen.xid, _times(seen.count)))
    for gpu in gpus:
        # An ECC count with a contained error's Xid is that error.
        ecc = CONTAINED_ECC if (gpu, CONTAINED_ECC) in found and (
            gpu, UNCORRECTED_ECC) not in found else UNCORRECTED_ECC
        _counted(facts, gpu, ecc, add)
    result = [GpuFault(gpu, code, critical, tuple(reasons))
              for (gpu, code), (critical, reasons) in found.items()]
    if facts.counters is None and facts.unanswered is not None:
        result.append(GpuFault(None, NO_ANSWER, True, (
            'nvidia-smi did not answer: ' + facts.unanswered,)))
    return sorted(result, key=lambda fault: (
        not fault.critical, fault.gpu or '', fault.code))


def _counted(facts: model.GpuFaultFacts, gpu: str, ecc: str,
             add: Callable[[str, str, bool, str], None]) -> None:
    """What nvidia-smi's counters say of one GPU (its ECC count under
    the fault `ecc`)."""
    if facts.counters is None:
        return
    counters = facts.counters.get(gpu)
    if counters is None:
        if gpu in facts.bound:
            add(gpu, FELL_OFF_BUS, True, (
                'is not listed by nvidia-smi although the nvidia driver '
                'holds it'))
        return
    if counters.rows_failed:
        add(gpu, ROW_REMAP_FAILED, True, 'has no spare memory rows left '
            '(nvidia-smi reports a row remapping failure)')
    if counters.ecc_uncorrected:
        count = counters.ecc_uncorrected
        add(gpu, ecc, False, 'has had {} uncorrected ECC '
            'error{} since the driver loaded'.format(
                count, '' if count == 1 else 's'))
    if counters.rows_pending:
        add(gpu, ROW_REMAP_PENDING, False, 'has a memory row remapping '
            'that waits for a GPU reset')
