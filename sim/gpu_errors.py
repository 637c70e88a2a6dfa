"""The kernel log of this boot and what NVIDIA's Xid messages in it say of
each GPU's hardware: the simulated host's side of GPU faults.

A scenario writes the kernel's lines (host.kernel_messages, and the
kernel_messages step); each NVIDIA Xid line is also the event that
nvidia-smi's counters report, after NVIDIA's *Xid Errors* catalogue
(../shared/reference/lifecycle-facts.md, section 6):

- 79, the GPU has fallen off the bus: nvidia-smi no longer lists it
  until the machine is power-cycled (a reboot step here);
- 48 (double-bit ECC), 94 and 95 (contained and uncontained ECC): one
  more uncorrected ECC error, counted since the driver loaded;
- 63, a row remapping was recorded: it is pending until the GPU is
  reset (a reboot here applies it);
- 64, recording the remapping failed: the failure is kept across
  reboots (NVIDIA keeps it on the board).

Other Xid numbers are logged only. Row remapping is reported by GPUs
with SR-IOV here (the Ampere and later boards the simulator has; V100
and T4 retire pages instead, so nvidia-smi shows N/A), and not on a GPU
in MIG mode with GPU instances, where NVML does not report it.
"""
import re
from typing import Any, Dict, Iterable, Optional

# NVIDIA's form: "NVRM: Xid (PCI:0000:84:00): 79, pid=0, ...".
XID = re.compile(r'NVRM: Xid \(PCI:(?P<bus>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:'
                 r'[0-9a-fA-F]{2})\): (?P<xid>\d+),')
FELL_OFF = 79
UNCORRECTED_ECC = (48, 94, 95)
ROW_REMAP_PENDING = 63
ROW_REMAP_FAILED = 64


def initial(messages: Iterable[str]) -> Dict[str, Any]:
    """The kernel log and error state a scenario's host starts with."""
    host: Dict[str, Any] = {'kernel_log': [], 'gpu_errors': {}}
    log(host, messages)
    return host


def _gpu(host: Dict[str, Any], bus: str) -> Dict[str, Any]:
    return host.setdefault('gpu_errors', {}).setdefault(
        bus.lower() + '.0', {'ecc_uncorrected': 0, 'rows_pending': False,
                             'rows_failed': False, 'lost': False})


def log(host: Dict[str, Any], messages: Iterable[str]) -> None:
    """The kernel prints these lines (in place): each Xid changes the
    state nvidia-smi reports of its GPU."""
    for message in messages:
        host.setdefault('kernel_log', []).append(message)
        found = XID.search(message)
        if not found:
            continue
        errors, xid = _gpu(host, found.group('bus')), int(found.group('xid'))
        if xid == FELL_OFF:
            errors['lost'] = True
        elif xid in UNCORRECTED_ECC:
            errors['ecc_uncorrected'] += 1
        elif xid == ROW_REMAP_PENDING:
            errors['rows_pending'] = True
        elif xid == ROW_REMAP_FAILED:
            errors['rows_failed'] = True


def reboot(host: Dict[str, Any]) -> None:
    """A new boot (in place): a new kernel log, the volatile counts back
    to 0, a pending remapping applied, a GPU that fell off the bus back;
    a failed remapping stays."""
    host['kernel_log'] = []
    for errors in host.get('gpu_errors', {}).values():
        errors.update(ecc_uncorrected=0, rows_pending=False, lost=False)


def errors_of(host: Dict[str, Any], address: str) -> Dict[str, Any]:
    """A GPU's error state (none recorded: no error)."""
    return host.get('gpu_errors', {}).get(address.lower(), {
        'ecc_uncorrected': 0, 'rows_pending': False, 'rows_failed': False,
        'lost': False})


def lost(host: Dict[str, Any], address: str) -> bool:
    """Whether the GPU has fallen off the bus this boot."""
    return bool(errors_of(host, address)['lost'])


def reports_rows(function: Dict[str, Any],
                 mig_gpu: Optional[Dict[str, Any]]) -> bool:
    """Whether nvidia-smi reports the GPU's row remapping (see above)."""
    if 'sriov' not in function:
        return False
    return not (mig_gpu and mig_gpu.get('mode') == 'enabled' and
                mig_gpu.get('gpu_instances'))
