"""Contract of the charms_openstack surface this charm relies on.

These tests run against whichever ``charms_openstack`` is importable: the
real library when installed, otherwise the stand-in in
``sim/stand_ins`` (see its README).  They must pass against both,
so they only use the names listed in that README and only fake what sits
outside the library: Juju hook tools (fake executables on PATH that log
their calls), package/service commands, and charmhelpers' service checks.
Flags and the unit's kv store are the real charms.reactive/unitdata ones,
in a per-test database.  unit_tests/conftest.py makes charmhelpers import
on non-Ubuntu machines and picks real library or stand-in.
"""
import collections
import json
import os
import subprocess
import sys
import textwrap
import types
from typing import Any, Dict, Iterator, List, Optional

import charmhelpers.contrib.openstack.utils as os_utils
import charmhelpers.core.hookenv as hookenv
import charmhelpers.core.host as ch_host
import charmhelpers.core.unitdata as unitdata
import charmhelpers.fetch as fetch
import charms.reactive as reactive
import pytest

import charms_openstack.bus
import charms_openstack.charm
import charms_openstack.charm.core as core
import charms_openstack.charm.defaults as defaults
from charms_openstack.charm import (
    OpenStackCharm,
    get_charm_instance,
    provide_charm_instance,
    register_os_release_selector,
    use_defaults,
)

HOOK_TOOLS = (
    'application-version-set', 'close-port', 'config-get', 'juju-log',
    'open-port', 'opened-ports', 'relation-get', 'relation-ids',
    'relation-list', 'resource-get', 'status-set',
)

# One script serves every tool: it logs its argv as a JSON line and
# prints the canned output (and exits with the canned code) for its name.
FAKE_TOOL = textwrap.dedent('''\
    #!{python}
    import json, os, sys
    name = os.path.basename(sys.argv[0])
    with open(os.environ['FAKE_HOOK_LOG'], 'a') as log:
        log.write(json.dumps([name] + sys.argv[1:]) + '\\n')
    base = os.path.join(os.environ['FAKE_HOOK_OUT'], name)
    if os.path.exists(base):
        with open(base) as out:
            sys.stdout.write(out.read())
    code = 0
    if os.path.exists(base + '.rc'):
        with open(base + '.rc') as rc:
            code = int(rc.read())
    sys.exit(code)
    ''')

DEFAULT_TOOL_OUTPUT = {
    'config-get': '{}',
    'relation-ids': '[]',
    'relation-list': '[]',
    'relation-get': '{}',
    'opened-ports': '',
}


class Juju:
    """The fake model a test runs in: hook-tool outputs and call log."""

    def __init__(self, root: str) -> None:
        self.charm_dir = os.path.join(root, 'charm')
        self.bin_dir = os.path.join(root, 'bin')
        self.out_dir = os.path.join(root, 'out')
        self.log_path = os.path.join(root, 'hook-tools.log')
        for path in (self.charm_dir, self.bin_dir, self.out_dir):
            os.makedirs(path)
        script = FAKE_TOOL.format(python=sys.executable)
        for tool in HOOK_TOOLS:
            path = os.path.join(self.bin_dir, tool)
            with open(path, 'w') as f:
                f.write(script)
            os.chmod(path, 0o755)
        for tool, output in DEFAULT_TOOL_OUTPUT.items():
            self.tool_output(tool, output)
        with open(os.path.join(self.charm_dir, 'revision'), 'w') as f:
            f.write('0\n')
        self.metadata(subordinate=False)

    def tool_output(self, tool: str, output: str, rc: int = 0) -> None:
        with open(os.path.join(self.out_dir, tool), 'w') as f:
            f.write(output)
        with open(os.path.join(self.out_dir, tool + '.rc'), 'w') as f:
            f.write(str(rc))

    def config(self, values: Dict[str, Any]) -> None:
        self.tool_output('config-get', json.dumps(values))

    def metadata(self, subordinate: bool) -> None:
        with open(os.path.join(self.charm_dir, 'metadata.yaml'), 'w') as f:
            f.write('name: test-charm\nsubordinate: {}\n'.format(
                'true' if subordinate else 'false'))
        hookenv.cache.clear()

    def calls(self, tool: Optional[str] = None) -> List[List[str]]:
        if not os.path.exists(self.log_path):
            return []
        with open(self.log_path) as f:
            entries = [json.loads(line) for line in f]
        if tool is None:
            return entries
        return [entry[1:] for entry in entries if entry[0] == tool]


