"""The charms.openstack stand-in never falls behind the real library.

Every charms_openstack name the charm (src/) and the simulator's emulated
layers (sim/) use is found with ast, not listed by hand: imports and
attribute chains of charms_openstack modules, attributes of the charm
instance that provide_charm_instance() hands out, and what the charm
class takes from its base (``self.x`` of names it does not define,
``super().x``, the members it overrides). Each must exist in the API
recorded from the pinned commit (unit_tests/data/charms_openstack_api.json,
written by ``python -m sim.charms_openstack_api``) and in the stand-in
(sim/stand_ins) with the same parameters, and calls must bind to them.
The stand-in itself may not define public names the library lacks. This
is what once let pre-series-upgrade crash only on a real model.
"""
import ast
import functools
import glob
import os
import re
from typing import Dict, Iterator, List, NamedTuple, Optional, Set, Tuple

import pytest

from sim import charms_openstack_api as api_record

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = api_record.PACKAGE
STAND_IN_README = os.path.join(REPO, 'sim', 'stand_ins', 'README.md')
RERECORD = ('re-record with `python -m sim.charms_openstack_api --repo '
            'CHECKOUT --commit SHA` if the pin moved')
FIX_STAND_IN = ('add it to sim/stand_ins/charms_openstack with the '
                'recorded parameters and to the contract table in '
                'sim/stand_ins/README.md')

CallShape = Tuple[int, Tuple[str, ...]]   # positional count, keywords


class Use(NamedTuple):
    """One use of a charms_openstack name."""

    name: str                   # dotted, e.g. ...charm.OpenStackCharm.pause
    where: str                  # file:line
    call: Optional[CallShape]   # how it is called, when it is


class CharmClass(NamedTuple):
    """A charm class of src/lib/charm/openstack and where it sits."""

    node: ast.ClassDef
    path: str
    parents: List[str]          # charm classes it derives from
    base: str                   # the charms_openstack class below them


# Read when a test runs, not at collection: unit-<series> collects this
# module under Pythons whose ast cannot unparse (then deselects it).

@functools.lru_cache(maxsize=None)
def record() -> dict:
    """The recorded API document."""
    return api_record.load_record()


def recorded() -> api_record.Api:
    return record()['modules']


def commit() -> str:
    return record()['commit'][:7]


@functools.lru_cache(maxsize=None)
def stand_in() -> api_record.Api:
    return api_record.read_api(api_record.STAND_IN)


# -- finding the uses --------------------------------------------------

def _parse(path: str) -> ast.Module:
    with open(path) as stream:
        return ast.parse(stream.read(), path)


def _where(path: str, node: ast.AST) -> str:
    return '{}:{}'.format(os.path.relpath(path, REPO), node.lineno)


def _aliases(tree: ast.Module) -> Dict[str, str]:
    """Local name -> charms_openstack dotted name, for every import."""
    found: Dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update(api_record._imports(node, '', False))
    return found


def _chain(node: ast.AST, aliases: Dict[str, str]) -> Optional[str]:
    """``a.b.c`` as a charms_openstack dotted name, if ``a`` is one."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    if any(part.startswith('__') for part in parts):
        return None
    return '.'.join([aliases[node.id]] + parts[::-1])


def _call_shape(call: ast.Call) -> Optional[CallShape]:
    """Arguments of a call, unless ``*`` or ``**`` hide how many."""
    if any(isinstance(arg, ast.Starred) for arg in call.args) or any(
            keyword.arg is None for keyword in call.keywords):
        return None
    return len(call.args), tuple(k.arg for k in call.keywords)


def module_uses(path: str) -> List[Use]:
    """Imports, attribute chains, calls and decorators naming
    charms_openstack modules and their contents."""
    tree = _parse(path)
    aliases = _aliases(tree)
    uses = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            uses += [Use(target, _where(path, node), None) for target in
                     api_record._imports(node, '', False).values()]
        elif isinstance(node, ast.Call):
            name = _chain(node.func, aliases)
            if name:
                uses.append(Use(name, _where(path, node), _call_shape(node)))
        elif isinstance(node, (ast.Attribute, ast.Name)):
            name = _chain(node, aliases)
            if name:
                uses.append(Use(name, _where(path, node), None))
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            for decorator in node.decorator_list:
                name = _chain(decorator, aliases)
                if name:
                    uses.append(Use(name, _where(path, decorator), (1, ())))
    return uses


def _instance_names(tree: ast.Module, aliases: Dict[str, str]) -> Set[str]:
    """Names bound to the charm instance: ``with provide_charm_instance()
    as NAME``, and the first parameter of a function it decorates."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.With):
            for item in node.items:
                expr = item.context_expr
                if (isinstance(expr, ast.Call) and isinstance(
                        item.optional_vars, ast.Name) and
                        (_chain(expr.func, aliases) or '').endswith(
                            '.provide_charm_instance')):
                    names.add(item.optional_vars.id)
        elif isinstance(node, ast.FunctionDef) and node.args.args and any(
                (_chain(d, aliases) or '').endswith('.provide_charm_instance')
                for d in node.decorator_list):
            names.add(node.args.args[0].arg)
    return names


