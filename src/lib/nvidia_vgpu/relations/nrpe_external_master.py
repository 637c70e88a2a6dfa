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
from nvidia_vgpu import option_text
from nvidia_vgpu.monitoring import nagios_names, nrpe

AVAILABLE = 'nrpe-external-master.available'


def endpoint() -> Optional[Any]:
    """The endpoint while the nrpe unit is related, else None."""
    if not reactive.is_flag_set(AVAILABLE):
        return None
    return reactive.endpoint_from_flag(AVAILABLE)


def host_context(related: Optional[Any]) -> Optional[str]:
    """The nrpe unit's nagios_host_context, once it has said it (and it
    is a name: monitoring/nagios_names.py)."""
    if related is None:
        return None
    return _trusted('nagios_host_context', related.nagios_host_context(),
                    'the unit is named without it')


def update(related: Any, document: Mapping[str, Any], unit: str,
           config: Mapping[str, Any]) -> None:
    """Install the checks for this document, and tell the nrpe unit;
    nothing while a nagios option is refused (the status says which)."""
    if not nrpe.ready() or nagios_names.option_problem(config):
        return
    checks = nrpe.checks(document)
    default_name = '{}-{}'.format(nagios_names.context(config),
                                  unit.replace('/', '-'))
    changed = nrpe.install_plugin()
    changed |= nrpe.write(
        checks, _trusted('nagios_hostname', related.nagios_hostname(),
                         'the checks name the host ' + default_name)
        or default_name, nagios_names.servicegroups(config))
    _reload_if(changed)
    related.publish_monitors(nrpe.monitors(checks))


def _trusted(key: str, value: Optional[str], instead: str) -> Optional[str]:
    """A name the nrpe unit sent, or None, logged, where it is not one."""
    name = nagios_names.received(value)
    if value and name is None:
        hookenv.log('Ignored the nrpe unit\'s {} {}: not a name Nagios can '
                    'read; {}'.format(key, option_text.shown(value),
                                      instead), hookenv.WARNING)
    return name


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
