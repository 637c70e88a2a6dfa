"""Keep what monitoring reads current, at every hook: the facts
document for the NRPE check and the exporter, and the NRPE checks where
the nrpe subordinate is related; remove them once nothing monitors.
"""
import os
import subprocess
from typing import Any, Callable, Mapping, Optional

from charmhelpers.core import hookenv

from nvidia_vgpu import juju_commands
from nvidia_vgpu.health import verdict
from nvidia_vgpu.host import systemd
from nvidia_vgpu.monitoring import facts_file, nrpe, report


def update(read_facts: Callable[[], verdict.HostFacts],
           nrpe_endpoint: Optional[Any], cos_agent: bool,
           config: Mapping[str, Any]) -> bool:
    """Refresh the facts and the checks; False (after removing them)
    when neither NRPE nor the COS agent is related."""
    if nrpe_endpoint is None:
        _reload_if(nrpe.remove())
        if not cos_agent:
            facts_file.remove()
            return False
    unit = hookenv.local_unit()
    context = nrpe_endpoint.nagios_host_context() if nrpe_endpoint else None
    document = report.document(
        read_facts(), '{}:{}'.format(context, unit) if context else unit,
        juju_commands.action_command(os.environ.get('JUJU_VERSION'), unit,
                                     'vgpu-health'))
    facts_file.write(document)
    if nrpe_endpoint is not None and nrpe.ready():
        checks = nrpe.checks(document)
        nagios_context = config.get('nagios_context') or 'juju'
        changed = nrpe.install_plugin()
        changed |= nrpe.write(
            checks, nrpe_endpoint.nagios_hostname() or '{}-{}'.format(
                nagios_context, unit.replace('/', '-')),
            config.get('nagios_servicegroups') or nagios_context)
        _reload_if(changed)
        nrpe_endpoint.publish_monitors(nrpe.monitors(checks))
    return True


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
