"""The monitoring document: the health verdict, as NRPE checks and the
exporter read it.

Each check is one Nagios service with a state and one line that says what
is wrong and how to fix it, because an operator paged at night reads
only that line. The checks split the verdict by who acts: the vGPU
Manager's services, the driver (install, reboot), drift (the host lost
what Nova or a guest was given), changes waiting for guests, free
vGPUs per type (OK, with perfdata for graphs), the unit's status, and
the GPUs' hardware faults (who replaces or resets a GPU). A host without
a GPU has one check, so that every unit of the application is monitored
alike.

Pure: HostFacts and the verdict's findings in, a JSON-ready dict out.
"""
from typing import (Dict, List, Mapping, NamedTuple, Optional, Sequence,
                    Tuple)

from nvidia_vgpu import names
from nvidia_vgpu.health import gpu_faults, verdict
from nvidia_vgpu.monitoring import severity

VERSION = 1
# Nagios plugin states.
OK, WARNING, CRITICAL, UNKNOWN = 0, 1, 2, 3
STATE_NAMES = ('OK', 'WARNING', 'CRITICAL', 'UNKNOWN')

SERVICES = 'nvidia_vgpu_services'
DRIVER = 'nvidia_vgpu_driver'
DRIFT = 'nvidia_vgpu_drift'
WAITS = 'nvidia_vgpu_waits'
CAPACITY = 'nvidia_vgpu_capacity'
NO_GPU = 'nvidia_vgpu_host'
STATUS = 'nvidia_vgpu_status'
HARDWARE = 'nvidia_vgpu_hardware'
GPU_HOST_CHECKS = (SERVICES, DRIVER, DRIFT, WAITS, CAPACITY, STATUS,
                   HARDWARE)
ALL_CHECKS = GPU_HOST_CHECKS + (NO_GPU,)

# Nagios service descriptions may not hold `~!$%^&*"|'<>?,()=
DESCRIPTIONS = {
    SERVICES: 'NVIDIA vGPU Manager services {unit}',
    DRIVER: 'NVIDIA vGPU driver installed and running {unit}',
    DRIFT: 'NVIDIA vGPU host drift {unit}',
    WAITS: 'NVIDIA vGPU changes waiting for guests {unit}',
    CAPACITY: 'NVIDIA vGPUs free per type {unit}',
    NO_GPU: 'NVIDIA vGPU host without GPU {unit}',
    STATUS: 'NVIDIA vGPU unit status {unit}',
    HARDWARE: 'NVIDIA GPU hardware faults {unit}',
}

# What to do about each drift, on the host (the finding says what).
DRIFT_FIXES = {
    verdict.VFS_MISSING: (
        'read journalctl -b -u nvidia-vgpu-sriov, then run sudo systemctl '
        'restart nvidia-vgpu-sriov or reboot the host'),
    verdict.GUEST_VGPU_MISSING: (
        'reboot the host, or run sudo systemctl restart nova-compute '
        '(running guests are not touched)'),
    verdict.GIS_MISSING: (
        'read journalctl -b -u nvidia-vgpu-mig-instances, then run sudo '
        'systemctl restart nvidia-vgpu-mig-instances or reboot the host'),
    verdict.NOVA_DEVICE_MISSING: (
        'fix the host, or set vgpu-device-mappings to what it has'),
    verdict.NOVA_TYPE_MISSING: (
        'fix the host, or set vgpu-device-mappings to what it has'),
}
WAIT_CODES = (verdict.RETYPE_PENDING, verdict.MIG_LAYOUT_WAITS,
              verdict.SOFTWARE_WAITS)


class Check(NamedTuple):
    """One Nagios service's answer."""

    name: str
    state: int
    text: str
    perfdata: str = ''


