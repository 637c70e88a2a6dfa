"""Serve this host's vGPU facts to Prometheus.

The charm's hooks write what they found on the host to FACTS_PATH (a JSON
document, version 1, report.py; the file's mtime is when the facts were
read). This
program turns it into metrics at every scrape, so the metrics are exactly
as fresh as the facts, and the facts' age tells when the unit agent
stopped refreshing them (an alert rule fires on it). It runs as a
systemd service that the charm installs while the cos-agent relation
exists (cos_agent.py), under the unit's venv Python, which has
prometheus_client:

    python3 -m nvidia_vgpu.monitoring.exporter --port 10320 [--facts PATH]

It listens on 127.0.0.1 by default (cos_agent.py says so too):
grafana-agent, on the same machine, scrapes it there, and nothing else
needs the host's facts. The charm's hooks do not import this module (nor
prometheus_client, a tenth of a second): only the service runs it.

Guests' names are never labels: guests come and go, and every distinct
label value is a new time series in Prometheus. They are counted. The
one exception is per vGPU (guest_metrics.py): each running vGPU's
figures, read through NVML at the scrape, carry its guest's UUID, its
GPU and its type, so that a host has one series per running vGPU and a
guest's series leave with it.

    python3 -m nvidia_vgpu.monitoring.exporter --once

prints one scrape and exits (an operator's look, the simulator's).
"""
import argparse
import http.server
import os
import socket
import socketserver
import sys
import time
from typing import (Any, Callable, Dict, Iterator, List, Mapping, Optional,
                    Sequence, Tuple)

from prometheus_client import CollectorRegistry
from prometheus_client.core import (GaugeMetricFamily, InfoMetricFamily,
                                    Metric)
from prometheus_client.exposition import MetricsHandler, generate_latest

from nvidia_vgpu.host.hostfs import host_path, parse_json
from nvidia_vgpu.monitoring import facts_file, guest_metrics

# Where the hooks write the facts (facts_file.py), in report.py's format.
FACTS_PATH = facts_file.PATH
FACTS_VERSION = 1
DEFAULT_ADDRESS = '127.0.0.1'
PREFIX = 'nvidia_vgpu_'
# (GPU, vGPU type) rows: which GPU, which type Nova was given on it.
ROW_LABELS = ('gpu', 'model', 'vgpu_type', 'profile')

# Every metric this exporter emits, as Prometheus shows it, and what it
# means (the HELP text). Alert rules and dashboards may use these and the
# scrape's own `up`, nothing else (the tests hold them to it).
METRICS: Dict[str, str] = {
    'nvidia_vgpu_facts_available':
        '1 when the charm\'s facts document was read at this scrape; 0: '
        'none yet (no hook wrote it), or unreadable',
    'nvidia_vgpu_facts_timestamp_seconds':
        'When the charm\'s hooks last read the host (the facts file\'s '
        'mtime), in seconds since the epoch',
    'nvidia_vgpu_facts_age_seconds':
        'Seconds since the charm\'s hooks last read the host; grows while '
        'no hook runs (a stopped unit agent)',
    'nvidia_vgpu_host_info':
        'This host (1, labelled with its hostname)',
    'nvidia_vgpu_gpu_host':
        '1 where the host has an NVIDIA GPU',
    'nvidia_vgpu_healthy':
        '1 where vgpu-health finds nothing broken on the host',
    'nvidia_vgpu_paused':
        '1 while the unit is paused (the vGPU Manager stopped on purpose)',
    'nvidia_vgpu_driver_info':
        'The vGPU Manager package, the version installed and the version '
        'whose kernel module runs (empty: none)',
    'nvidia_vgpu_reboot_required':
        '1 where the installed vGPU Manager waits for a reboot to run',
    'nvidia_vgpu_service_active':
        '1 where systemd says the service is active',
    'nvidia_vgpu_instances_capacity':
        'vGPUs of the type the GPU can host (absent: not known)',
    'nvidia_vgpu_instances_in_use':
        'vGPUs of the type that guests\' definitions use on the GPU',
    'nvidia_vgpu_instances_free':
        'vGPUs of the type Nova can still hand out on the GPU: those the '
        'driver can create and those created but unused (absent: not '
        'known)',
    'nvidia_vgpu_drift_findings':
        'Host drift findings that break vGPUs, by finding',
    'nvidia_vgpu_waiting_changes':
        'Changes that wait for guests to stop using vGPUs, by kind',
    'nvidia_vgpu_waiting_guests':
        'Guests that changes wait for, by kind of change',
    'nvidia_vgpu_status_severity':
        "The unit's status: 0 ready, 1 waits for the operator, 2 breaks "
        "or endangers guests or Nova's capacity, by the status' code",
    'nvidia_vgpu_offer_gaps':
        'Why Nova gets no vGPU from this GPU host, or none of a mapped '
        'type: the count of reasons (vgpu-health names them)',
    'nvidia_vgpu_gpu_instances':
        'GPU instances of the size that exist on the GPU (MIG mode)',
    'nvidia_vgpu_gpu_instances_free':
        'GPU instances of the size the GPU can still make, as the driver '
        'counts them from what the others leave free (MIG mode)',
    'nvidia_vgpu_gpu_faults_read':
        '1 where this boot\'s GPU hardware faults were read (the driver '
        'runs and nvidia-smi answered or timed out); 0: not read',
    'nvidia_vgpu_gpu_fault':
        'A GPU hardware fault this boot, by GPU and fault: 1 asks for a '
        'GPU reset once its guests are moved, 2 breaks its guests\' vGPUs '
        '(gpu empty: nvidia-smi does not answer, which GPU is not known)',
    'nvidia_vgpu_gpu_fault_guests':
        'Guests using vGPUs on a GPU with a fault (vgpu-health names them)',
    'nvidia_vgpu_gpu_listed':
        '1 where nvidia-smi lists the GPU; 0: it does not although the '
        'nvidia driver holds it (fallen off the bus)',
    'nvidia_vgpu_gpu_xid_events':
        'NVIDIA Xid messages in the kernel log this boot, by GPU and Xid',
    'nvidia_vgpu_gpu_ecc_uncorrected':
        'Uncorrected ECC errors since the driver loaded (absent: no ECC)',
    'nvidia_vgpu_gpu_remapped_rows_pending':
        '1 where a memory row remapping waits for a GPU reset (absent: '
        'not reported, before Ampere or in MIG mode)',
    'nvidia_vgpu_gpu_remapped_rows_failure':
        '1 where a row remapping failed: no spare rows left (absent: not '
        'reported)',
}
# Per vGPU, read through NVML at each scrape (guest_metrics.py).
METRICS.update(guest_metrics.METRICS)

