"""NRPE checks on the host, as charmhelpers' contrib.charmsupport.nrpe
lays them out for the nrpe subordinate (charm-nrpe) on the same machine:

- /etc/nagios/nrpe.d/check_<name>.cfg: the command nagios-nrpe-server
  runs, under a servicegroups header;
- /var/lib/nagios/export/service__<host>_check_<name>.cfg: the service
  definition the Nagios server imports, where that directory exists;
- the program itself in /usr/local/lib/nagios/plugins.

Written here rather than through charmhelpers' NRPE class, which writes
outside the host paths a test can redirect, sets relation data and
restarts nagios-nrpe-server at every call: this module writes only what
changed and says so, so a hook that changed nothing restarts nothing.
"""
import glob
import os
import shlex
from typing import Iterable, List, Mapping, NamedTuple

from nvidia_vgpu.host import templates
from nvidia_vgpu.host.hostfs import host_path, write_if_changed
from nvidia_vgpu.monitoring import facts_file, nagios_check

CONF_DIR = '/etc/nagios/nrpe.d'
EXPORT_DIR = '/var/lib/nagios/export'
PLUGIN = '/usr/local/lib/nagios/plugins/check_nvidia_vgpu'
# Every check this charm writes is named so (report.ALL_CHECKS).
PREFIX = 'check_nvidia_vgpu_'
SERVICE = 'nagios-nrpe-server'
# The templates of a check's command (CONF_DIR) and of its service
# definition for the Nagios server (EXPORT_DIR).
COMMAND_TEMPLATE = 'nrpe-command.cfg'
SERVICE_TEMPLATE = 'nagios-service.cfg'


class NrpeCheck(NamedTuple):
    """One check, as NRPE and the Nagios server see it."""

    name: str
    description: str
    command: str


def checks(document: Mapping[str, object]) -> List[NrpeCheck]:
    """The checks the monitoring document answers."""
    found = []
    for check in document['checks']:  # type: ignore
        found.append(NrpeCheck(check['name'], check['description'], ' '.join(
            shlex.quote(part) for part in (
                PLUGIN, check['name'], '--facts', facts_file.PATH,
                '--max-age', str(facts_file.MAX_AGE_SECONDS)))))
    return found


def ready() -> bool:
    """nagios-nrpe-server is installed (the nrpe subordinate installs it
    once related; until then there is nowhere to write)."""
    return os.path.isdir(host_path(CONF_DIR))


def install_plugin() -> bool:
    """Put the check program in place; True if it changed."""
    with open(nagios_check.__file__) as stream:
        changed = write_if_changed(PLUGIN, stream.read())
    os.chmod(host_path(PLUGIN), 0o755)
    return changed


def command_text(check: NrpeCheck, servicegroups: str) -> str:
    """The check's command for nagios-nrpe-server, under the header
    charm-nrpe reads its service groups from."""
    return templates.render(COMMAND_TEMPLATE, {
        'name': check.name, 'servicegroups': servicegroups,
        'command': check.command})


def service_text(check: NrpeCheck, hostname: str,
                 servicegroups: str) -> str:
    """The check's service definition, as the Nagios server imports it."""
    return templates.render(SERVICE_TEMPLATE, {
        'hostname': hostname, 'name': check.name,
        'description': check.description, 'servicegroups': servicegroups})


def write(wanted: Iterable[NrpeCheck], hostname: str,
          servicegroups: str) -> bool:
    """Write these checks and remove this charm's others; True if
    nagios-nrpe-server must reload its configuration."""
    wanted = list(wanted)
    changed = False
    for check in wanted:
        changed |= write_if_changed(_conf_path(check.name),
                                    command_text(check, servicegroups))
        if os.path.isdir(host_path(EXPORT_DIR)):
            write_if_changed(_export_path(hostname, check.name),
                             service_text(check, hostname, servicegroups))
    names = {check.name for check in wanted}
    for path in _ours(CONF_DIR, PREFIX + '*.cfg'):
        if os.path.basename(path)[len('check_'):-len('.cfg')] not in names:
            os.remove(path)
            changed = True
    exported = {host_path(_export_path(hostname, name)) for name in names}
    for path in _ours(EXPORT_DIR, 'service__*_' + PREFIX + '*.cfg'):
        if path not in exported:
            os.remove(path)
    return changed


def remove() -> bool:
    """The nrpe relation is gone: leave no check of ours behind; True if
    nagios-nrpe-server must reload."""
    changed = write([], '', '')
    if os.path.exists(host_path(PLUGIN)):
        os.remove(host_path(PLUGIN))
    return changed


def monitors(wanted: Iterable[NrpeCheck]) -> Mapping[str, object]:
    """What the nrpe subordinate reads from the relation to tell the
    Nagios server which checks this host answers."""
    return {'monitors': {'remote': {'nrpe': {
        check.name: {'command': 'check_' + check.name}
        for check in wanted}}}}


def _conf_path(name: str) -> str:
    return '{}/check_{}.cfg'.format(CONF_DIR, name)


def _export_path(hostname: str, name: str) -> str:
    return '{}/service__{}_check_{}.cfg'.format(EXPORT_DIR, hostname, name)


def _ours(directory: str, pattern: str) -> List[str]:
    return sorted(glob.glob(os.path.join(host_path(directory), pattern)))