def document(facts: verdict.HostFacts, unit: str,
             health_command: str,
             status: Tuple[str, str] = ('active', 'Unit is ready')
             ) -> Dict[str, object]:
    """Everything the checks and the exporter report, for this unit.

    facts: with detail (services, free instances); health_command: how
    an operator runs the vgpu-health action on this unit and this Juju;
    status: the unit's (workload, message) as the hook's plan shows it.
    A refused option does not make the host unhealthy: Nova keeps what
    it had, and the status (at its severity) says it.
    """
    found = verdict.findings(facts)
    rows = vgpu_rows(facts)
    code, level = severity.of_status(status[1])
    checks = (gpu_host_checks(facts, found, rows, health_command) +
              [Check(STATUS, level, _one_line(status[1]))]
              if facts.gpus else [no_gpu_check(level, status[1])])
    installed = facts.installed
    return {
        'version': VERSION,
        'gpu_host': bool(facts.gpus),
        'healthy': not any(finding.broken for finding in found
                           if finding.code != verdict.CONFIG_BLOCKED),
        'status': {'workload': status[0], 'message': status[1],
                   'code': code, 'severity': level},
        'paused': facts.paused,
        'driver': {
            'package': installed.package if installed else None,
            'installed': installed.version if installed else None,
            'running': facts.driver,
            'reboot_required': _has(found, verdict.REBOOT_REQUIRED)},
        'services': dict(sorted(facts.services.items())),
        'vgpus': rows,
        'drift': [{'code': finding.code, 'message': finding.message}
                  for finding in found if finding.code in verdict.DRIFT],
        'waits': waits(facts, found),
        'offer_gaps': [finding.message for finding in found
                       if finding.code == verdict.OFFER_GAP],
        'gpu_faults': gpu_fault_rows(facts),
        'gpu_instances': gpu_instance_rows(facts),
        'checks': [{
            'name': check.name,
            'description': DESCRIPTIONS[check.name].format(unit=unit),
            'state': check.state, 'text': check.text,
            'perfdata': check.perfdata} for check in checks],
    }


def _has(found: Sequence[verdict.Finding], code: str) -> bool:
    return any(finding.code == code for finding in found)


def _first(found: Sequence[verdict.Finding], codes: Sequence[str]
           ) -> List[verdict.Finding]:
    return [finding for finding in found if finding.code in codes]


def _more(count: int, health_command: str) -> str:
    return (' (and {} more: {})'.format(count, health_command)
            if count else '')


def gpu_host_checks(facts: verdict.HostFacts,
                    found: Sequence[verdict.Finding],
                    rows: Sequence[Mapping[str, object]],
                    health_command: str) -> List[Check]:
    """The checks of a host with GPUs, but the unit's status."""
    return [services_check(facts, found, health_command),
            driver_check(facts, found),
            drift_check(found, health_command),
            waits_check(found),
            capacity_check(rows, sorted(facts.published or {}),
                           [finding.message for finding in found
                            if finding.code == verdict.OFFER_GAP]),
            hardware_check(facts, found, health_command)]


def services_check(facts: verdict.HostFacts,
                   found: Sequence[verdict.Finding],
                   health_command: str) -> Check:
    """CRITICAL while a vGPU Manager service or a boot unit of the charm
    is down: guests cannot get vGPUs. A paused unit is down on purpose."""
    broken = _first(found, (verdict.SERVICE_STOPPED,
                            verdict.BOOT_UNIT_FAILED))
    if broken:
        return Check(SERVICES, CRITICAL, broken[0].message + _more(
            len(broken) - 1, health_command))
    if facts.paused:
        return Check(SERVICES, WARNING, (
            'The unit is paused: the vGPU Manager is stopped on purpose '
            '(run the resume action to start it)'))
    if not facts.services:
        return Check(SERVICES, OK, 'No vGPU Manager installed yet '
                     '(see the driver check)')
    return Check(SERVICES, OK, 'vGPU Manager running: ' + ', '.join(
        '{} {}'.format(name, state)
        for name, state in sorted(facts.services.items())))


def driver_check(facts: verdict.HostFacts,
                 found: Sequence[verdict.Finding]) -> Check:
    """CRITICAL without working vGPU software; WARNING while a reboot
    is pending: guests run, on the old driver, until the host reboots."""
    for finding in found:
        if finding.code in (verdict.NO_SOFTWARE, verdict.SOFTWARE_PROBLEM):
            return Check(DRIVER, CRITICAL, finding.message)
        if finding.code == verdict.REBOOT_REQUIRED:
            return Check(DRIVER, WARNING, finding.message + (
                ': reboot the host once its guests are moved'))
    installed = facts.installed
    return Check(DRIVER, OK, 'NVIDIA vGPU software {} {} installed and '
                 'running'.format(installed.package, installed.version)
                 if installed else 'NVIDIA vGPU software running')