@pytest.fixture(autouse=True)
def juju(tmp_path, monkeypatch) -> Iterator[Juju]:
    """Fresh registry, flags, kv store, caches and hook tools per test."""
    model = Juju(str(tmp_path))
    monkeypatch.delenv('JUJU_CHARM_DIR', raising=False)
    monkeypatch.setenv('CHARM_DIR', model.charm_dir)
    monkeypatch.setenv('UNIT_STATE_DB', str(tmp_path / 'unit-state.db'))
    monkeypatch.setenv('JUJU_UNIT_NAME', 'test-charm/0')
    monkeypatch.setenv('JUJU_HOOK_NAME', 'update-status')
    monkeypatch.setenv('FAKE_HOOK_LOG', model.log_path)
    monkeypatch.setenv('FAKE_HOOK_OUT', model.out_dir)
    monkeypatch.setenv(
        'PATH', model.bin_dir + os.pathsep + os.environ.get('PATH', ''))
    monkeypatch.setattr(unitdata, '_KV', None)
    monkeypatch.setattr(hookenv, '_cache_config', None)
    monkeypatch.setattr(os_utils, '_os_rel', None)
    hookenv.cache.clear()
    del hookenv._atexit[:]

    monkeypatch.setattr(core, '_releases', {})
    monkeypatch.setattr(core, '_singleton', None)
    monkeypatch.setattr(core, '_release_selector_function', None)
    # Extra selector hooks that only the real library has.
    for name in ('_package_type_selector_function',
                 '_get_charm_instance_function'):
        if hasattr(core, name):
            monkeypatch.setattr(core, name, None)

    yield model

    del hookenv._atexit[:]
    hookenv.cache.clear()
    if unitdata._KV is not None:
        unitdata._KV.close()


class Recorder:
    """Stand-in for a charmhelpers call that touches the system."""

    def __init__(self, result: Any = None) -> None:
        self.calls: List[tuple] = []
        self.result = result

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((args, kwargs))
        if callable(self.result):
            return self.result(*args, **kwargs)
        return self.result


def flag_set(flag: str) -> bool:
    return reactive.is_flag_set(flag)


CFG = {'openstack-origin': 'distro'}


# -- registration -------------------------------------------------------

def test_abstract_class_is_not_registered():
    class Base(OpenStackCharm):
        abstract_class = True
        release = 'queens'

    assert core._releases == {}


def test_concrete_class_is_registered_by_release_and_package_type():
    class Queens(OpenStackCharm):
        release = 'queens'

    class QueensSnap(OpenStackCharm):
        release = 'queens'
        package_type = 'snap'

    assert core._releases == {'queens': {'deb': Queens, 'snap': QueensSnap}}


def test_release_must_be_set_in_the_class_body_itself():
    class Queens(OpenStackCharm):
        release = 'queens'

    # Inheriting Queens' release is not enough: it would steal its slot.
    with pytest.raises(RuntimeError):
        class Child(Queens):
            packages = ['other']

    assert core._releases == {'queens': {'deb': Queens}}


def test_unknown_release_is_refused():
    with pytest.raises(RuntimeError):
        class Bogus(OpenStackCharm):
            release = 'not-a-release'
    assert core._releases == {}


def test_unknown_package_type_is_refused():
    with pytest.raises(RuntimeError):
        class Flatpak(OpenStackCharm):
            release = 'queens'
            package_type = 'flatpak'
    assert core._releases == {}


def test_same_release_and_package_type_twice_is_refused():
    class First(OpenStackCharm):
        release = 'queens'

    with pytest.raises(RuntimeError):
        class Second(OpenStackCharm):
            release = 'queens'

    assert core._releases == {'queens': {'deb': First}}


# -- release selection -----------------------------------------------------

def _queens_and_stein():
    class Queens(OpenStackCharm):
        release = 'queens'
        packages = ['pkg-q']

    class Stein(OpenStackCharm):
        release = 'stein'
        packages = ['pkg-s']

    return Queens, Stein


@pytest.mark.parametrize('requested, expected', [
    ('queens', 'Queens'),
    ('rocky', 'Queens'),
    ('stein', 'Stein'),
    ('yoga', 'Stein'),
])
def test_newest_class_not_newer_than_requested_release(requested, expected):
    _queens_and_stein()
    charm = get_charm_instance(release=requested, config=CFG)
    assert type(charm).__name__ == expected
    assert charm.release == requested
    assert charm.config == CFG


def test_no_release_gives_newest_class_and_release_none():
    _queens_and_stein()
    charm = get_charm_instance(config=CFG)
    assert type(charm).__name__ == 'Stein'
    assert charm.release is None


