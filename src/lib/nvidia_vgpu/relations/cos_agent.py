"""cos-agent: opentelemetry-collector (Juju 3.6 or later, 22.04 and
24.04) or grafana-agent (Juju 2.9, focal) scrapes the charm's metrics
exporter and takes its alert rules and dashboard (monitoring/cos_agent.py
serves them)."""
import sys
from typing import Any, Mapping, Optional

import charmhelpers.core.hookenv as hookenv
import charms.reactive as reactive

from nvidia_vgpu.monitoring import cos_agent, metrics_port

AVAILABLE = 'cos-agent.available'
CONNECTED = 'cos-agent.connected'
EXPORTER_FLAG = 'nova-compute-nvidia-vgpu.exporter'


def related() -> bool:
    """Whether an agent takes the metrics now."""
    return reactive.is_flag_set(AVAILABLE)


def endpoint() -> Optional[Any]:
    """The endpoint while an agent takes the metrics, else None."""
    return reactive.endpoint_from_flag(AVAILABLE) if related() else None


class CosAgent:
    """Serves the metrics while an agent takes them."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = config

    def configure(self) -> None:
        """Serve the host's vGPU facts to Prometheus and tell the agent
        where, with the alert rules and dashboard."""
        problem = cos_agent.configure(
            endpoint(), self.config.get(metrics_port.OPTION),
            hookenv.charm_dir(), sys.executable)
        if problem:   # the unit's status says a wrong port too
            hookenv.log(problem, level=hookenv.WARNING)
        reactive.set_flag(EXPORTER_FLAG)

    @staticmethod
    def remove() -> None:
        """The agent is gone: stop serving the metrics."""
        cos_agent.remove_exporter()
        reactive.clear_flag(EXPORTER_FLAG)