def drift_check(found: Sequence[verdict.Finding],
                health_command: str) -> Check:
    """CRITICAL when the host lost what Nova or a guest was given: Nova
    offers vGPUs it cannot create, or a guest lost its vGPU."""
    drifted = _first(found, verdict.DRIFT)
    if not drifted:
        return Check(DRIFT, OK, 'The host has every device and vGPU Nova '
                     'and its guests were given')
    first = drifted[0]
    return Check(DRIFT, CRITICAL, '{}; fix: {}{}'.format(
        first.message, DRIFT_FIXES[first.code],
        _more(len(drifted) - 1, health_command)))


def waits_check(found: Sequence[verdict.Finding]) -> Check:
    """WARNING while a change waits for guests (it names them and what
    frees them): nothing is broken, but something must happen. (A
    refused option is the status check's.)"""
    waiting = _first(found, WAIT_CODES)
    if not waiting:
        return Check(WAITS, OK, 'No change waits for guests')
    return Check(WAITS, WARNING, '; '.join(
        finding.message for finding in waiting))


def hardware_check(facts: verdict.HostFacts,
                   found: Sequence[verdict.Finding],
                   health_command: str) -> Check:
    """CRITICAL where a GPU failed or fails its guests (health/
    gpu_faults.py says which faults), WARNING where one wants a reset
    once its guests are moved; each names the GPU, its guests and the
    fix. Not read while the driver does not run: the driver check says
    why."""
    faults = _first(found, (verdict.GPU_FAILED, verdict.GPU_DEGRADED))
    if faults:
        return Check(HARDWARE, CRITICAL if faults[0].broken else WARNING,
                     faults[0].message + _more(len(faults) - 1,
                                               health_command))
    if facts.gpu_faults is None:
        return Check(HARDWARE, OK, 'GPU faults are not read while the '
                     'NVIDIA driver does not run (see the driver check)')
    return Check(HARDWARE, OK, 'No GPU fault this boot on {} GPU{} (Xid '
                 'messages, ECC, row remapping)'.format(
                     len(facts.gpus), '' if len(facts.gpus) == 1 else 's'))


def capacity_check(rows: Sequence[Mapping[str, object]],
                   given: Sequence[str] = (),
                   gaps: Sequence[str] = ()) -> Check:
    """OK with perfdata: free, in use and capacity per vGPU type, summed
    over the host's GPUs, for graphs and for thresholds set in Nagios.
    given: the types Nova was given; one no GPU shows (its VFs are gone)
    counts 0 (the drift check says why). WARNING, saying why first,
    where this GPU host gives Nova no vGPU or a mapped type none
    (gaps: nova/offer_gaps.py)."""
    found = _capacity_check(rows, given)
    if not gaps:
        return found
    return found._replace(state=WARNING, text='; '.join(
        list(gaps) + [found.text]))


def _capacity_check(rows: Sequence[Mapping[str, object]],
                    given: Sequence[str]) -> Check:
    per_type: Dict[str, Dict[str, Optional[int]]] = {
        vgpu_type: {'free': 0, 'in_use': 0, 'capacity': 0}
        for vgpu_type in given}
    profiles = {str(row['type']): row['profile'] for row in rows
                if row['profile']}
    for row in rows:
        total = per_type.setdefault(str(row['type']), {
            'free': 0, 'in_use': 0, 'capacity': 0})
        for key, sum_so_far in total.items():
            value: Optional[int] = row[key]  # type: ignore
            total[key] = (None if value is None or sum_so_far is None
                          else sum_so_far + value)
    if not per_type:
        return Check(CAPACITY, OK, 'Nova was given no vGPU type on this '
                     'host (vgpu-device-mappings)')
    parts, perfdata = [], []
    for vgpu_type, total in sorted(per_type.items()):
        parts.append('{}{} {} free of {}'.format(
            vgpu_type, ' ({})'.format(profiles[vgpu_type])
            if vgpu_type in profiles else '',
            _count(total['free']), _count(total['capacity'])))
        maximum = '' if total['capacity'] is None else total['capacity']
        for key in ('free', 'in_use'):
            if total[key] is not None:
                perfdata.append("'{}_{}'={};;;0;{}".format(
                    vgpu_type, key, total[key], maximum))
    return Check(CAPACITY, OK, 'vGPUs: ' + ', '.join(parts),
                 ' '.join(perfdata))


def _count(value: Optional[int]) -> str:
    return '?' if value is None else str(value)