@pytest.mark.parametrize('release', ['pike', 'icehouse', 'not-a-release'])
def test_release_older_than_supported_or_unknown_is_an_error(release):
    _queens_and_stein()
    with pytest.raises(RuntimeError):
        get_charm_instance(release=release, config=CFG)


def test_no_registered_class_is_an_error():
    with pytest.raises(RuntimeError):
        get_charm_instance(release='queens', config=CFG)


NEW_RELEASES = ('zed', 'antelope', 'bobcat', 'caracal')


def _charmhelpers_releases() -> tuple:
    """charmhelpers 1.2.1's own list, even if a charm module imported
    earlier in this run has already extended the module attribute."""
    known = tuple(os_utils.OPENSTACK_RELEASES)
    return known[:known.index('yoga') + 1]


def test_releases_appended_at_run_time_are_honoured(monkeypatch):
    releases = _charmhelpers_releases() + NEW_RELEASES
    monkeypatch.setattr(os_utils, 'OPENSTACK_RELEASES', releases)
    monkeypatch.setattr(os_utils.CompareOpenStackReleases, '_list', releases)

    class Yoga(OpenStackCharm):
        release = 'yoga'

    class Antelope(OpenStackCharm):
        release = 'antelope'

    assert type(get_charm_instance('zed', config=CFG)) is Yoga
    assert type(get_charm_instance('caracal', config=CFG)) is Antelope
    assert type(get_charm_instance(config=CFG)) is Antelope


def test_appended_releases_unknown_to_comparator_sort_alphabetically(
        monkeypatch):
    # Pitfall a charm must avoid: extending only OPENSTACK_RELEASES makes
    # the release sort fall back to plain string order, so 'yoga' ranks
    # above 'antelope' and wins even for 'caracal'.
    monkeypatch.setattr(os_utils, 'OPENSTACK_RELEASES',
                        _charmhelpers_releases() + NEW_RELEASES)
    monkeypatch.setattr(os_utils.CompareOpenStackReleases, '_list',
                        _charmhelpers_releases())

    class Yoga(OpenStackCharm):
        release = 'yoga'

    class Antelope(OpenStackCharm):
        release = 'antelope'

    assert type(get_charm_instance('caracal', config=CFG)) is Yoga
    assert type(get_charm_instance(config=CFG)) is Yoga


def test_releases_packages_map_lists_every_registered_class():
    class Queens(OpenStackCharm):
        release = 'queens'
        packages = ['pkg-q']
        purge_packages = ['old-q']

    class Stein(OpenStackCharm):
        release = 'stein'
        packages = ['pkg-s']

    assert Queens(config=CFG).releases_packages_map == {
        'queens': {'deb': {'install': ['pkg-q'], 'purge': ['old-q']}},
        'stein': {'deb': {'install': ['pkg-s'], 'purge': []}},
    }


# -- singleton and selector -----------------------------------------------

def test_singleton_asks_selector_once_and_is_shared(juju):
    juju.config(CFG)
    Queens, Stein = _queens_and_stein()
    asked = []

    @register_os_release_selector
    def selector():
        asked.append(1)
        return 'rocky'

    charm = OpenStackCharm.singleton
    assert type(charm) is Queens
    assert charm.release == 'rocky'
    assert Stein.singleton is charm
    assert charm.singleton is charm
    assert core._singleton is charm
    assert asked == [1]


def test_singleton_without_selector_is_newest_class(juju):
    juju.config(CFG)
    Queens, Stein = _queens_and_stein()
    charm = OpenStackCharm.singleton
    assert type(charm) is Stein
    assert charm.release is None
    assert charm.config == CFG


def test_second_release_selector_is_refused():
    def first():
        return 'queens'

    def second():
        return 'stein'

    assert register_os_release_selector(first) is first
    with pytest.raises(RuntimeError):
        register_os_release_selector(second)
    assert core._release_selector_function is first


def test_provide_charm_instance_as_decorator(juju):
    juju.config(CFG)
    _queens_and_stein()

    @provide_charm_instance
    def handler(charm, endpoint, extra=None):
        """Doc kept."""
        return charm, endpoint, extra

    charm, endpoint, extra = handler('ep', extra=3)
    assert charm is OpenStackCharm.singleton
    assert (endpoint, extra) == ('ep', 3)
    assert handler.__name__ == 'handler'
    assert handler.__doc__ == 'Doc kept.'


def test_provide_charm_instance_as_context_manager_keeps_errors(juju):
    juju.config(CFG)
    _queens_and_stein()
    with provide_charm_instance() as charm:
        assert charm is OpenStackCharm.singleton
    with pytest.raises(ValueError):
        with provide_charm_instance():
            raise ValueError('must not be swallowed')