Document = Mapping[str, Any]


def read_facts(path: str) -> Tuple[Optional[Document], Optional[float]]:
    """The facts document and when it was written, or (None, None): a
    missing, unreadable or unknown document means no facts yet."""
    try:
        with open(path) as stream:
            mtime = os.fstat(stream.fileno()).st_mtime
            document = parse_json(stream.read())
    except (OSError, ValueError):
        return None, None
    if not isinstance(document, dict) or \
            document.get('version') != FACTS_VERSION:
        return None, None
    return document, mtime


def _gauge(name: str, labels: Sequence[str] = ()) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, METRICS[name], labels=list(labels))


def _number(value: Any) -> Optional[float]:
    """A count from the document; None for null or anything else (a bool
    is not a count)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _flag(name: str, value: Any) -> GaugeMetricFamily:
    """0/1 gauge; no sample where the document does not say."""
    family = _gauge(name)
    if isinstance(value, bool):
        family.add_metric([], 1.0 if value else 0.0)
    return family


def _text(value: Any) -> str:
    """A label value: null (not known) is empty, which Prometheus treats
    as no label."""
    return '' if value is None else str(value)


def _rows(document: Document, key: str) -> List[Mapping[str, Any]]:
    rows = document.get(key)
    return [row for row in rows if isinstance(row, dict)] \
        if isinstance(rows, list) else []


def _capacity(document: Document) -> List[Metric]:
    """Capacity, in use and free per (GPU, vGPU type) row; an unknown
    number has no sample rather than a false 0."""
    families = [_gauge('nvidia_vgpu_instances_' + what, ROW_LABELS)
                for what in ('capacity', 'in_use', 'free')]
    for row in _rows(document, 'vgpus'):
        labels = [_text(row.get(key)) for key in
                  ('gpu', 'model', 'type', 'profile')]
        for family, key in zip(families, ('capacity', 'in_use', 'free')):
            value = _number(row.get(key))
            if value is not None:
                family.add_metric(labels, value)
    return families


def _by_code(rows: List[Mapping[str, Any]]) -> Dict[str, List[Mapping]]:
    grouped: Dict[str, List[Mapping]] = {}
    for row in rows:
        grouped.setdefault(_text(row.get('code')), []).append(row)
    return grouped


def _findings(document: Document) -> List[Metric]:
    """Drift findings and waiting changes, counted by code; the guests a
    change waits for are counted (once each per code), not named; where
    this GPU host gives Nova no vGPU, or a mapped type none."""
    drift = _gauge('nvidia_vgpu_drift_findings', ['code'])
    for code, rows in sorted(_by_code(_rows(document, 'drift')).items()):
        drift.add_metric([code], float(len(rows)))
    changes = _gauge('nvidia_vgpu_waiting_changes', ['code'])
    guests = _gauge('nvidia_vgpu_waiting_guests', ['code'])
    for code, rows in sorted(_by_code(_rows(document, 'waits')).items()):
        changes.add_metric([code], float(len(rows)))
        names = {str(name) for row in rows
                 for name in (row.get('guests') or [])}
        guests.add_metric([code], float(len(names)))
    gaps = _gauge('nvidia_vgpu_offer_gaps')
    offer_gaps = document.get('offer_gaps')
    gaps.add_metric([], float(len(offer_gaps))
                    if isinstance(offer_gaps, list) else 0.0)
    return [drift, changes, guests, gaps, _status(document)]


def _status(document: Document) -> Metric:
    """The unit's status as a severity, labelled with its code (the
    message is the unit's; it is no label, to keep series bounded)."""
    family = _gauge('nvidia_vgpu_status_severity', ['code'])
    status = document.get('status')
    if isinstance(status, dict):
        level = _number(status.get('severity'))
        if level is not None:
            family.add_metric([_text(status.get('code'))], level)
    return family


