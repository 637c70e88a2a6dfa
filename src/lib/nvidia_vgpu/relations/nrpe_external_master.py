"""nrpe-external-master: the nrpe subordinate on this machine runs the
charm's checks (monitoring/nrpe.py) and tells the Nagios server of them.

Its checks read the monitoring document every hook writes; this module
installs them where the nrpe unit is there, and removes them with it.
"""
import subprocess
from typing import Any, Mapping, Optional

import charmhelpers.core.hookenv as hookenv
import charms.reactive as reactive

from nvidia_vgpu.host import systemd
from nvidia_vgpu.monitoring import nrpe

AVAILABLE = 'nrpe-external-master.available'


def endpoint() -> Optional[Any]:
    """The endpoint while the nrpe unit is related, else None."""
    if not reactive.is_flag_set(AVAILABLE):
        return None
    return reactive.endpoint_from_flag(AVAILABLE)


def host_context(related: Optional[Any]) -> Optional[str]:
    """The nrpe unit's nagios_host_context, once it has said it."""
    return related.nagios_host_context() if related is not None else None


def update(related: Any, document: Mapping[str, Any], unit: str,
           config: Mapping[str, Any]) -> None:
    """Install the checks for this document, and tell the nrpe unit."""
    if not nrpe.ready():
        return
    checks = nrpe.checks(document)
    nagios_context = config.get('nagios_context') or 'juju'
    changed = nrpe.install_plugin()
    changed |= nrpe.write(
        checks, related.nagios_hostname() or '{}-{}'.format(
            nagios_context, unit.replace('/', '-')),
        config.get('nagios_servicegroups') or nagios_context)
    _reload_if(changed)
    related.publish_monitors(nrpe.monitors(checks))


def remove() -> None:
    """The nrpe unit is gone: so are the checks."""
    _reload_if(nrpe.remove())


def _reload_if(changed: bool) -> None:
    """nagios-nrpe-server reads new checks on reload (a restart would
    fail the Nagios server's checks while it is down)."""
    if not changed:
        return
    try:
        systemd.reload(nrpe.SERVICE)
    except subprocess.CalledProcessError as error:
        hookenv.log('Could not reload {}: {}; it reads the new checks when '
                    'it next starts'.format(nrpe.SERVICE, error),
                    hookenv.WARNING)