def test_charm_package_re_exports():
    assert charms_openstack.charm.OpenStackCharm is OpenStackCharm
    assert charms_openstack.charm.use_defaults is defaults.use_defaults
    assert charms_openstack.charm.get_charm_instance is (
        core.get_charm_instance)
    assert core.OPENSTACK_RELEASE_KEY == 'charmers.openstack-release-version'


# -- use_defaults ------------------------------------------------------------

def test_allowed_default_handlers():
    assert defaults.ALLOWED_DEFAULT_HANDLERS == [
        'charm.installed', 'amqp.connected', 'shared-db.connected',
        'identity-service.connected', 'identity-service.available',
        'config.changed', 'config.rendered', 'charm.default-select-release',
        'charm.default-select-package-type', 'update-status',
        'upgrade-charm', 'certificates.available',
        'storage-backend.connected', 'cluster.available',
    ]


@pytest.mark.parametrize('name, flag', [
    ('charm.installed', 'charms.openstack.do-default-charm.installed'),
    ('config.changed', 'charms.openstack.do-default-config.changed'),
    ('update-status', 'charms.openstack.do-default-update-status'),
    ('upgrade-charm', 'charms.openstack.do-default-upgrade-charm'),
    ('config.rendered', 'charms.openstack.do-default-config-rendered'),
    ('certificates.available',
     'charms.openstack.do-default-certificates.available'),
    ('storage-backend.connected',
     'charms.openstack.do-default-storage-backend.connected'),
    ('amqp.connected', 'charms.openstack.do-default-amqp.connected'),
    ('shared-db.connected', 'charms.openstack.do-default-shared-db.connected'),
    ('identity-service.connected',
     'charms.openstack.do-default-identity-service.connected'),
    ('identity-service.available',
     'charms.openstack.do-default-identity-service.available'),
    ('cluster.available', 'charms.openstack.do-default-cluster.available'),
])
def test_use_defaults_sets_the_layer_openstack_flag(name, flag):
    assert not flag_set(flag)
    use_defaults(name)
    assert flag_set(flag)


def test_use_defaults_refuses_unknown_name():
    with pytest.raises(RuntimeError):
        use_defaults('config.changed', 'no-such-default')
    # Names before the bad one were already applied, in order.
    assert flag_set('charms.openstack.do-default-config.changed')


class _ReleaseProbe(OpenStackCharm):
    """Records how the stock selector asks for the installed release."""

    abstract_class = True
    release_pkg = 'nova-common'
    package_codenames = {'nova-common': collections.OrderedDict(
        [('17', 'queens'), ('18', 'rocky'), ('19', 'stein')])}
    answer: Optional[str] = None
    asked: List[tuple] = []

    def get_os_codename_package(self, package, codenames, fatal=True,
                                apt_cache_sufficient=False):
        type(self).asked.append((package, codenames, apt_cache_sufficient))
        return type(self).answer


def _probe_charm(answer: Optional[str], source_config_key: str) -> type:
    class Probe(_ReleaseProbe):
        release = 'queens'

    Probe.answer = answer
    Probe.asked = []
    Probe.source_config_key = source_config_key
    return Probe


def test_default_release_selector_caches_release_for_principal(juju):
    juju.config(CFG)
    Probe = _probe_charm('rocky', 'openstack-origin')
    use_defaults('charm.default-select-release')

    assert core._release_selector_function() == 'rocky'
    assert Probe.asked == [
        ('nova-common', Probe.package_codenames, False)]
    assert unitdata.kv().get(core.OPENSTACK_RELEASE_KEY) == 'rocky'

    # Cached from now on: packages are not looked at again.
    assert core._release_selector_function() == 'rocky'
    assert len(Probe.asked) == 1


def test_default_release_selector_never_caches_for_subordinate(juju):
    juju.metadata(subordinate=True)
    juju.config({})
    unitdata.kv().set(core.OPENSTACK_RELEASE_KEY, 'queens')
    Probe = _probe_charm('stein', '')
    use_defaults('charm.default-select-release')

    assert OpenStackCharm.singleton.release == 'stein'
    # No origin option: the APT candidate version is good enough.
    assert Probe.asked == [('nova-common', Probe.package_codenames, True)]
    assert unitdata.kv().get(core.OPENSTACK_RELEASE_KEY) == 'queens'