def instance_uses(path: str, base: str) -> List[Use]:
    """Attributes of the charm instance (as ``base``'s members)."""
    tree = _parse(path)
    names = _instance_names(tree, _aliases(tree))
    uses = []
    for node in ast.walk(tree):
        target, shape = node, None
        if isinstance(node, ast.Call):
            target, shape = node.func, _call_shape(node)
        if (isinstance(target, ast.Attribute) and
                isinstance(target.value, ast.Name) and
                target.value.id in names and
                not target.attr.startswith('__')):
            uses.append(Use('{}.{}'.format(base, target.attr),
                            _where(path, node), shape))
    return uses


def charm_classes() -> List[CharmClass]:
    """Classes of src/lib/charm/openstack that derive from a
    charms_openstack class, directly or through another of them."""
    found: List[CharmClass] = []
    # Classes of every file so far: a class may derive from one another
    # module of the folder defines (guests_first.GuestsFirstCharm).
    known: Dict[str, CharmClass] = {}
    for path in sorted(glob.glob(os.path.join(
            REPO, 'src', 'lib', 'charm', 'openstack', '*.py'))):
        tree = _parse(path)
        aliases = _aliases(tree)
        local: Dict[str, CharmClass] = {}
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            for expr in node.bases:
                base = _chain(expr, aliases)
                name = getattr(expr, 'id', getattr(expr, 'attr', None))
                parent = local.get(name) or known.get(name)
                if base or parent:
                    local[node.name] = CharmClass(
                        node, path,
                        (parent.parents + [parent.node.name]) if parent
                        else [], base or parent.base)
                    break
        found += local.values()
        known.update(local)
    return found


def defined(node: ast.ClassDef) -> Dict[str, dict]:
    """What a charm class's own body defines, as the record describes
    members (functions with their parameters, attributes)."""
    members: Dict[str, dict] = {}
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef):
            kind = api_record.function_kind(stmt)
            members[stmt.name] = {'kind': kind}
            if kind != 'property':
                members[stmt.name]['signature'] = \
                    api_record.signature_text(stmt.args)
        for name in api_record._assigned(stmt):
            members[name] = {'kind': 'attribute'}
    for name in api_record.instance_attributes(node):
        members.setdefault(name, {'kind': 'attribute'})
    return members


def _class_member_uses(cls: CharmClass, charm_defined: Set[str],
                       by_name: Dict[str, CharmClass]) -> Iterator[Use]:
    """``self.x`` of names no charm class defines, and ``super().x`` that
    no charm parent class defines: both reach the base class."""
    parents_defined = {name for parent in cls.parents
                       for name in defined(by_name[parent].node)}
    for method in cls.node.body:
        if not isinstance(method, ast.FunctionDef) or not method.args.args:
            continue
        owner = method.args.args[0].arg
        for node in ast.walk(method):
            target, shape = node, None
            if isinstance(node, ast.Call):
                target, shape = node.func, _call_shape(node)
            if not isinstance(target, ast.Attribute) or \
                    target.attr.startswith('__'):
                continue
            value = target.value
            if isinstance(value, ast.Name) and value.id == owner and \
                    target.attr not in charm_defined:
                yield Use(cls.base + '.' + target.attr,
                          _where(cls.path, node), shape)
            elif (isinstance(value, ast.Call) and
                  isinstance(value.func, ast.Name) and
                  value.func.id == 'super' and
                  target.attr not in parents_defined):
                yield Use(cls.base + '.' + target.attr,
                          _where(cls.path, node), shape)


def overrides() -> List[Tuple[CharmClass, str, dict]]:
    """(class, name, its definition) for each member a charm class
    defines that its charms_openstack base has too."""
    found = []
    for cls in charm_classes():
        for name, entry in sorted(defined(cls.node).items()):
            if not name.startswith('__') and api_record.lookup(
                    recorded(), '{}.{}'.format(cls.base, name)):
                found.append((cls, name, entry))
    return found


