"""The metrics-port option: which TCP port the vGPU metrics exporter
serves on while grafana-agent or the OpenTelemetry Collector is related.
Policy: the hook's plan refuses a wrong port in the unit's status."""
from typing import Any, Optional

OPTION = 'metrics-port'


def problem(port: Any) -> Optional[str]:
    """Why the option's value cannot be the exporter's port, or None."""
    if isinstance(port, int) and not isinstance(port, bool) and \
            0 < port < 65536:
        return None
    return ('Invalid metrics-port: {!r} is not a TCP port (1 to 65535), so '
            'the vGPU metrics are not served: set it to a free port, e.g. '
            '10320'.format(port))