def test_default_release_selector_falls_back_to_os_release(
        juju, monkeypatch):
    juju.metadata(subordinate=True)
    juju.config({})
    _probe_charm(None, '')
    monkeypatch.setattr(os_utils, 'get_installed_semantic_versioned_packages',
                        Recorder(['nova-common', 'python3-nova']))
    os_release = Recorder('victoria')
    monkeypatch.setattr(os_utils, 'os_release', os_release)
    use_defaults('charm.default-select-release')

    assert core._release_selector_function() == 'victoria'
    assert os_release.calls == [(('nova-common',), {'source_key': ''})]


def test_default_release_selector_twice_is_refused():
    use_defaults('charm.default-select-release')
    with pytest.raises(RuntimeError):
        use_defaults('charm.default-select-release')


def test_release_from_package_candidate_version(monkeypatch):
    class Cache(dict):
        pass

    class Pkg:
        version = '2:18.1.0-0ubuntu1'

    monkeypatch.setattr(fetch, 'apt_cache', lambda: Cache(
        {'nova-common': Pkg(), 'unmapped': Pkg()}))
    monkeypatch.setattr(os_utils, 'get_installed_os_version',
                        Recorder(None))
    apt_update = Recorder()
    monkeypatch.setattr(fetch, 'apt_update', apt_update)

    class Sub(OpenStackCharm):
        release = 'queens'
        source_config_key = ''

    codenames = {'nova-common': collections.OrderedDict(
        [('17', 'queens'), ('18', 'rocky'), ('19', 'stein')])}
    charm = Sub(config={'vgpu-device-mappings': ''})
    assert charm.get_os_codename_package(
        'nova-common', codenames, apt_cache_sufficient=True) == 'rocky'
    # Known to APT but not in the map: no answer, not an error.
    assert charm.get_os_codename_package(
        'unmapped', codenames, apt_cache_sufficient=True) is None
    # Unknown to APT: an error unless the caller says it is not fatal.
    with pytest.raises(ValueError):
        charm.get_os_codename_package('absent', codenames)
    assert charm.get_os_codename_package(
        'absent', codenames, fatal=False) is None
    # Without an origin option nothing is added to APT sources.
    assert apt_update.calls == []


def _make_class(members: Dict[str, Any]) -> type:
    """A registered charm class built from ``members``, as a class
    statement would (so the library's metaclass sees the same body)."""
    return types.new_class('Charm', (OpenStackCharm,),
                           exec_body=lambda ns: ns.update(members))


# -- assess_status -----------------------------------------------------------

def _status_charm(juju, monkeypatch, **attrs: Any) -> Any:
    juju.config(attrs.pop('config', CFG))
    monkeypatch.setattr(fetch, 'get_upstream_version',
                        Recorder('27.1.0'))
    members = dict(release='queens', name='test-charm',
                   packages=['nova-common'], services=[])
    members.update(attrs)
    return _make_class(members)()


def test_assess_status_runs_once_when_the_hook_exits(juju, monkeypatch):
    charm = _status_charm(juju, monkeypatch)
    charm.assess_status()
    charm.assess_status()
    charm.assess_status()
    assert juju.calls('status-set') == []

    hookenv._run_atexit()

    assert juju.calls('status-set') == [['active', 'Unit is ready']]
    assert juju.calls('application-version-set') == [['27.1.0']]


def test_policy_override_prefixes_the_status(juju, monkeypatch):
    charm = _status_charm(juju, monkeypatch,
                          config={'use-policyd-override': True})
    charm._assess_status()
    # No success marker in the charm directory: overrides are "broken".
    assert juju.calls('status-set') == [
        ['active', 'PO (broken): Unit is ready']]


def test_paused_unit_reports_paused_before_custom_check(juju, monkeypatch):
    charm = _status_charm(
        juju, monkeypatch,
        custom_assess_status_check=lambda self: ('blocked', 'custom'))
    os_utils.set_unit_paused()
    charm._assess_status()
    assert juju.calls('status-set') == [
        ['maintenance',
         "Paused. Use 'resume' action to resume normal service."]]


def test_custom_check_comes_before_relation_and_service_checks(
        juju, monkeypatch):
    services_check = Recorder(('blocked', 'Services not running that '
                                          'should be: svc'))
    monkeypatch.setattr(os_utils, 'ows_check_services_running',
                        services_check)
    charm = _status_charm(
        juju, monkeypatch, services=['svc'], required_relations=['amqp'],
        custom_assess_status_check=lambda self: ('blocked', 'custom'))
    charm._assess_status()
    assert juju.calls('status-set') == [['blocked', 'custom']]
    assert services_check.calls == []


