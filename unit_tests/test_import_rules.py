"""The rooms of nvidia_vgpu are layered: a module imports only from its
own layer and the layers below it (LAYERS, lowest first).

- names: the names every room shares (names.py), standard library only,
  so that host/ and the boot programs the host's python3 runs use them.
- records: model, the records every room hands the others.
- host: reads and changes the host; never a decision, so a reader can
  be used by any caller and tested against a sysfs tree alone.
- policy, in this order: the shared wording and option text; mig/ and
  the driver's rules (independent of each other); nova/; health/; the
  statuses and the monitoring report. Policy decides from records: no
  host module, no charmhelpers, no Juju, no subprocess, so every
  decision is tested in-process with tables.
- programs: the modules that bring host and policy together (PROGRAMS,
  each with why it is one).

And no two packages import each other by any path: a cycle between two
packages fails even where both sit in one layer.
"""
import ast
import os
from typing import Dict, List, Mapping, Set, Tuple

import pytest

from test_layer import is_stdlib

LIB = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), 'src', 'lib', 'nvidia_vgpu')

# The modules that are neither host nor policy, and why each may import
# from every layer below it.
PROGRAMS = {
    'driver.restore': "the restore boot unit's program: recreates guests' "
                      "vGPUs at boot from sysfs, libvirt's definitions and "
                      "the charm's records",
    'driver.mig_boot': "the MIG boot units' program: runs nvidia-smi at "
                       "boot from the charm's record of mig-layout",
    'restore': 'the stable entry point every charm version wrote into the '
               'restore unit (python3 -m nvidia_vgpu.restore)',
    'state': "what the unit remembers between hooks, in Juju's unitdata "
             '(charmhelpers)',
    'monitoring.facts_file': 'writes the facts document every hook leaves '
                             'for NRPE and the exporter (host files)',
    'monitoring.nrpe': "writes NRPE's check definitions and installs the "
                       'check program on the host',
    'apply': "the hook context and the collaborators that carry out the "
             "hook's plan: they read and change the host (host/) and "
             "Juju's state (hookenv, charms.reactive)",
    'relations': "one module per relation: charms.reactive's endpoints, "
                 'what the charm reads from them and sets on them',
    'monitoring.guest_metrics': "the exporter's per-vGPU figures, read "
                                'through the driver\'s NVML (pynvml), in '
                                'the exporter service only',
    'monitoring.exporter': "the Prometheus exporter service, under the "
                           "unit's venv (prometheus_client), reading the "
                           'facts file',
    'monitoring.cos_agent': "the exporter's systemd unit and what "
                            'the COS agent is given',
    'monitoring.nagios_check': "the NRPE check program, copied alone to "
                               "the host and run by its python3: it "
                               'imports none of ours (test_boot_programs)',
}
HOST_LAYER = 'host'
# Lowest first: (layer, its rooms). A room is a module or a package,
# dotted from nvidia_vgpu; a module is in its longest room.
LAYERS: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ('names', ('names',)),
    ('records', ('model',)),
    (HOST_LAYER, ('host',)),
    ('wording', ('option_text', 'juju_commands', 'guest_words',
                 'vgpu_types')),
    ('mig and the driver rules', ('mig', 'driver')),
    ('nova', ('nova',)),
    ('health', ('health',)),
    ('statuses and reports', ('status', 'monitoring.report',
                              'monitoring.metrics_port',
                              'monitoring.nagios_names',
                              'monitoring.severity')),
    ('the hook plan', ('hook_plan',)),
    ('programs', tuple(PROGRAMS)),
)
POLICY = tuple(name for name, _ in LAYERS[3:-1])
NOT_IN_POLICY = ('charmhelpers', 'charms', 'charms_openstack', 'subprocess')

Graph = Mapping[str, Set[str]]


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


def layer_of(module: str) -> str:
    """The layer of the longest room that holds the module; '' if
    none."""
    found = [(len(room), layer) for layer, rooms in LAYERS
             for room in rooms if _in(module, (room,))]
    return max(found)[1] if found else ''


def _rank(layer: str) -> int:
    return [name for name, _ in LAYERS].index(layer)


