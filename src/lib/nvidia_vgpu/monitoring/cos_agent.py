"""The cos-agent relation: this host's vGPU metrics, alert rules and
dashboard for COS, through the agent subordinate on the machine:
opentelemetry-collector (Juju 3.6 or later, 22.04 and 24.04), or
grafana-agent (Juju 2.9, focal). Both read the relation alike.

While an agent is related, the charm runs the exporter
(exporter.py) as a systemd service on the metrics-port option and
publishes its scrape job with the charm's alert rules
(files/prometheus_alert_rules) and Grafana dashboard
(files/grafana_dashboards) through the interface layer
(interfaces/cos-agent). When the relation goes, so does the service.
"""
import hashlib
import os
import subprocess
from typing import Any, Optional

from nvidia_vgpu.host import systemd, templates
from nvidia_vgpu.monitoring import metrics_port

UNIT = 'nvidia-vgpu-exporter.service'
# Where the exporter listens and the agent, on the same machine, scrapes
# it; nothing else needs the host's facts.
ADDRESS = '127.0.0.1'
JOB_NAME = 'nvidia-vgpu'
METRICS_PATH = '/metrics'
# Relative to the charm's directory (src/ here).
ALERT_RULES_DIR = os.path.join('files', 'prometheus_alert_rules')
DASHBOARDS_DIR = os.path.join('files', 'grafana_dashboards')


def unit_text(python: str, lib_dir: str, port: int, digest: str) -> str:
    """The exporter's service (templates/nvidia-vgpu-exporter.service),
    run by the unit's venv Python (which has prometheus_client) with the
    charm's lib/ on its path; it reads the facts where the hooks write
    them (its default).

    It reads the facts, the charm's lib/ and the unit's venv (root's,
    under /var/lib/juju, whose modes Juju sets): so it runs as root
    without a capability, on a read-only system.

    `digest` (of the exporter's source) makes a charm upgrade that
    changes the exporter change the unit too, hence a restart onto the
    new code.
    """
    return templates.render(UNIT, {
        'digest': digest, 'lib_dir': lib_dir, 'python': python,
        'port': port, 'address': ADDRESS})


# Every module of ours the exporter service loads (unit_tests/
# test_cos_agent.py holds this to what it imports), under lib/.
EXPORTER_SOURCES = (
    'nvidia_vgpu/__init__.py', 'nvidia_vgpu/names.py',
    'nvidia_vgpu/host/__init__.py',
    'nvidia_vgpu/host/hostfs.py', 'nvidia_vgpu/monitoring/__init__.py',
    'nvidia_vgpu/monitoring/exporter.py',
    'nvidia_vgpu/monitoring/facts_file.py',
    'nvidia_vgpu/monitoring/guest_metrics.py')


def exporter_digest(lib_dir: str) -> str:
    """The first 16 hex digits of the sha256 of the exporter's sources:
    a charm upgrade that changes any of them restarts the service."""
    digest = hashlib.sha256()
    for source in EXPORTER_SOURCES:
        with open(os.path.join(lib_dir, source), 'rb') as stream:
            digest.update(stream.read())
    return digest.hexdigest()[:16]


def ensure_exporter(port: int, python: str, lib_dir: str) -> Optional[str]:
    """Install and (re)start the service where it is new or its unit
    changed (the port, the interpreter, the exporter); nothing restarts
    otherwise. Why it did not start, or None."""
    text = unit_text(python, lib_dir, port, exporter_digest(lib_dir))
    if systemd.install_unit(UNIT, text):
        try:
            # Starts it the first time, or on the new port.
            systemd.run_unit(UNIT)
        except subprocess.CalledProcessError:
            # Its scrape target stays published: the exporter-down alert
            # says it is not there.
            return '{} did not start: see journalctl -u {}'.format(UNIT,
                                                                   UNIT)
    return None


def remove_exporter() -> bool:
    """Stop and remove the service; True if it was there."""
    if not systemd.installed(UNIT):
        return False
    systemd.stop_unit(UNIT)
    return systemd.remove_unit(UNIT)


def configure(endpoint: Any, port: Any, charm_dir: str,
              python: str) -> Optional[str]:
    """Serve the metrics on this port and tell the agent where, with
    the alert rules and dashboard (the endpoint only writes what
    changed). What went wrong, or None."""
    problem = metrics_port.problem(port)
    if problem:
        return problem
    problem = ensure_exporter(port, python, os.path.join(charm_dir, 'lib'))
    endpoint.update_cos_agent(
        [endpoint.MetricsEndpoint(port, METRICS_PATH, ADDRESS, JOB_NAME)],
        alert_rules_dir=os.path.join(charm_dir, ALERT_RULES_DIR),
        dashboards_dir=os.path.join(charm_dir, DASHBOARDS_DIR))
    return problem
