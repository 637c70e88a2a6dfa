"""Test set-up shared by every unit test.

- charmhelpers 1.2.1 refuses to import charmhelpers.core.host on Debian
  (the CI image); the charm only ever runs on Ubuntu, so say so.
- charms_openstack is not on PyPI: use the stand-in in unit_tests/stand_ins
  unless the real package imports (then the same tests run against it).
- The charm layer's lib/ and reactive/ and the interface layer import as
  they do in a built charm.
"""
import os
import sys

import charmhelpers.osplatform
import pytest

charmhelpers.osplatform.get_platform = lambda: 'ubuntu'

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

try:
    import charms_openstack  # noqa: F401
    CHARMS_OPENSTACK = 'real'
except ImportError:
    sys.path.insert(0, os.path.join(HERE, 'stand_ins'))
    CHARMS_OPENSTACK = 'stand-in (unit_tests/stand_ins)'

for path in (os.path.join(REPO, 'src', 'lib'), os.path.join(REPO, 'src'),
             REPO):
    if path not in sys.path:
        sys.path.insert(0, path)


def pytest_report_header(config):
    return 'charms_openstack: {}'.format(CHARMS_OPENSTACK)


class FakeCommands:
    """Executables on PATH that answer as told and log how they were run.

    The boundary for host commands and Juju hook tools in unit tests: the
    code under test runs its real subprocess calls against these.
    """

    SCRIPT = (
        '#!{python}\n'
        'import json, os, sys\n'
        'name = os.path.basename(sys.argv[0])\n'
        'with open({log!r}, "a") as log:\n'
        '    log.write(json.dumps([name] + sys.argv[1:]) + "\\n")\n'
        'spec = json.load(open({specs!r})).get(name, {{}})\n'
        'sys.stdout.write(spec.get("stdout", ""))\n'
        'sys.stderr.write(spec.get("stderr", ""))\n'
        'sys.exit(spec.get("exit", 0))\n')

    def __init__(self, directory, monkeypatch):
        import json
        self._json = json
        self.bin = os.path.join(directory, 'bin')
        os.makedirs(self.bin)
        self.log = os.path.join(directory, 'calls.jsonl')
        self.specs = os.path.join(directory, 'specs.json')
        self._specs = {}
        self._save()
        monkeypatch.setenv('PATH', self.bin + os.pathsep +
                           os.environ.get('PATH', ''))

    def _save(self):
        with open(self.specs, 'w') as stream:
            self._json.dump(self._specs, stream)

    def set(self, name, stdout='', exit=0, stderr=''):
        """Make `name` print stdout/stderr and exit with `exit`."""
        path = os.path.join(self.bin, name)
        if not os.path.exists(path):
            with open(path, 'w') as stream:
                stream.write(self.SCRIPT.format(
                    python=sys.executable, log=self.log, specs=self.specs))
            os.chmod(path, 0o755)
        self._specs[name] = {'stdout': stdout, 'exit': exit,
                             'stderr': stderr}
        self._save()

    @property
    def calls(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as stream:
            return [self._json.loads(line) for line in stream]


@pytest.fixture
def fake_commands(tmp_path, monkeypatch):
    return FakeCommands(str(tmp_path), monkeypatch)


@pytest.fixture(autouse=True)
def isolated_host(tmp_path_factory, monkeypatch):
    """No test reads or writes this machine's host files (dpkg's database
    included) or shares Juju unit state with another test: each gets an
    empty host root and its own unitdata store."""
    import charmhelpers.core.unitdata as unitdata
    root = tmp_path_factory.mktemp('host')
    monkeypatch.setenv('NVIDIA_VGPU_HOST_ROOT', str(root))
    monkeypatch.setenv('UNIT_STATE_DB', str(root / 'unit-state.db'))
    monkeypatch.setattr(unitdata, '_KV', None)
    return root


# Issue 19: tests of the tools that run on the development machine (the
# simulator and its scenarios, the benchmarks, the docs, zaza, charmcraft,
# the per-interpreter checks) rather than on a unit. tox -e unit-<series>
# runs the rest under each series' Python (-m "not host_side"); py3 runs
# everything, and each scenario's hooks run under its series' Python.
HOST_SIDE_MODULES = {
    'test_bench', 'test_charmcraft', 'test_docs', 'test_docs_commands',
    'test_docs_status', 'test_functional_offline',
    'test_python_versions', 'test_sim_host', 'test_sim_scenario',
    'test_simulator'}
HOST_SIDE_PREFIXES = ('test_scenarios_',)


def pytest_configure(config):
    config.addinivalue_line(
        'markers', 'host_side: tests of development tools, run on the '
        'development machine\'s Python only (not per series)')


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = item.module.__name__.rsplit('.', 1)[-1]
        if module in HOST_SIDE_MODULES or module.startswith(
                HOST_SIDE_PREFIXES):
            item.add_marker(pytest.mark.host_side)