def _gpu_instances(document: Document) -> List[Metric]:
    """Per GPU in MIG mode and instance size: those that exist and how
    many more fit."""
    existing = _gauge('nvidia_vgpu_gpu_instances', ['gpu', 'profile'])
    free = _gauge('nvidia_vgpu_gpu_instances_free', ['gpu', 'profile'])
    for row in _rows(document, 'gpu_instances'):
        labels = [_text(row.get('gpu')), _text(row.get('profile'))]
        for family, key in ((existing, 'existing'), (free, 'free')):
            value = _number(row.get(key))
            if value is not None:
                family.add_metric(labels, value)
    return [existing, free]


def _gpu_faults(document: Document) -> List[Metric]:
    """Each GPU's hardware faults and error counts this boot; the Xid
    label takes NVIDIA's numbers (a bounded set), the guests are
    counted."""
    read = document.get('gpu_faults')
    read = read if isinstance(read, dict) else None
    available = _gauge('nvidia_vgpu_gpu_faults_read')
    available.add_metric([], 0.0 if read is None else 1.0)
    fault = _gauge('nvidia_vgpu_gpu_fault', ['gpu', 'code'])
    guests = _gauge('nvidia_vgpu_gpu_fault_guests', ['gpu', 'code'])
    listed = _gauge('nvidia_vgpu_gpu_listed', ['gpu'])
    xids = _gauge('nvidia_vgpu_gpu_xid_events', ['gpu', 'xid'])
    counts = {key: _gauge('nvidia_vgpu_gpu_' + name, ['gpu']) for key, name
              in (('ecc_uncorrected', 'ecc_uncorrected'),
                  ('rows_pending', 'remapped_rows_pending'),
                  ('rows_failed', 'remapped_rows_failure'))}
    families = [available, fault, guests, listed, xids] + list(
        counts.values())
    if read is None:
        return families
    rows = _rows(read, 'gpus') + [{'gpu': '', 'faults': read.get(
        'host_faults')}]
    for row in rows:
        gpu = _text(row.get('gpu'))
        for found in row.get('faults') if isinstance(
                row.get('faults'), list) else []:
            if not isinstance(found, dict):
                continue
            code = _text(found.get('code'))
            level = _number(found.get('severity'))
            if level is not None:
                fault.add_metric([gpu, code], level)
                guests.add_metric([gpu, code],
                                  _number(found.get('guests')) or 0.0)
        if isinstance(row.get('listed'), bool):
            listed.add_metric([gpu], 1.0 if row['listed'] else 0.0)
        seen = row.get('xids')
        for xid, count in sorted((seen if isinstance(seen, dict)
                                  else {}).items()):
            value = _number(count)
            if str(xid).isdigit() and value is not None:
                xids.add_metric([gpu, str(xid)], value)
        for key, family in counts.items():
            value = row.get(key)
            value = float(value) if isinstance(value, bool) else \
                _number(value)
            if value is not None:
                family.add_metric([gpu], value)
    return families


def _software(document: Document) -> List[Metric]:
    """The vGPU Manager: its versions, a pending reboot, its services."""
    driver = document.get('driver')
    driver = driver if isinstance(driver, dict) else {}
    info = InfoMetricFamily('nvidia_vgpu_driver',
                            METRICS['nvidia_vgpu_driver_info'])
    versions = {key: _text(driver.get(key)) for key in
                ('package', 'installed', 'running')}
    if any(versions.values()):
        info.add_metric([], versions)
    services = _gauge('nvidia_vgpu_service_active', ['service'])
    states = document.get('services')
    for name, state in sorted((states if isinstance(states, dict)
                               else {}).items()):
        services.add_metric([name], 1.0 if state == 'active' else 0.0)
    return [info, _flag('nvidia_vgpu_reboot_required',
                        driver.get('reboot_required')), services]