def source_files() -> List[str]:
    """Files whose charms_openstack uses count: the charm layer (src/)
    and the simulator (emulated layers and all), less the stand-in and
    this record's own script."""
    paths = glob.glob(os.path.join(REPO, 'src', '**', '*.py'),
                      recursive=True) + glob.glob(
        os.path.join(REPO, 'sim', '**', '*.py'), recursive=True)
    stand_in = os.path.join(REPO, 'sim', 'stand_ins') + os.sep
    return sorted(path for path in paths if not path.startswith(stand_in)
                  and _aliases(_parse(path)))


def collect_uses() -> List[Use]:
    """Every charms_openstack name the charm and simulator use."""
    classes = charm_classes()
    bases = {cls.base for cls in classes}
    assert len(bases) == 1, bases
    base = bases.pop()
    by_name = {cls.node.name: cls for cls in classes}
    charm_defined = {name for cls in classes for name in defined(cls.node)}
    uses: List[Use] = []
    for path in source_files():
        uses += module_uses(path)
        uses += [use for use in instance_uses(path, base)
                 if use.name.rsplit('.', 1)[1] not in charm_defined]
    for cls in classes:
        uses += _class_member_uses(cls, charm_defined, by_name)
    uses += [Use('{}.{}'.format(cls.base, name),
                 _where(cls.path, cls.node), None)
             for cls, name, _entry in overrides()]
    return sorted(set(uses), key=lambda use: (use.name, use.where,
                                              str(use.call)))


@functools.lru_cache(maxsize=None)
def uses() -> List[Use]:
    return collect_uses()


# -- the checks ----------------------------------------------------------

def _describe(entry: Optional[dict]) -> str:
    if entry is None:
        return 'nothing'
    return '{} {}'.format(entry['kind'], entry.get('signature', '')).strip()


def _by_name(uses: List[Use]) -> Dict[str, str]:
    """Each used name once, with where it is used."""
    sites: Dict[str, List[str]] = {}
    for use in uses:
        if use.where not in sites.setdefault(use.name, []):
            sites[use.name].append(use.where)
    return {name: ', '.join(where) for name, where in sorted(sites.items())}


def missing_from_record(uses: List[Use]) -> List[str]:
    return ['{} (used at {}) is not in charms.openstack {}: the charm '
            'would fail on a real unit; use what the library has, or '
            '{}'.format(name, where, commit(), RERECORD)
            for name, where in _by_name(uses).items()
            if api_record.lookup(recorded(), name) is None]


def stand_in_mismatches(uses: List[Use], stand_in: api_record.Api
                        ) -> List[str]:
    """Used names the stand-in lacks or gives other parameters."""
    problems = []
    for name, where in _by_name(uses).items():
        real = api_record.lookup(recorded(), name)
        ours = api_record.lookup(stand_in, name)
        if real is not None and (
                api_record.shape(ours) != api_record.shape(real)):
            problems.append(
                'stand-in: {} (used at {}) is {} in sim/stand_ins but {} '
                'in charms.openstack {}: {}'.format(
                    name, where, _describe(ours), _describe(real),
                    commit(), FIX_STAND_IN))
    return problems


def _bind_problem(use: Use, entry: dict) -> Optional[str]:
    """Why the call of ``use`` would not bind to ``entry``, or None."""
    kind = entry['kind']
    if kind == 'class':
        init = api_record.class_members(
            recorded(), use.name).get('__init__', {'signature': '(self)'})
        text, drop = init['signature'], 1
    elif kind in ('function', 'staticmethod', 'method', 'classmethod'):
        text = entry['signature']
        drop = 1 if kind in ('method', 'classmethod') else 0
    else:
        return None
    sig = api_record.signature(text)
    sig = sig.replace(parameters=list(sig.parameters.values())[drop:])
    count, keywords = use.call
    try:
        sig.bind(*range(count), **{name: None for name in keywords})
    except TypeError as error:
        return '{} ({}) called with {} positional and keywords {} does ' \
            'not fit {}{}: {}'.format(use.name, use.where, count,
                                      list(keywords), use.name, text, error)
    return None