def test_relation_check_reports_first_missing_flag_per_relation(
        juju, monkeypatch):
    charm = _status_charm(juju, monkeypatch,
                          required_relations=['amqp', 'nova-vgpu'])
    reactive.set_flag('nova-vgpu.connected')
    charm._assess_status()
    assert juju.calls('status-set') == [
        ['blocked', "'amqp' missing, 'nova-vgpu' incomplete"]]


def test_relation_and_config_checks_come_before_service_check(
        juju, monkeypatch):
    services_check = Recorder(('blocked', 'Services not running that '
                                          'should be: svc'))
    monkeypatch.setattr(os_utils, 'ows_check_services_running',
                        services_check)
    charm = _status_charm(juju, monkeypatch, services=['svc'],
                          required_relations=['nova-vgpu'],
                          mandatory_config=['vgpu-device-mappings'])
    charm._assess_status()
    reactive.set_flag('nova-vgpu.connected')
    reactive.set_flag('nova-vgpu.available')
    charm._assess_status()
    assert juju.calls('status-set') == [
        ['blocked', "'nova-vgpu' missing"],
        ['blocked',
         'The following mandatory config is unset: vgpu-device-mappings']]
    assert services_check.calls == []


def test_missing_mandatory_config_blocks(juju, monkeypatch):
    charm = _status_charm(juju, monkeypatch,
                          mandatory_config=['vgpu-device-mappings'])
    charm._assess_status()
    assert juju.calls('status-set') == [
        ['blocked',
         'The following mandatory config is unset: vgpu-device-mappings']]


def test_services_check_then_last_check(juju, monkeypatch):
    services_check = Recorder((None, None))
    monkeypatch.setattr(os_utils, 'ows_check_services_running',
                        services_check)
    charm = _status_charm(
        juju, monkeypatch, services=['svc'],
        custom_assess_status_last_check=lambda self: ('waiting', 'last'))
    charm._assess_status()
    assert services_check.calls == [((), {'services': ['svc'],
                                          'ports': []})]
    assert juju.calls('status-set') == [['waiting', 'last']]

    services_check.result = ('blocked', 'Services not running that should '
                                        'be: svc')
    charm._assess_status()
    assert juju.calls('status-set')[-1] == [
        'blocked', 'Services not running that should be: svc']


# -- install, ports, upgrade ------------------------------------------------

def _pkg_charm(**attrs: Any) -> Any:
    members = dict(release='queens', name='test-charm',
                   packages=['nova-common', 'pciutils'])
    members.update(attrs)
    return _make_class(members)(config=CFG)


def test_install_installs_missing_packages(juju, monkeypatch):
    monkeypatch.setattr(fetch, 'filter_installed_packages',
                        lambda pkgs: [p for p in pkgs if p != 'pciutils'])
    apt_install = Recorder()
    monkeypatch.setattr(fetch, 'apt_install', apt_install)

    _pkg_charm().install()

    assert apt_install.calls == [((['nova-common'],), {'fatal': True})]
    assert flag_set('test-charm-installed')
    assert juju.calls('status-set') == [
        ['maintenance', 'Installing packages'],
        ['maintenance', 'Installation complete - awaiting next status']]
    assert juju.calls('opened-ports') == [[]]


def test_install_with_nothing_missing_keeps_status(juju, monkeypatch):
    monkeypatch.setattr(fetch, 'filter_installed_packages', lambda p: [])
    apt_install = Recorder()
    monkeypatch.setattr(fetch, 'apt_install', apt_install)

    _pkg_charm().install()

    assert apt_install.calls == []
    assert flag_set('test-charm-installed')
    assert juju.calls('status-set') == []


def test_update_api_ports_opens_wanted_and_closes_stale(juju):
    juju.tool_output('opened-ports', '8080/tcp\n9999/tcp\n53/udp\n')
    charm = _pkg_charm(api_ports={'api': {'public': 8080, 'admin': 8081},
                                  'other': {'internal': 8081}})
    charm.update_api_ports()
    assert juju.calls('open-port') == [['8081/TCP']]
    assert juju.calls('close-port') == [['9999/TCP']]


def test_opened_ports_by_protocol(juju):
    juju.tool_output('opened-ports', '8080/tcp\n53/udp\n')
    assert OpenStackCharm.opened_ports() == ['8080']
    assert OpenStackCharm.opened_ports('UDP') == ['53']
    assert OpenStackCharm.opened_ports(None) == ['8080/tcp', '53/udp']
    assert juju.calls('opened-ports') == [[], [], []]


