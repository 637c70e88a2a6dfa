"""Test set-up shared by every unit test.

- charmhelpers 1.2.1 refuses to import charmhelpers.core.host on Debian
  (the CI image); the charm only ever runs on Ubuntu, so say so.
- charms_openstack is not on PyPI: use the stand-in in sim/stand_ins
  unless the real package imports (then the same tests run against it).
- The charm layer's lib/ and reactive/ and the interface layer import as
  they do in a built charm.
"""
import os
import pathlib
import sys
import tempfile

import charmhelpers.osplatform
import pytest

from fake_commands import FakeCommands

charmhelpers.osplatform.get_platform = lambda: 'ubuntu'

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

try:
    import charms_openstack  # noqa: F401
    CHARMS_OPENSTACK = 'real'
except ImportError:
    sys.path.insert(0, os.path.join(REPO, 'sim', 'stand_ins'))
    CHARMS_OPENSTACK = 'stand-in (sim/stand_ins)'

for path in (os.path.join(REPO, 'src', 'lib'), os.path.join(REPO, 'src'),
             REPO):
    if path not in sys.path:
        sys.path.insert(0, path)


def pytest_report_header(config):
    return 'charms_openstack: {}'.format(CHARMS_OPENSTACK)


@pytest.fixture
def fake_commands(tmp_path, monkeypatch):
    return FakeCommands(str(tmp_path), monkeypatch)


@pytest.fixture(scope='session')
def _host_roots(tmp_path_factory):
    """One folder for every test's host root (isolated_host)."""
    return tmp_path_factory.mktemp('hosts')


@pytest.fixture(autouse=True)
def isolated_host(_host_roots, monkeypatch):
    """No test reads or writes this machine's host files (dpkg's database
    included) or shares Juju unit state with another test: each gets an
    empty host root and its own unitdata store. (mkdtemp, not
    tmp_path_factory.mktemp: the pytest that runs on bionic's Python
    lists the whole temporary folder at each mktemp, a cost that grows
    with every test.)"""
    import charmhelpers.core.unitdata as unitdata
    root = pathlib.Path(tempfile.mkdtemp(prefix='host', dir=str(_host_roots)))
    monkeypatch.setenv('NVIDIA_VGPU_HOST_ROOT', str(root))
    monkeypatch.setenv('UNIT_STATE_DB', str(root / 'unit-state.db'))
    monkeypatch.setattr(unitdata, '_KV', None)
    return root


# Issue 19: tests of the tools that run on the development machine (the
# simulator and its scenarios, the benchmarks, the docs, zaza, charmcraft,
# the per-interpreter checks) rather than on a unit. tox -e unit-<series>
# runs the rest under each series' Python (-m "not host_side"); py3 runs
# everything (only the host-side tests within the whole suite: below),
# and each scenario's hooks run under its series' Python.
HOST_SIDE_MODULES = {
    'test_charms_openstack_api',
    'test_bench', 'test_charmcraft', 'test_code_shape', 'test_docs',
    'test_docs_commands',
    'test_docs_status', 'test_functional_offline',
    'test_python_versions', 'test_sim_exec', 'test_sim_guests',
    'test_sim_host',
    'test_sim_kernel', 'test_sim_mig', 'test_sim_mig_vfio',
    'test_sim_tool_server',
    'test_sim_scenario', 'test_simulator'}
HOST_SIDE_PREFIXES = ('test_scenarios_',)


def pytest_configure(config):
    config.addinivalue_line(
        'markers', 'host_side: tests of development tools, run on the '
        'development machine\'s Python only (not per series)')


# Tests that take a minute or more on the CI machine (a 2-core runner,
# every env at once): they start first, so that no worker is left running
# one of them alone at the end of the suite.
START_FIRST = (
    'test_bench.py::test_a_small_run_prints_every_section_and_writes_the_'
    'figures',
)


# Set by `./dev test` when it runs the whole suite: the unit-<series>
# envs beside py3 run every test that is not host_side, under each
# series' own Python, so py3 runs only the host_side ones (the same tests
# under a fifth Python would add minutes of CPU to the suite and no
# interpreter a unit has).
HOOK_SIDE_IN_SERIES_ENVS = 'TEST_HOOK_SIDE_IN_SERIES_ENVS'


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = item.module.__name__.rsplit('.', 1)[-1]
        if module in HOST_SIDE_MODULES or module.startswith(
                HOST_SIDE_PREFIXES):
            item.add_marker(pytest.mark.host_side)
    if os.environ.get(HOOK_SIDE_IN_SERIES_ENVS) and \
            not os.environ.get('SERIES'):
        elsewhere = [item for item in items
                     if item.get_closest_marker('host_side') is None]
        config.hook.pytest_deselected(items=elsewhere)
        items[:] = [item for item in items
                    if item.get_closest_marker('host_side') is not None]
    items.sort(key=lambda item: not item.nodeid.endswith(START_FIRST))