def metric_families(document: Optional[Document], mtime: Optional[float],
                    now: float, hostname: str) -> List[Metric]:
    """What one scrape shows, from the document read then (None: no
    facts yet) and its mtime; pure, so tests need no HTTP."""
    host = _gauge('nvidia_vgpu_host_info', ['hostname'])
    host.add_metric([hostname], 1.0)
    available = _gauge('nvidia_vgpu_facts_available')
    available.add_metric([], 0.0 if document is None else 1.0)
    if document is None or mtime is None:
        return [available, host]
    timestamp = _gauge('nvidia_vgpu_facts_timestamp_seconds')
    timestamp.add_metric([], mtime)
    age = _gauge('nvidia_vgpu_facts_age_seconds')
    age.add_metric([], max(0.0, now - mtime))
    return ([available, timestamp, age, host] +
            [_flag('nvidia_vgpu_' + key, document.get(key))
             for key in ('gpu_host', 'healthy', 'paused')] +
            _software(document) + _capacity(document) + _findings(document) +
            _gpu_faults(document) + _gpu_instances(document))


class FactsCollector:
    """A prometheus_client collector that reads the facts at each
    scrape."""

    def __init__(self, path: str, clock: Callable[[], float] = time.time,
                 hostname: Optional[str] = None) -> None:
        self.path = path
        self.clock = clock
        self.hostname = hostname or socket.gethostname()

    def collect(self) -> Iterator[Metric]:
        document, mtime = read_facts(self.path)
        return iter(metric_families(document, mtime, self.clock(),
                                    self.hostname))


class GuestCollector:
    """The running vGPUs' figures, read through NVML at each scrape."""

    def __init__(self, reader: guest_metrics.GuestReader) -> None:
        self.reader = reader

    def collect(self) -> Iterator[Metric]:
        return iter(guest_metrics.metric_families(self.reader.read()))


def registry(path: str, guests: Optional[guest_metrics.GuestReader] = None,
             **collector_args: Any) -> CollectorRegistry:
    """A registry holding the facts and, given NVML's reader, the
    running vGPUs' figures (no process or platform metrics of this
    Python)."""
    found = CollectorRegistry()
    found.register(FactsCollector(path, **collector_args))
    if guests is not None:
        found.register(GuestCollector(guests))
    return found


def service_registry(facts: str) -> CollectorRegistry:
    """What the service serves: the facts, and the vGPUs through the
    driver's NVML (pynvml)."""
    return registry(facts, guests=guest_metrics.GuestReader())


class MetricsServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    """prometheus_client's own handler on a threaded HTTP server (one
    slow client cannot hold the scrape up); Python 3.6 has no
    http.server.ThreadingHTTPServer."""

    daemon_threads = True


def serve(address: str, port: int,
          metrics: CollectorRegistry) -> MetricsServer:
    """A bound server (port 0: any free port, see server_address);
    serve_forever() runs it."""
    return MetricsServer((address, port), MetricsHandler.factory(metrics))


def only(exposition: str, prefix: str) -> str:
    """The lines of a text exposition whose metric starts with prefix
    (its HELP, TYPE and samples)."""
    def name(line: str) -> str:
        words = line.split()
        return words[2] if line.startswith('#') and len(words) > 2 else \
            line.split('{')[0].split(' ')[0]
    return ''.join(line for line in exposition.splitlines(True)
                   if name(line).startswith(prefix))


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog='python3 -m nvidia_vgpu.monitoring.exporter',
        description='Serve the nova-compute-nvidia-vgpu charm\'s host '
        'facts as Prometheus metrics.')
    parser.add_argument('--port', type=int)
    parser.add_argument('--once', action='store_true',
                        help='print one scrape to stdout and exit')
    parser.add_argument('--only', default='', metavar='PREFIX',
                        help='with --once, only the metrics whose names '
                        'start with PREFIX')
    parser.add_argument('--address', default=DEFAULT_ADDRESS,
                        help='IPv4 address to listen on (default: '
                        '%(default)s)')
    parser.add_argument('--facts', default=host_path(FACTS_PATH),
                        help='the facts document (default: %(default)s)')
    args = parser.parse_args(argv)
    if args.once:
        sys.stdout.write(only(generate_latest(
            service_registry(args.facts)).decode(), args.only))
        return 0
    if args.port is None:
        parser.error('--port is needed unless --once')
    server = serve(args.address, args.port, service_registry(args.facts))
    server.serve_forever()
    return 0


if __name__ == '__main__':
    sys.exit(main())