def _patch_purge(monkeypatch, not_installed: List[str]) -> Dict[str, Any]:
    recorders = {'apt_purge': Recorder(), 'apt_autoremove': Recorder(),
                 'apt_install': Recorder(),
                 'service_restart': Recorder(True)}
    monkeypatch.setattr(fetch, 'filter_installed_packages',
                        lambda pkgs: [p for p in pkgs if p in not_installed])
    for name in ('apt_purge', 'apt_autoremove', 'apt_install'):
        monkeypatch.setattr(fetch, name, recorders[name])
    monkeypatch.setattr(ch_host, 'service_restart',
                        recorders['service_restart'])
    return recorders


def test_upgrade_charm_purges_installed_obsolete_packages_and_restarts(
        juju, monkeypatch):
    calls = _patch_purge(monkeypatch, not_installed=['old-b'])
    charm = _pkg_charm(purge_packages=['old-a', 'old-b'],
                       services=['svc-1', 'svc-2'])
    charm.upgrade_charm()
    assert calls['apt_purge'].calls == [
        ((), {'packages': ['old-a'], 'fatal': True})]
    assert calls['apt_autoremove'].calls == [
        ((), {'purge': True, 'fatal': True})]
    assert [c[0] for c in calls['service_restart'].calls] == [
        ('svc-1',), ('svc-2',)]


def test_upgrade_charm_without_obsolete_packages_does_not_restart(
        juju, monkeypatch):
    calls = _patch_purge(monkeypatch, not_installed=['old-a'])
    charm = _pkg_charm(purge_packages=['old-a'], services=['svc-1'])
    charm.upgrade_charm()
    assert calls['apt_purge'].calls == []
    assert calls['service_restart'].calls == []


def test_install_resources_installs_attached_driver_deb(juju, monkeypatch):
    juju.tool_output('resource-get', '/var/lib/juju/res/driver.deb')
    real_check_call = subprocess.check_call
    dpkg_runs = []

    def check_call(cmd, *args, **kwargs):
        if cmd and cmd[0] == 'dpkg':
            dpkg_runs.append((cmd, kwargs.get('env')))
            return 0
        return real_check_call(cmd, *args, **kwargs)

    monkeypatch.setattr(subprocess, 'check_call', check_call)
    _pkg_charm().install_resources()
    assert juju.calls('resource-get') == [['driver-deb']]
    assert dpkg_runs == [(['dpkg', '-i', '/var/lib/juju/res/driver.deb'],
                          fetch.get_apt_dpkg_env())]


def test_install_resources_without_attachment_installs_nothing(
        juju, monkeypatch):
    juju.tool_output('resource-get', '', rc=1)
    dpkg_runs = []
    monkeypatch.setattr(subprocess, 'check_call',
                        lambda cmd, *a, **k: dpkg_runs.append(cmd))
    _pkg_charm().install_resources()
    assert dpkg_runs == []


def test_application_version_sources(monkeypatch):
    upstream = Recorder(None)
    os_release = Recorder('yoga')
    monkeypatch.setattr(fetch, 'get_upstream_version', upstream)
    monkeypatch.setattr(os_utils, 'os_release', os_release)

    assert _pkg_charm().application_version == 'yoga'
    assert upstream.calls == [(('nova-common',), {})]
    assert os_release.calls == [(('nova-common',), {})]

    upstream.result = '25.0.1'
    charm = _pkg_charm(release='rocky', version_package='nova-compute')
    assert charm.application_version == '25.0.1'
    assert upstream.calls[-1] == (('nova-compute',), {})


# -- pause / resume and services --------------------------------------------

def test_pause_and_resume(juju, monkeypatch):
    pause_unit = Recorder()
    resume_unit = Recorder()
    monkeypatch.setattr(os_utils, 'pause_unit', pause_unit)
    monkeypatch.setattr(os_utils, 'resume_unit', resume_unit)
    charm = _pkg_charm(services=['svc-1', 'svc-2'])

    charm.pause()
    assert flag_set('charm.paused')
    assert pause_unit.calls == [
        ((charm.assess_status,), {'services': ['svc-1', 'svc-2']})]

    charm.resume()
    assert not flag_set('charm.paused')
    assert resume_unit.calls == [
        ((charm.assess_status,), {'services': ['svc-1', 'svc-2']})]


