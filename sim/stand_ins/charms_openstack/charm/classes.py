"""Test double for ``charms_openstack.charm.classes.OpenStackCharm``.

Only the part of the base class that this charm relies on is here.  Each
method makes the same charmhelpers calls, in the same order, with the
same status messages as the real one, so that the hook simulator sees
the hook-tool and system-command traffic the deployed charm will make.
"""
import collections
import itertools
import re
import subprocess
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import charmhelpers.contrib.hahelpers.cluster as ch_cluster
import charmhelpers.contrib.openstack.policyd as os_policyd
import charmhelpers.contrib.openstack.utils as os_utils
import charmhelpers.core.hookenv as hookenv
import charmhelpers.core.host as ch_host
import charmhelpers.fetch as fetch
import charms.reactive as reactive

from charms_openstack.charm import core

# (workload status, message); (None, None) means "nothing to report".
_StatusPair = Tuple[Optional[str], Optional[str]]


class OpenStackCharm(object, metaclass=core.BaseOpenStackCharmMeta):
    """Base for a charm's payload operations.

    Abstract: a charm subclasses it, sets ``release`` (and usually
    ``name``, ``packages``, ``services``) and the metaclass registers it.
    """

    abstract_class = True

    release = 'icehouse'
    package_type = 'deb'
    name = 'charmname'
    packages: List[str] = []
    purge_packages: List[str] = []
    # Package read for the workload version / the release; the first of
    # ``packages`` is used for the version when unset.
    version_package = release_pkg = None
    package_codenames: Dict[str, Any] = {}
    services: List[str] = []
    restart_map: Dict[str, List[str]] = {}
    permission_override_map: Dict[str, int] = {}
    required_relations: List[str] = []
    # '' marks a charm (e.g. a subordinate) without an origin option.
    source_config_key = 'openstack-origin'
    user = 'root'
    group = 'root'
    api_ports: Dict[str, Dict[str, int]] = {}

    def __init__(self, interfaces: Optional[list] = None,
                 config: Optional[dict] = None,
                 release: Optional[str] = None) -> None:
        self.config = config or hookenv.config()
        self.release = release
        self._interfaces = interfaces or []
        self._assess_status_deferred = False

    # -- the registry's view -------------------------------------------

    @property
    def singleton(self) -> Any:
        """Same object as ``OpenStackCharm.singleton``, for convenience."""
        return type(self).singleton

    @property
    def releases_packages_map(self) -> Dict[str, Dict[str, Dict[str, list]]]:
        """What every registered class installs and purges, by release.

        Lets a charm see the packages of releases it is not running yet
        (e.g. to purge what an older release class installed).
        """
        result: Dict[str, Dict[str, Dict[str, list]]] = {}
        for release, by_type in core._releases.items():
            for package_type, cls in by_type.items():
                if package_type == 'deb':
                    lists = {'install': cls.packages,
                             'purge': cls.purge_packages}
                else:
                    lists = {'install': getattr(cls, 'snaps', []),
                             'purge': []}
                result[release] = {package_type: lists}
        return result

    # -- flags -----------------------------------------------------------

    def set_state(self, state: str, value: Any = None) -> None:
        """Kept for charms written against the pre-flags reactive API."""
        reactive.bus.set_state(state, value)

    def remove_state(self, state: str) -> None:
        """Kept for charms written against the pre-flags reactive API."""
        reactive.bus.remove_state(state)

    def get_state(self, state: str) -> Any:
        """The flag's stored value, or None when the flag is not set."""
        return reactive.bus.get_state(state)

    # -- packages --------------------------------------------------------

    @property
    def all_packages(self) -> List[str]:
        """Hook point for subclasses that add packages conditionally."""
        return self.packages

    @property
    def full_service_list(self) -> List[str]:
        """A copy, because charmhelpers may edit the list it is given."""
        return self.services[:]

    @property
    def full_restart_map(self) -> Dict[str, List[str]]:
        """Hook point for subclasses that add files conditionally."""
        return self.restart_map

    def install(self) -> None:
        """Install missing packages and mark the charm as installed.

        Status only changes when something was actually installed, to
        spare the operator needless status flapping.
        """
        missing = fetch.filter_installed_packages(self.all_packages)
        if missing:
            hookenv.status_set('maintenance', 'Installing packages')
            fetch.apt_install(missing, fatal=True)
        self.set_state('{}-installed'.format(self.name))
        self.update_api_ports()
        if missing:
            hookenv.status_set(
                'maintenance', 'Installation complete - awaiting next status')

    def remove_obsolete_packages(self) -> bool:
        """Purge those ``purge_packages`` that are installed.

        Returns whether anything was purged, so callers know to restart.
        """
        if not self.purge_packages:
            return False
        not_installed = fetch.filter_installed_packages(self.purge_packages)
        installed = list(set(self.purge_packages) - set(not_installed))
        if not installed:
            return False
        fetch.apt_purge(packages=installed, fatal=True)
        fetch.apt_autoremove(purge=True, fatal=True)
        return True

    def config_changed(self) -> None:
        """Deliberately empty: charms override it when they need to."""

    def upgrade_charm(self) -> None:
        """Bring ports and packages in line with the new charm revision."""
        self.update_api_ports()
        self.install()
        if self.remove_obsolete_packages():
            self.restart_all()

    def restart_all(self) -> None:
        """Restart every payload service, e.g. after packages changed."""
        for service in self.services:
            ch_host.service_restart(service)

    # -- resources -------------------------------------------------------

    @property
    def resource_install_map(self) -> Dict[str, Callable[[str], None]]:
        """Juju resource name -> how to install it."""
        return {'driver-deb': self.install_deb}

    def install_deb(self, deb: str) -> None:
        """Install a local .deb; its dependencies come via ``packages``."""
        subprocess.check_call(['dpkg', '-i', deb],
                              env=fetch.get_apt_dpkg_env())

    def install_resources(self) -> None:
        """Install each mapped resource the operator has attached."""
        for resource_name, installer in self.resource_install_map.items():
            path = hookenv.resource_get(resource_name)
            if path:
                installer(path)

    # -- release detection (used by the stock release selector) ----------

    def get_os_codename_package(self, package: str,
                                codenames: Dict[str, Any],
                                fatal: bool = True,
                                apt_cache_sufficient: bool = False
                                ) -> Optional[str]:
        """Work out the OpenStack release from installed software.

        The UCA ``openstack-release`` package answers directly when it can
        be installed; otherwise ``package``'s version is looked up in
        ``codenames``.  ``apt_cache_sufficient`` lets a subordinate use the
        candidate version before the principal has installed anything.
        """
        try:
            try:
                self._configure_source()
            except KeyError:
                # No origin option (subordinates): nothing to configure.
                pass
            codename = os_utils.get_installed_os_version()
            if codename:
                return codename
            version = self._package_version(package, apt_cache_sufficient)
        except Exception:
            if fatal:
                raise
            return None
        if package not in codenames:
            return None
        match = self._closest_release_match(version, codenames[package])
        return match[1] if match else None

    def _configure_source(self) -> None:
        """Add the configured origin so openstack-release can be found."""
        source, key = os_utils.get_source_and_pgp_key(
            self.config[self.source_config_key])
        fetch.add_source(source, key)
        fetch.apt_update(fatal=True)

    @staticmethod
    def _package_version(package: str, apt_cache_sufficient: bool) -> str:
        """Upstream version of ``package`` (installed, or candidate)."""
        cache = fetch.apt_cache()
        try:
            pkg = cache[package]
        except KeyError:
            raise ValueError(
                'No installation candidate for package {}'.format(package))
        if apt_cache_sufficient:
            version = fetch.apt_pkg.upstream_version(pkg.version)
        else:
            version = fetch.apt_pkg.upstream_version(
                pkg.current_ver.ver_str)
        # Date-versioned projects (2023.1 ...) are matched on year.minor.
        dated = re.match(r'^(20\d+)\.(\d+)', version)
        return dated.group(0) if dated else version

    @staticmethod
    def _closest_release_match(version: str,
                               codenames: 'collections.OrderedDict'
                               ) -> Optional[Tuple[str, str]]:
        """Newest (version prefix, release) not newer than ``version``.

        Tries the longest dotted prefix first (up to three parts) so that
        several releases sharing a major version are told apart.
        """
        hookenv.log('getting rel name for pkg ver={} from codenames={}'
                    .format(version, codenames), level=hookenv.DEBUG)
        newest_first = list(reversed(list(codenames.items())))
        parts = version.split('.')
        for width in range(min(len(parts), 3), 0, -1):
            prefix = '.'.join(parts[:width])
            for known_version, release in newest_first:
                if not known_version.startswith(prefix):
                    continue
                if fetch.apt_pkg.version_compare(known_version,
                                                 version) <= 0:
                    return known_version, release
        return None

    @property
    def application_version(self) -> Optional[str]:
        """Workload version shown by ``juju status``."""
        if not self.version_package:
            self.version_package = self.packages[0]
        version = fetch.get_upstream_version(self.version_package)
        if not version:
            version = os_utils.os_release(self.version_package)
        return version

    # -- ports -----------------------------------------------------------

    @property
    def active_api_ports(self) -> Dict[str, Dict[str, int]]:
        """``api_ports``, each prefixed with 1 when the charm moves its
        API behind TLS (``ssl_port_bump`` and flag ``ssl.enabled``)."""
        if getattr(self, 'ssl_port_bump', False) and \
                self.get_state('ssl.enabled'):
            return {service: {kind: int('1{}'.format(port))
                              for kind, port in by_kind.items()}
                    for service, by_kind in self.api_ports.items()}
        return self.api_ports

    def _default_port_list(self, ports: Dict[str, Dict[str, int]]
                           ) -> List[int]:
        """Every port in a {service: {endpoint type: port}} map, once."""
        return sorted(set(itertools.chain.from_iterable(
            by_kind.values() for by_kind in ports.values())))

    def ports_to_check(self, ports: Dict[str, Dict[str, int]]) -> List[int]:
        """Ports status checks expect open; override with [] to skip."""
        return self._default_port_list(ports)

    def update_api_ports(self, ports: Optional[Iterable[int]] = None
                         ) -> None:
        """Make Juju's opened TCP ports exactly ``ports`` (default: API).

        Ports opened by an older charm revision get closed again.
        """
        wanted = {int(p) for p in (
            ports or self._default_port_list(self.active_api_ports or {}))}
        current = {int(p) for p in self.opened_ports()}
        for port in wanted - current:
            hookenv.open_port(port)
        for port in current - wanted:
            hookenv.close_port(port)

    @staticmethod
    def opened_ports(protocol: Optional[str] = 'tcp') -> List[str]:
        """Ports Juju has open for this unit.

        With a protocol: the bare port numbers for that protocol; with
        ``None``: every ``port/protocol`` entry as Juju printed it.
        """
        wanted = protocol.lower() if protocol else ''
        output = subprocess.check_output(['opened-ports']).decode('UTF-8')
        found = []
        for entry in output.split():
            port, proto = entry.split('/')
            if not wanted:
                found.append(entry)
            elif proto.lower() == wanted:
                found.append(port)
        return found

    # -- workload status -------------------------------------------------

    def assess_status(self) -> None:
        """Work out the status once, after every handler of the hook ran.

        Handlers may call this many times; only the end state matters.
        """
        if self._assess_status_deferred:
            return
        self._assess_status_deferred = True

        def _at_hook_exit() -> None:
            hookenv.log("Running _assess_status()", level=hookenv.DEBUG)
            self._assess_status()
        hookenv.atexit(_at_hook_exit)

    def _assess_status(self) -> None:
        """Set the workload version and the first problem found, if any.

        Order matters to the operator: a paused unit says so before
        anything else, and the charm's own check comes before the generic
        relation, config and service checks.
        """
        hookenv.application_version_set(self.application_version)
        prefix = ''
        if self.config.get(os_policyd.POLICYD_CONFIG_NAME, False):
            prefix = '{} '.format(os_policyd.policyd_status_message_prefix())
        checks = (self.check_if_paused,
                  self.custom_assess_status_check,
                  self.check_interfaces,
                  self.check_mandatory_config,
                  self.check_services_running,
                  self.custom_assess_status_last_check)
        for check in checks:
            state, message = check()
            if state is not None:
                hookenv.status_set(state, prefix + message)
                return
        hookenv.status_set('active', prefix + 'Unit is ready')

    def custom_assess_status_check(self) -> _StatusPair:
        """Charm-specific check run right after the paused check."""
        return None, None

    def custom_assess_status_last_check(self) -> _StatusPair:
        """Charm-specific check run after all generic checks passed."""
        return None, None

    def check_if_paused(self) -> _StatusPair:
        """Report a paused unit, or one whose services escaped the pause."""
        return os_utils._ows_check_if_paused(
            services=self.services,
            ports=self.ports_to_check(self.active_api_ports))

    def states_to_check(self, required_relations: Optional[List[str]] = None
                        ) -> 'collections.OrderedDict[str, list]':
        """For each relation: flags to require, in order, with the status
        to show when one is missing (connected before available)."""
        if required_relations is None:
            required_relations = self.required_relations
        result: 'collections.OrderedDict[str, list]' = (
            collections.OrderedDict())
        for relation in required_relations:
            result[relation] = [
                ('{}.connected'.format(relation), 'blocked',
                 "'{}' missing".format(relation)),
                ('{}.available'.format(relation), 'waiting',
                 "'{}' incomplete".format(relation)),
            ]
        return result

    def check_interfaces(self) -> _StatusPair:
        """Worst status over the required relations, all messages joined.

        Only the first missing flag of each relation is reported.
        """
        wanted = self.states_to_check()
        if not wanted:
            return None, None
        present = reactive.bus.get_states().keys()
        status = None
        messages = []
        for _relation, checks in wanted.items():
            for flag, flag_status, message in checks:
                if flag not in present:
                    messages.append(message)
                    status = os_utils.workload_state_compare(status,
                                                             flag_status)
                    break
        if status is None:
            return None, None
        return status, ', '.join(messages)

    def check_mandatory_config(self) -> _StatusPair:
        """Block while options listed in ``mandatory_config`` are unset."""
        missing = [option for option in getattr(self, 'mandatory_config',
                                                None) or []
                   if hookenv.config(option) is None]
        if not missing:
            return None, None
        return ('blocked', 'The following mandatory config is unset: {}'
                .format(','.join(missing)))

    def check_services_running(self) -> _StatusPair:
        """Report services that should run but do not (or closed ports)."""
        services, ports = ch_cluster.get_managed_services_and_ports(
            self.services, self.ports_to_check(self.active_api_ports))
        return os_utils.ows_check_services_running(services=services,
                                                   ports=ports)

    # -- pause / resume and service control ------------------------------

    def run_pause_or_resume(self, action: str) -> None:
        """Shared body of the pause and resume actions."""
        unit_actions = {'pause': os_utils.pause_unit,
                        'resume': os_utils.resume_unit}
        services, _ports = ch_cluster.get_managed_services_and_ports(
            self.full_service_list, [])
        unit_actions[action](self.assess_status, services=services)

    def pause(self) -> None:
        """Operator-requested pause; the flag lets handlers stand down."""
        reactive.set_flag('charm.paused')
        self.run_pause_or_resume('pause')

    def resume(self) -> None:
        """Undo ``pause``."""
        reactive.clear_flag('charm.paused')
        self.run_pause_or_resume('resume')

    def series_upgrade_prepare(self) -> None:
        """pre-series-upgrade: mark the unit as upgrading (so nothing
        restarts its services meanwhile), then pause it."""
        for flag in ('charm.series-upgrading', 'charm.paused'):
            reactive.set_flag(flag)
        os_utils.set_unit_upgrading()
        self.run_pause_or_resume('pause')

    def series_upgrade_complete(self) -> None:
        """post-series-upgrade: drop every upgrade and pause mark, then
        resume the unit."""
        for flag in ('charm.series-upgrading', 'charm.paused'):
            reactive.clear_flag(flag)
        os_utils.clear_unit_paused()
        os_utils.clear_unit_upgrading()
        self.run_pause_or_resume('resume')

    def enable_services(self) -> None:
        """Charm-driven (not operator) enable + start of the services."""
        os_utils.manage_payload_services('resume', self.full_service_list)

    def disable_services(self) -> None:
        """Charm-driven (not operator) stop + disable of the services."""
        os_utils.manage_payload_services('pause', self.full_service_list)

    def restart_services(self) -> None:
        """Full stop then start, not a restart, of every service."""
        os_utils.manage_payload_services('stop', self.full_service_list)
        os_utils.manage_payload_services('start', self.full_service_list)
