"""The rooms of nvidia_vgpu keep to their concern, by what they import.

- host/ reads and changes the host: it imports only other host modules
  and the records (model), never a decision, so a reader can be used by
  any caller and tested against a sysfs tree alone.
- Policy (nova/, health/, the statuses, the driver's install rules)
  decides from records: no host module, no charmhelpers, no Juju, so
  every decision is tested in-process with tables.
- model holds the records and imports nothing of the charm.
Only the charm class, the actions, the driver's boot programs and the
monitoring's exporter and cos-agent wiring bring the two together.
"""
import ast
import os

import pytest

from test_layer import is_stdlib

LIB = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), 'src', 'lib', 'nvidia_vgpu')

HOST = ('host',)
POLICY = ('nova', 'health', 'status', 'vgpu_types', 'juju_commands',
          'option_text', 'mig', 'guest_words',
          'driver.software', 'driver.module_build', 'driver.sriov',
          'driver.series_upgrade', 'monitoring.report')
RECORDS = ('model', 'names')
# Programs the host runs outside the charm, from the charm's copy of the
# file alone: the standard library of the host's python3 only.
STANDALONE = ('monitoring.nagios_check',)


def _modules():
    for folder, _, files in os.walk(LIB):
        for name in sorted(files):
            if name.endswith('.py') and name != '__init__.py':
                path = os.path.join(folder, name)
                dotted = os.path.relpath(path, LIB)[:-3].replace(os.sep, '.')
                yield dotted, path


def _imports(path):
    """The modules a file imports, as dotted names."""
    with open(path) as stream:
        tree = ast.parse(stream.read(), path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update('{}.{}'.format(node.module, alias.name)
                         for alias in node.names)
    return found


def _ours(imported):
    """Our modules among the imported names, relative to nvidia_vgpu
    (packages themselves left out)."""
    prefix = 'nvidia_vgpu.'
    return {name[len(prefix):] for name in imported
            if name.startswith(prefix) and
            os.path.exists(os.path.join(
                LIB, *name[len(prefix):].split('.')) + '.py')}


def _in(module, rooms):
    return any(module == room or module.startswith(room + '.')
               for room in rooms)


MODULES = sorted(_modules())


@pytest.mark.parametrize('module,path', [
    (module, path) for module, path in MODULES if _in(module, HOST)])
def test_host_modules_import_no_policy(module, path):
    ours = _ours(_imports(path))
    assert {name for name in ours
            if not _in(name, HOST + RECORDS)} == set()


@pytest.mark.parametrize('module,path', [
    (module, path) for module, path in MODULES if _in(module, POLICY)])
def test_policy_imports_no_host_module_and_no_juju(module, path):
    imported = _imports(path)
    assert {name for name in _ours(imported) if _in(name, HOST)} == set()
    assert {name for name in imported if name.split('.')[0] in (
        'charmhelpers', 'charms', 'charms_openstack', 'subprocess')} == \
        set()


def test_the_records_import_nothing_of_the_charm():
    path = os.path.join(LIB, 'model.py')
    assert _ours(_imports(path)) == set()


def test_the_rules_can_fail():
    """A host module that imported a decision would be caught."""
    assert _in('nova.plan', POLICY) and not _in('nova.plan', HOST)
    assert _ours({'nvidia_vgpu.nova.plan'}) == {'nova.plan'}
    assert _ours({'nvidia_vgpu.host'}) == set()


def test_every_module_is_in_a_room():
    """A new module says which kind it is (or is one of the programs
    that bring them together)."""
    programs = ('driver.restore', 'driver.mig_boot', 'restore', 'state',
                'memo', 'monitoring.facts_file', 'monitoring.nrpe',
                'monitoring.upkeep', 'monitoring.exporter',
                'monitoring.cos_agent')
    assert [module for module, _ in MODULES
            if not _in(module, HOST + POLICY + RECORDS + STANDALONE +
                       programs)] == []


@pytest.mark.parametrize('module,path', [
    (module, path) for module, path in MODULES if _in(module, STANDALONE)])
def test_standalone_programs_need_only_the_standard_library(module, path):
    imported = {name.split('.')[0] for name in _imports(path)}
    assert {name for name in imported if not is_stdlib(name)} == set()