def upward_imports(graph: Graph) -> List[Tuple[str, str]]:
    """(module, what it imports) for each import from a higher layer."""
    return sorted((module, imported) for module, imports in graph.items()
                  for imported in imports
                  if _rank(layer_of(imported)) > _rank(layer_of(module)))


def package_cycles(graph: Graph) -> List[List[str]]:
    """The packages (first part of a dotted name) that reach each other
    through imports, each such group sorted."""
    edges: Dict[str, Set[str]] = {}
    for module, imports in graph.items():
        package = module.split('.')[0]
        edges.setdefault(package, set()).update(
            name.split('.')[0] for name in imports
            if name.split('.')[0] != package)
    reach = {package: _reachable(package, edges) for package in edges}
    groups = {tuple(sorted({package} | {other for other in reach[package]
                                        if package in reach.get(other, ())}))
              for package in edges if package in reach[package]}
    return sorted(list(group) for group in groups)


def _reachable(start: str, edges: Mapping[str, Set[str]]) -> Set[str]:
    seen: Set[str] = set()
    todo = list(edges.get(start, ()))
    while todo:
        package = todo.pop()
        if package not in seen:
            seen.add(package)
            todo.extend(edges.get(package, ()))
    return seen


MODULES = sorted(_modules())
GRAPH = {module: _ours(_imports(path)) for module, path in MODULES}


def test_every_module_has_a_layer():
    """A new module says which kind it is (or, among PROGRAMS, why it
    is one that brings them together)."""
    assert [module for module, _ in MODULES if not layer_of(module)] == []


@pytest.mark.parametrize('module', sorted(GRAPH))
def test_a_module_imports_only_its_layer_and_those_below(module):
    assert upward_imports({module: GRAPH[module]}) == []


def test_no_two_packages_import_each_other():
    assert package_cycles(GRAPH) == []


@pytest.mark.parametrize('module,path', [
    (module, path) for module, path in MODULES
    if layer_of(module) in POLICY])
def test_policy_imports_no_host_module_and_no_juju(module, path):
    imported = _imports(path)
    assert {name for name in _ours(imported)
            if layer_of(name) == HOST_LAYER} == set()
    assert {name for name in imported
            if name.split('.')[0] in NOT_IN_POLICY} == set()


@pytest.mark.parametrize('module,path', [
    (module, path) for module, path in MODULES
    if layer_of(module) in ('names', 'records')])
def test_the_names_and_records_need_only_the_standard_library(module, path):
    """What host/ and the boot programs import under the host's own
    python3 (test_boot_programs.py runs them)."""
    imported = {name.split('.')[0] for name in _imports(path)}
    assert {name for name in imported
            if not is_stdlib(name) and name != 'nvidia_vgpu'} == set()


def test_each_program_exists_and_says_why_it_is_one():
    for module, reason in PROGRAMS.items():
        path = os.path.join(LIB, *module.split('.'))
        assert os.path.exists(path + '.py') or os.path.exists(
            os.path.join(path, '__init__.py')), module
        assert isinstance(reason, str) and reason.strip(), module


def test_every_room_is_declared_once():
    rooms = [room for _, layer in LAYERS for room in layer]
    assert len(rooms) == len(set(rooms))


def test_the_rules_can_fail():
    """A cycle between two packages is caught: across layers as an
    upward import, within one layer as a package cycle."""
    across = {'nova.profiles': {'mig.layout'},
              'mig.layout': {'nova.mappings'}}
    assert upward_imports(across) == [('mig.layout', 'nova.mappings')]
    assert package_cycles(across) == [['mig', 'nova']]
    within = {'monitoring.nrpe': {'driver.restore'},
              'driver.restore': {'monitoring.facts_file'}}
    assert upward_imports(within) == []
    assert package_cycles(within) == [['driver', 'monitoring']]
    assert upward_imports({'host.pci': {'nova.mappings'}}) == [
        ('host.pci', 'nova.mappings')]
    assert layer_of('nova.plan') == 'nova'
    assert layer_of('driver.restore') == 'programs'
    assert layer_of('monitoring.report') == 'statuses and reports'
    assert _ours({'nvidia_vgpu.nova.plan'}) == {'nova.plan'}
    assert _ours({'nvidia_vgpu.host'}) == set()