def override_problem(name: str, charm: dict, base: dict) -> Optional[str]:
    """Why a charm member cannot stand in for the base's, or None: data
    for data, and a method must accept every way the base's is called."""
    charm_kind, base_kind = charm['kind'], base['kind']
    if base_kind in api_record.DATA_KINDS:
        return None if charm_kind in api_record.DATA_KINDS else \
            'is a {} where the base has {}'.format(charm_kind, base_kind)
    if charm_kind != base_kind:
        return 'is a {} where the base has a {}'.format(charm_kind,
                                                        base_kind)
    ours = api_record.signature(charm['signature'])
    theirs = api_record.signature(base['signature'])
    positional = [p for p in theirs.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keywords = {p.name: None for p in theirs.parameters.values()
                if p.kind == p.KEYWORD_ONLY}
    named = {p.name: None for p in positional[1:]
             if p.kind == p.POSITIONAL_OR_KEYWORD}
    required = [p for p in positional if p.default is p.empty]
    try:
        ours.bind(*range(len(positional)), **keywords)
        ours.bind(*range(len(required)), **{
            p.name: None for p in theirs.parameters.values()
            if p.kind == p.KEYWORD_ONLY and p.default is p.empty})
        ours.bind(None, **named)
    except TypeError as error:
        return 'takes {} where the base takes {} ({})'.format(
            charm['signature'], base['signature'], error)
    return None


def stand_in_extras(stand_in: api_record.Api) -> List[str]:
    """Stand-in names the library lacks (public ones) or has otherwise
    (any): the stand-in must never teach the charm an API."""
    problems = []
    for module, names in sorted(stand_in.items()):
        for name, entry in sorted(names.items()):
            dotted = '{}.{}'.format(module, name)
            problems += _compare_defined(dotted, entry)
            if entry['kind'] == 'class':
                for member, sub in sorted(entry['members'].items()):
                    problems += _compare_defined(
                        '{}.{}'.format(dotted, member), sub)
    return problems


def _compare_defined(dotted: str, entry: dict) -> List[str]:
    if entry['kind'] == 'import':
        # A module imported to be used is no re-export.
        if entry['target'] in stand_in():
            return []
        real = api_record.lookup(recorded(), dotted)
        if real is None:
            return ['stand-in: {} re-exports a name charms.openstack {} '
                    'lacks'.format(dotted, commit())]
        return []
    real = api_record.lookup(recorded(), dotted)
    private = dotted.rsplit('.', 1)[1].startswith('_')
    if real is None:
        return [] if private else [
            'stand-in: {} is not in charms.openstack {}: remove it, or '
            'name it as the library does'.format(
                dotted, commit())]
    if api_record.shape(real) != api_record.shape(entry) and not (
            entry['kind'] == 'class' and real['kind'] == 'class'):
        return ['stand-in: {} is {} but charms.openstack {} has {}: give '
                'it the library\'s parameters'.format(
                    dotted, _describe(entry), commit(),
                    _describe(real))]
    return []


# -- tests ---------------------------------------------------------------

def test_record_is_of_the_pinned_commit():
    with open(os.path.join(REPO, 'src', 'wheelhouse.txt')) as stream:
        pins = re.findall(r'charms\.openstack(?:\.git)?@([0-9a-f]{40})',
                          stream.read())
    assert pins == [record()['commit']], (
        'src/wheelhouse.txt pins charms.openstack at {} but '
        'unit_tests/data/charms_openstack_api.json records {}: {} and '
        'fix what the tests then find'.format(
            pins, record()['commit'], RERECORD))


def test_record_is_stable_text():
    with open(api_record.RECORD) as stream:
        assert stream.read() == api_record.dumps(record())


def test_uses_are_found_where_the_charm_makes_them():
    names = {use.name for use in uses()}
    charm = 'charms_openstack.charm.OpenStackCharm.'
    assert {'charms_openstack.bus.discover',
            'charms_openstack.charm.use_defaults',
            'charms_openstack.charm.provide_charm_instance',
            'charms_openstack.charm.register_os_release_selector',
            charm + 'series_upgrade_prepare',      # the layer's hook
            charm + 'series_upgrade_complete',
            charm + '_assess_status',              # actions
            charm + 'releases_packages_map',       # subordinate layer
            charm + 'config',                      # self.config
            charm + 'check_if_paused',             # super().x()
            charm + 'custom_assess_status_check',  # override
            charm + 'source_config_key',           # class attribute
            } <= names
    assert not any(name.startswith(charm) and name[len(charm):] in (
        'ensure_vgpu_software', 'host', 'nova_plan', 'gpus')
        for name in names), 'the charm\'s own names are not the base\'s'


def test_every_used_name_is_in_charms_openstack():
    problems = missing_from_record(uses())
    assert not problems, '\n'.join(problems)


def test_every_call_fits_the_recorded_signature():
    problems = []
    for use in uses():
        entry = api_record.lookup(recorded(), use.name)
        if use.call is not None and entry is not None:
            problem = _bind_problem(use, entry)
            if problem:
                problems.append(problem + '; call it as the library says')
    assert not problems, '\n'.join(problems)


def test_the_stand_in_has_every_used_name_with_its_signature():
    problems = stand_in_mismatches(uses(), stand_in())
    assert not problems, '\n'.join(problems)


def test_charm_overrides_accept_what_the_base_takes():
    problems = []
    for cls, name, entry in overrides():
        base = api_record.lookup(recorded(), '{}.{}'.format(cls.base, name))
        problem = override_problem(name, entry, base)
        if problem:
            problems.append('{}.{} ({}) {}: accept the base\'s parameters, '
                            'as charms.openstack calls it with them'.format(
                                cls.node.name, name,
                                _where(cls.path, cls.node), problem))
    assert not problems, '\n'.join(problems)


def test_the_stand_in_adds_nothing_charms_openstack_lacks():
    problems = stand_in_extras(stand_in())
    assert not problems, '\n'.join(problems)


def test_the_stand_in_readme_lists_every_used_name():
    with open(STAND_IN_README) as stream:
        text = stream.read()
    missing: Dict[str, str] = {}
    for use in uses():
        entry = api_record.lookup(recorded(), use.name) or {}
        name = use.name if entry.get('kind') == 'module' else \
            use.name.rsplit('.', 1)[1]
        if not re.search('`{}[`(]'.format(re.escape(name)), text):
            missing.setdefault(name, use.where)
    assert not missing, (
        'sim/stand_ins/README.md does not list {}: add each to its '
        'contract table'.format(', '.join(
            '{} ({})'.format(*item) for item in sorted(missing.items()))))


# -- the checks can fail ---------------------------------------------------

def _without(stand_in: api_record.Api, module: str, cls: str,
             member: str) -> api_record.Api:
    copy = {name: dict(names) for name, names in stand_in.items()}
    entry = dict(copy[module][cls])
    entry['members'] = {k: v for k, v in entry['members'].items()
                        if k != member}
    copy[module][cls] = entry
    return copy


@pytest.mark.parametrize('member', ['series_upgrade_prepare',
                                    '_assess_status', 'pause'])
def test_a_method_missing_from_the_stand_in_fails(member):
    broken = _without(stand_in(), 'charms_openstack.charm.classes',
                      'OpenStackCharm', member)
    problems = stand_in_mismatches(uses(), broken)
    assert problems and all(
        'OpenStackCharm.{} (used at'.format(member) in p and 'README' in p
        for p in problems)


def test_other_parameters_in_the_stand_in_fail():
    broken = {name: dict(names) for name, names in stand_in().items()}
    broken['charms_openstack.bus']['discover'] = {
        'kind': 'function', 'signature': '(path=None)'}
    problems = stand_in_mismatches(uses(), broken) + stand_in_extras(broken)
    assert any('bus.discover' in p and '(search_path=None)' in p
               for p in problems)


def test_a_name_unknown_to_charms_openstack_fails():
    use = Use('charms_openstack.charm.OpenStackCharm.series_upgrade_done',
              'x.py:1', None)
    assert missing_from_record([use])


@pytest.mark.parametrize('charm, ok', [
    ('(self, ports=None)', True),
    ('(self, ports=None, extra=None)', True),
    ('(self, *args, **kwargs)', True),
    ('(self)', False),               # a caller passing ports would fail
    ('(self, ports)', False),        # a caller passing none would fail
    ('(self, port=None)', False),    # ports=... would fail
    ('(self, ports=None, *, extra)', False),
])
def test_override_check(charm, ok):
    base = {'kind': 'method', 'signature': '(self, ports=None)'}
    problem = override_problem('x', {'kind': 'method', 'signature': charm},
                               base)
    assert (problem is None) == ok, problem


def test_the_record_is_what_an_importable_library_says():
    """Where the real library is importable (PYTHONPATH at a checkout of
    the pinned commit), the record must be what it reads as."""
    try:
        import charms_openstack
    except ImportError:
        pytest.skip('charms_openstack is not importable')
    root = os.path.dirname(os.path.dirname(charms_openstack.__file__))
    if root == api_record.STAND_IN:
        pytest.skip('only the stand-in is importable')
    assert api_record.read_api(root) == recorded(), (
        'the charms_openstack in {} is not the recorded one: {}'.format(
            root, RERECORD))