def no_gpu_check(level: int, message: str) -> Check:
    """The one check of a host without a GPU: its unit's status, at the
    status' severity (an application-wide typo is a WARNING here)."""
    if level != OK:
        return Check(NO_GPU, level, _one_line(message))
    return Check(NO_GPU, OK, 'No NVIDIA GPU on this host: nothing to '
                 'monitor')


def _one_line(text: str) -> str:
    return ' '.join(text.split())


def vgpu_rows(facts: verdict.HostFacts) -> List[Dict[str, object]]:
    """One row per GPU and vGPU type Nova was given, several types on
    one GPU included (MIG sizes): capacity, in use and free (None where
    the driver's counts were not read); the profile is the type's name
    without the driver's "NVIDIA " or "GRID " (H100XM-1-10C).

    Free counts what Nova can still hand out: instances the driver can
    create plus vGPUs created but unused (Nova reuses them); on the
    vendor-specific VFIO driver, typed VFs no guest uses."""
    rows: List[Dict[str, object]] = []
    for gpu, row in zip(facts.gpus, verdict.gpu_rows(facts)):
        for vgpu_type in row['nova_types']:  # type: ignore
            counts = verdict.type_counts(facts, gpu, vgpu_type)
            name = gpu.names.get(vgpu_type)
            free = counts['free']
            rows.append({
                'gpu': gpu.address, 'model': gpu.model, 'type': vgpu_type,
                'profile': names.profile_of(name) or name if name else None,
                'in_use': counts['in_use'], 'free': free,
                'capacity': None if free is None
                else counts['in_use'] + free})  # type: ignore
    return rows


def waits(facts: verdict.HostFacts,
          found: Sequence[verdict.Finding]) -> List[Dict[str, object]]:
    """The changes waiting for guests, with the guests each waits for."""
    result = []
    for finding in _first(found, WAIT_CODES):
        if finding.code == verdict.RETYPE_PENDING:
            guests = sorted({guest for held in facts.held
                             for guest in held.guests})
        elif finding.code == verdict.MIG_LAYOUT_WAITS:
            guests = sorted({guest for held in facts.mig_held.values()
                             for guest in held})
        else:
            guests = verdict.software_waits_guests(facts)
        result.append({'code': finding.code, 'guests': guests,
                       'message': finding.message})
    return result


def gpu_fault_rows(facts: verdict.HostFacts) -> Optional[Dict[str, object]]:
    """For the exporter: each GPU's error counts this boot, whether
    nvidia-smi lists it, and its faults at their severity; None where
    they were not read."""
    read = facts.gpu_faults
    if read is None:
        return None
    by_gpu: Dict[str, List[Dict[str, object]]] = {}
    for fault in gpu_faults.faults(read, [gpu.address for gpu in
                                          facts.gpus]):
        by_gpu.setdefault(fault.gpu or '', []).append({
            'code': fault.code,
            'severity': CRITICAL if fault.critical else WARNING,
            'guests': len(verdict.guests_on(facts, fault.gpu))
            if fault.gpu else 0})
    gpus = []
    for gpu in facts.gpus:
        counters = (read.counters or {}).get(gpu.address)
        gpus.append({
            'gpu': gpu.address,
            'listed': None if read.counters is None
            else counters is not None,
            'ecc_uncorrected': counters.ecc_uncorrected if counters
            else None,
            'rows_pending': counters.rows_pending if counters else None,
            'rows_failed': counters.rows_failed if counters else None,
            'xids': {str(seen.xid): seen.count for seen in read.xids
                     if seen.gpu == gpu.address},
            'faults': by_gpu.pop(gpu.address, [])})
    return {'gpus': gpus, 'host_faults': by_gpu.pop('', [])}


def gpu_instance_rows(facts: verdict.HostFacts) -> List[Dict[str, object]]:
    """Per GPU in MIG mode and GPU instance size the driver lists: the
    instances that exist and how many more of that size fit now (the
    driver's count, from what the others leave free), so that a layout
    short of room shows before Nova runs out."""
    rows: List[Dict[str, object]] = []
    for address, gpu in sorted(facts.mig.items()):
        if not gpu.enabled:
            continue
        for profile in gpu.profiles:
            rows.append({'gpu': address, 'profile': profile.name,
                         'existing': gpu.instances_of(profile.name),
                         'free': profile.free})
    return rows