def test_series_upgrade_prepare_pauses_past_pause(juju, monkeypatch):
    """pre-series-upgrade marks the unit upgrading and pauses it through
    run_pause_or_resume, not through pause() (a charm's guard there is
    not asked)."""
    pause_unit = Recorder()
    monkeypatch.setattr(os_utils, 'pause_unit', pause_unit)
    charm = _pkg_charm(services=['svc-1'])
    monkeypatch.setattr(charm, 'pause', Recorder())

    charm.series_upgrade_prepare()
    assert flag_set('charm.series-upgrading')
    assert flag_set('charm.paused')
    assert os_utils.is_unit_upgrading_set()
    assert pause_unit.calls == [
        ((charm.assess_status,), {'services': ['svc-1']})]
    assert charm.pause.calls == []


def test_series_upgrade_complete_clears_marks_and_resumes(juju, monkeypatch):
    resume_unit = Recorder()
    monkeypatch.setattr(os_utils, 'pause_unit', Recorder())
    monkeypatch.setattr(os_utils, 'resume_unit', resume_unit)
    charm = _pkg_charm(services=['svc-1'])
    charm.series_upgrade_prepare()
    os_utils.set_unit_paused()

    charm.series_upgrade_complete()
    assert not flag_set('charm.series-upgrading')
    assert not flag_set('charm.paused')
    assert not os_utils.is_unit_upgrading_set()
    assert not os_utils.is_unit_paused_set()
    assert resume_unit.calls == [
        ((charm.assess_status,), {'services': ['svc-1']})]


def test_service_control_goes_through_manage_payload_services(monkeypatch):
    manage = Recorder((True, []))
    monkeypatch.setattr(os_utils, 'manage_payload_services', manage)
    charm = _pkg_charm(services=['svc-1'])
    charm.enable_services()
    charm.disable_services()
    charm.restart_services()
    assert [c[0] for c in manage.calls] == [
        ('resume', ['svc-1']), ('pause', ['svc-1']),
        ('stop', ['svc-1']), ('start', ['svc-1'])]


def test_flag_helpers_use_reactive_flags():
    charm = _pkg_charm()
    charm.set_state('some.flag', 'value')
    assert flag_set('some.flag')
    assert charm.get_state('some.flag') == 'value'
    charm.remove_state('some.flag')
    assert not flag_set('some.flag')
    assert charm.get_state('some.flag') is None


# -- bus.discover ------------------------------------------------------------

@pytest.fixture
def fresh_modules(monkeypatch) -> Iterator[None]:
    """Hide already imported ``charm``/``plugins`` modules (the charm's own
    lib may be loaded by other tests) and forget those the test imports."""
    for name in list(sys.modules):
        if name.split('.')[0] in ('charm', 'plugins'):
            monkeypatch.delitem(sys.modules, name)
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        del sys.modules[name]


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)


CLASS_MODULE = textwrap.dedent('''\
    from charms_openstack.charm import OpenStackCharm


    class Discovered(OpenStackCharm):
        release = 'queens'
    ''')


def test_discover_imports_charm_lib_modules(juju, monkeypatch,
                                            fresh_modules):
    lib = os.path.join(juju.charm_dir, 'lib')
    top = os.path.join(lib, 'charm', 'openstack')
    # Regular packages, so they win over any namespace portion of the
    # same name elsewhere on sys.path (the repository's src/lib).
    _write(os.path.join(lib, 'charm', '__init__.py'), '')
    _write(os.path.join(top, '__init__.py'), '')
    _write(os.path.join(top, 'vgpu.py'), CLASS_MODULE)
    _write(os.path.join(top, 'sub', '__init__.py'), 'LOADED = True\n')
    _write(os.path.join(top, 'sub', 'extra.py'), 'LOADED = True\n')
    _write(os.path.join(top, 'README.md'), 'not python\n')
    _write(os.path.join(top, 'templates', 'nova.conf'), '[DEFAULT]\n')
    monkeypatch.syspath_prepend(lib)

    charms_openstack.bus.discover()

    for name in ('charm.openstack.vgpu', 'charm.openstack.sub',
                 'charm.openstack.sub.extra'):
        assert sys.modules[name].__file__.startswith(top)
    # A package's __init__.py is the package, not a module of its own.
    assert 'charm.openstack.sub.__init__' not in sys.modules
    assert [cls.__name__ for cls in core._releases['queens'].values()] == [
        'Discovered']


def test_discover_names_modules_after_search_path_parent(
        tmp_path, monkeypatch, fresh_modules):
    top = str(tmp_path / 'plugins' / 'handlers')
    _write(os.path.join(str(tmp_path), 'plugins', '__init__.py'), '')
    _write(os.path.join(top, 'one.py'), 'LOADED = True\n')
    monkeypatch.syspath_prepend(str(tmp_path))

    charms_openstack.bus.discover(search_path=top)

    assert sys.modules['plugins.handlers.one'].LOADED is True
