"""charms.openstack's API as data: names and signatures, nothing else.

charms.openstack is not on PyPI, so the unit tests and the simulator run
against a stand-in (sim/stand_ins). A stand-in that lacks a name the charm
uses, or takes other parameters, passes every test and fails only on a
real model (as the pre-series-upgrade hook once did). So the real API at
the commit src/wheelhouse.txt pins is recorded here as data, and
unit_tests/test_charms_openstack_api.py holds the charm, the simulator's
emulated layers and the stand-in to it.

    python -m sim.charms_openstack_api --repo CHECKOUT [--commit SHA]

reads CHECKOUT/charms_openstack/**/*.py with ast and writes
unit_tests/data/charms_openstack_api.json: per module its functions,
classes (bases, metaclass; methods, properties, static and class methods,
class and instance attributes), variables and the imports of
charms_openstack names, each function's parameters as text. No code,
docstring or comment of the library is kept. CHECKOUT may also be a git
directory: then --commit is taken from it with ``git archive``.

    python -m sim.charms_openstack_api --repo CHECKOUT --compare [SCENARIO..]

runs scenarios (by default those with a series upgrade or a pause,
resume or restart-services action) once against the stand-in and once
against the real library in CHECKOUT, and prints each difference in
their JSON outputs; exit status 1 when there is one.
"""
import argparse
import ast
import glob
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Dict, Iterator, List, Optional, Tuple

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORD = os.path.join(REPO_ROOT, 'unit_tests', 'data',
                      'charms_openstack_api.json')
STAND_IN = os.path.join(REPO_ROOT, 'sim', 'stand_ins')
PACKAGE = 'charms_openstack'
SOURCE = 'https://opendev.org/openstack/charms.openstack'
# Members that behave as data when read from an instance.
DATA_KINDS = ('attribute', 'property', 'variable')
Api = Dict[str, Dict[str, dict]]   # module -> name -> entry


# -- reading a package's API with ast -----------------------------------

def read_api(root: str) -> Api:
    """The API of the ``charms_openstack`` package found under ``root``
    (a checkout of charms.openstack, or the stand-in's directory)."""
    top = os.path.join(root, PACKAGE)
    api: Api = {}
    for path in sorted(glob.glob(os.path.join(top, '**', '*.py'),
                                 recursive=True)):
        module = _module_name(root, path)
        with open(path) as stream:
            tree = ast.parse(stream.read(), path)
        api[module] = _module_api(tree, module,
                                  path.endswith('__init__.py'))
    return api


def _module_name(root: str, path: str) -> str:
    parts = os.path.relpath(path, root)[:-len('.py')].split(os.sep)
    if parts[-1] == '__init__':
        parts.pop()
    return '.'.join(parts)


def _flat(body: List[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of a body, those under if/try/with included: a name a
    module defines only on some Pythons is still part of it."""
    for node in body:
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            for part in ('body', 'orelse', 'finalbody'):
                yield from _flat(getattr(node, part, []))
            for handler in getattr(node, 'handlers', []):
                yield from _flat(handler.body)
        else:
            yield node


def _assigned(node: ast.stmt) -> List[str]:
    """Plain names an assignment binds (tuples and chains included)."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign):
        targets = [node.target]
    else:
        return []
    names: List[str] = []
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name):
                names.append(sub.id)
    return names


def _imports(node: ast.stmt, module: str, package: bool) -> Dict[str, str]:
    """Local name -> dotted target, for imports of charms_openstack names
    (other packages' names are not this library's API)."""
    found = {}
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split('.')[0] == PACKAGE:
                local = alias.asname or alias.name.split('.')[0]
                found[local] = alias.name if alias.asname else PACKAGE
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ''
        if node.level:
            parts = module.split('.')
            keep = len(parts) - node.level + (1 if package else 0)
            base = '.'.join(parts[:keep] + ([base] if base else []))
        if base.split('.')[0] == PACKAGE:
            for alias in node.names:
                found[alias.asname or alias.name] = base + '.' + alias.name
    return found


def _module_api(tree: ast.Module, module: str, package: bool) -> dict:
    names: Dict[str, dict] = {}
    imports: Dict[str, str] = {}
    for node in _flat(tree.body):
        imports.update(_imports(node, module, package))
    for local, target in imports.items():
        names[local] = {'kind': 'import', 'target': target}
    scope = dict(imports)
    scope.update({node.name: '{}.{}'.format(module, node.name)
                  for node in _flat(tree.body)
                  if isinstance(node, ast.ClassDef)})
    for node in _flat(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names[node.name] = {'kind': 'function',
                                'signature': signature_text(node.args)}
        elif isinstance(node, ast.ClassDef):
            names[node.name] = _class_api(node, module, scope)
        for name in _assigned(node):
            names[name] = {'kind': 'variable'}
    return names


def signature_text(args: ast.arguments) -> str:
    """Parameters as source text: names, defaults as written (normalised
    by ast), ``/``, ``*``, ``*args``, ``**kwargs``; no annotations, which
    the stand-in has and the library does not."""
    def one(arg: ast.arg, default: Optional[ast.expr]) -> str:
        if default is None:
            return arg.arg
        return '{}={}'.format(arg.arg, ast.unparse(default))

    positional = args.posonlyargs + args.args
    defaults: List[Optional[ast.expr]] = (
        [None] * (len(positional) - len(args.defaults)) + args.defaults)
    parts = [one(arg, default) for arg, default in zip(positional, defaults)]
    if args.posonlyargs:
        parts.insert(len(args.posonlyargs), '/')
    if args.vararg:
        parts.append('*' + args.vararg.arg)
    elif args.kwonlyargs:
        parts.append('*')
    parts += [one(arg, default)
              for arg, default in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg:
        parts.append('**' + args.kwarg.arg)
    return '({})'.format(', '.join(parts))


def function_kind(node: ast.FunctionDef) -> str:
    """How a class exposes a function: ``property`` (also a setter, and
    any ``*cached_property``), ``staticmethod``, ``classmethod`` or
    ``method``."""
    for decorator in node.decorator_list:
        text = ast.unparse(decorator)
        last = text.split('.')[-1]
        if last in ('setter', 'getter', 'deleter') or \
                last.endswith('property'):
            return 'property'
        if text in ('staticmethod', 'classmethod'):
            return text
    return 'method'


def _class_api(node: ast.ClassDef, module: str,
               scope: Dict[str, str]) -> dict:
    members: Dict[str, dict] = {}
    for stmt in _flat(node.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            kind = function_kind(stmt)
            entry = {'kind': kind}
            if kind != 'property':
                entry['signature'] = signature_text(stmt.args)
            members[stmt.name] = entry
        elif isinstance(stmt, ast.ClassDef):
            members[stmt.name] = {'kind': 'class'}
        for name in _assigned(stmt):
            members[name] = {'kind': 'attribute'}
    for name in instance_attributes(node):
        members.setdefault(name, {'kind': 'attribute'})
    entry = {'kind': 'class', 'members': members,
             'bases': [_resolve_local(base, module, scope)
                       for base in node.bases]}
    for keyword in node.keywords:
        if keyword.arg == 'metaclass':
            entry['metaclass'] = _resolve_local(keyword.value, module,
                                                scope)
    return entry


def instance_attributes(node: ast.ClassDef) -> List[str]:
    """Names a class's methods assign on their first parameter (``self.x
    = ...``): instance attributes such as ``config``. Name-mangled
    ``__x`` ones are private to the class and left out."""
    found = []
    for stmt in node.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = stmt.args.posonlyargs + stmt.args.args
        if not params:
            continue
        owner = params[0].arg
        for sub in ast.walk(stmt):
            if (isinstance(sub, ast.Attribute) and
                    isinstance(sub.ctx, ast.Store) and
                    isinstance(sub.value, ast.Name) and
                    sub.value.id == owner and
                    not sub.attr.startswith('__')):
                found.append(sub.attr)
    return sorted(set(found))


def _resolve_local(expr: ast.expr, module: str,
                   scope: Dict[str, str]) -> str:
    """Dotted name of a base class as the module sees it: one of its own
    classes or an imported charms_openstack name (both in ``scope``), or
    the text (``object``, ``type``)."""
    text = ast.unparse(expr)
    head, _, rest = text.partition('.')
    if head in scope:
        return scope[head] + ('.' + rest if rest else '')
    return text


# -- looking names up in a recorded API --------------------------------

def lookup(api: Api, dotted: str, _seen: Tuple[str, ...] = ()
           ) -> Optional[dict]:
    """The entry for a dotted name, following imports and class bases:
    ``charms_openstack.charm.OpenStackCharm.install`` finds the method
    its base class in ``core`` defines. A module gives ``{'kind':
    'module'}``; an unknown name None."""
    if dotted in api:
        return {'kind': 'module'}
    if dotted in _seen:
        return None
    parts = dotted.split('.')
    for cut in range(len(parts) - 1, 0, -1):
        module = '.'.join(parts[:cut])
        if module in api:
            break
    else:
        return None
    entry = api[module].get(parts[cut])
    rest = parts[cut + 1:]
    if entry is None:
        return None
    if entry['kind'] == 'import':
        return lookup(api, '.'.join([entry['target']] + rest),
                      _seen + (dotted,))
    if not rest:
        return entry
    if entry['kind'] != 'class' or len(rest) > 1:
        return None
    return class_members(api, '.'.join(parts[:cut + 1])).get(rest[0])


def class_members(api: Api, dotted: str) -> Dict[str, dict]:
    """Every member a class has, its own and inherited (bases outside
    the package add nothing), in method resolution order."""
    merged: Dict[str, dict] = {}
    for cls in mro(api, dotted):
        for name, entry in lookup(api, cls)['members'].items():
            merged.setdefault(name, entry)
    return merged


def mro(api: Api, dotted: str) -> List[str]:
    """C3 linearisation of a class of the package (dotted names)."""
    entry = lookup(api, dotted)
    if entry is None or entry['kind'] != 'class':
        return []
    canonical = _canonical(api, dotted)
    bases = [_canonical(api, base) for base in entry['bases']
             if (lookup(api, base) or {}).get('kind') == 'class']
    sequences = [mro(api, base) for base in bases] + [bases]
    result = [canonical]
    while any(sequences):
        for seq in sequences:
            head = seq[0] if seq else None
            if head and not any(head in s[1:] for s in sequences):
                break
        else:
            raise ValueError('no consistent MRO for {}'.format(dotted))
        result.append(head)
        sequences = [s[1:] if s and s[0] == head else s for s in sequences]
    return result


def _canonical(api: Api, dotted: str) -> str:
    """Where a name is defined, not re-exported."""
    parts = dotted.split('.')
    for cut in range(len(parts) - 1, 0, -1):
        module = '.'.join(parts[:cut])
        if module in api:
            entry = api[module].get(parts[cut], {})
            if entry.get('kind') == 'import':
                return _canonical(api, '.'.join(
                    [entry['target']] + parts[cut + 1:]))
            return dotted
    return dotted


def signature(text: str) -> inspect.Signature:
    """An ``inspect.Signature`` of recorded parameter text, to bind a
    call's arguments against (defaults stand as their source text)."""
    args = ast.parse('def f{}: pass'.format(text)).body[0].args
    kinds = inspect.Parameter
    params = []
    positional = args.posonlyargs + args.args
    defaults = [kinds.empty] * (len(positional) - len(args.defaults)) + [
        ast.unparse(d) for d in args.defaults]
    for index, (arg, default) in enumerate(zip(positional, defaults)):
        kind = (kinds.POSITIONAL_ONLY if index < len(args.posonlyargs)
                else kinds.POSITIONAL_OR_KEYWORD)
        params.append(kinds(arg.arg, kind, default=default))
    if args.vararg:
        params.append(kinds(args.vararg.arg, kinds.VAR_POSITIONAL))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        params.append(kinds(arg.arg, kinds.KEYWORD_ONLY, default=(
            kinds.empty if default is None else ast.unparse(default))))
    if args.kwarg:
        params.append(kinds(args.kwarg.arg, kinds.VAR_KEYWORD))
    return inspect.Signature(params)


def shape(entry: Optional[dict]) -> Optional[Tuple[str, str]]:
    """What must agree between the record and the stand-in: the kind
    (data kinds count as one) and the parameters."""
    if entry is None:
        return None
    kind = entry['kind']
    return ('data' if kind in DATA_KINDS else kind,
            entry.get('signature', ''))


# -- writing the record ------------------------------------------------

def checkout(repo: str, commit: Optional[str]) -> Tuple[str, str]:
    """A directory holding ``charms_openstack/`` and its commit: ``repo``
    itself, or (a git directory) a temporary ``git archive`` of
    ``commit``, which the caller removes."""
    if os.path.isdir(os.path.join(repo, PACKAGE)):
        if commit is None:
            top = _git(repo, 'rev-parse', '--show-toplevel')
            if os.path.realpath(top) != os.path.realpath(repo):
                raise SystemExit('{} is not the top of a git work tree: '
                                 'give --commit'.format(repo))
            commit = _git(repo, 'rev-parse', 'HEAD')
        return repo, commit
    if commit is None:
        raise SystemExit('{} has no {}/: give --commit to take it from the '
                         'git directory'.format(repo, PACKAGE))
    commit = _git(repo, 'rev-parse', commit + '^{commit}')
    target = tempfile.mkdtemp(prefix='charms-openstack-')
    archive = subprocess.run(['git', '-C', repo, 'archive', commit],
                             check=True, stdout=subprocess.PIPE).stdout
    subprocess.run(['tar', '-x', '-C', target], input=archive, check=True)
    return target, commit


def _git(repo: str, *args: str) -> str:
    try:
        return subprocess.run(
            ['git', '-C', repo] + list(args), check=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            universal_newlines=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as error:
        raise SystemExit('git {} in {}: {} (give --commit)'.format(
            ' '.join(args), repo, error))


def record(root: str, commit: str) -> dict:
    """The document written to RECORD."""
    return {'commit': commit, 'source': SOURCE, 'package': PACKAGE,
            'generated_by': 'python -m sim.charms_openstack_api --repo '
                            'CHECKOUT --commit ' + commit,
            'modules': read_api(root)}


def dumps(document: dict) -> str:
    """Stable text: sorted keys, fixed indent, final newline."""
    return json.dumps(document, indent=1, sort_keys=True) + '\n'


def load_record(path: str = RECORD) -> dict:
    with open(path) as stream:
        return json.load(stream)


# -- the stand-in against the real library, scenario by scenario --------

def default_scenarios() -> List[str]:
    """Scenarios where charms.openstack's base class does the work: a
    series upgrade, or layer:openstack's pause, resume and
    restart-services actions."""
    import yaml
    found = []
    for path in sorted(glob.glob(os.path.join(REPO_ROOT, 'scenarios', '**',
                                              '*.yaml'), recursive=True)):
        with open(path) as stream:
            steps = (yaml.safe_load(stream) or {}).get('steps') or []
        if any(step in ('pre-series-upgrade', 'post-series-upgrade') or
               isinstance(step, dict) and step.get('action') in (
                   'pause', 'resume', 'restart-services')
               for step in steps):
            found.append(os.path.relpath(path, REPO_ROOT))
    return found


def run_scenario(path: str, library: Optional[str]) -> Any:
    """The simulator's JSON for a scenario: against the stand-in
    (``library`` None: no charms_openstack on PYTHONPATH), or against
    the real package in the checkout ``library``."""
    env = dict(os.environ)
    env.pop('PYTHONPATH', None)
    if library:
        env['PYTHONPATH'] = library
    done = subprocess.run([sys.executable, '-m', 'sim', path], env=env,
                          cwd=REPO_ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)
    if done.returncode:
        return {'exit': done.returncode, 'stderr': done.stderr[-2000:]}
    return json.loads(done.stdout)


def differences(left: Any, right: Any, where: str = '') -> List[str]:
    """Every place two JSON documents differ, as ``path: left != right``."""
    if isinstance(left, dict) and isinstance(right, dict):
        found = []
        for key in sorted(set(left) | set(right), key=str):
            found += differences(left.get(key, '<absent>'),
                                 right.get(key, '<absent>'),
                                 '{}/{}'.format(where, key))
        return found
    if isinstance(left, list) and isinstance(right, list) and \
            len(left) == len(right):
        found = []
        for index, (a, b) in enumerate(zip(left, right)):
            found += differences(a, b, '{}/{}'.format(where, index))
        return found
    if left == right:
        return []
    return ['{}: {} != {}'.format(where or '/', json.dumps(left),
                                  json.dumps(right))]


def compare(root: str, scenarios: List[str]) -> int:
    """Print, per scenario, how the output against the stand-in
    (left) differs from the output against the real library (right).
    Hooks get only the package on their path (a directory holding a
    link to it), not the rest of the checkout."""
    if _importable_without_pythonpath():
        raise SystemExit('charms_openstack is importable without '
                         'PYTHONPATH: the stand-in would not be used')
    library = tempfile.mkdtemp(prefix='charms-openstack-path-')
    os.symlink(os.path.join(root, PACKAGE), os.path.join(library, PACKAGE))
    try:
        return _compare(library, scenarios or default_scenarios())
    finally:
        shutil.rmtree(library)


def _compare(library: str, scenarios: List[str]) -> int:
    status = 0
    for path in scenarios:
        found = differences(run_scenario(path, None),
                            run_scenario(path, library))
        print('{}: {}'.format(path, '{} difference(s)'.format(len(found))
                              if found else 'same output'))
        for line in found:
            print('  ' + line)
        status = status or (1 if found else 0)
    return status


def _importable_without_pythonpath() -> bool:
    env = dict(os.environ)
    env.pop('PYTHONPATH', None)
    return subprocess.run(
        [sys.executable, '-c', 'import ' + PACKAGE], env=env, cwd='/',
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog='python -m sim.charms_openstack_api',
        description='Record charms.openstack\'s API (names and signatures) '
        'into {}, or compare scenarios run against the stand-in and the '
        'real library.'.format(os.path.relpath(RECORD, REPO_ROOT)))
    parser.add_argument('--repo', required=True,
                        help='a checkout of charms.openstack, or its git '
                        'directory (then --commit is required)')
    parser.add_argument('--commit', help='the commit (default: the '
                        'checkout\'s HEAD)')
    parser.add_argument('--compare', nargs='*', metavar='SCENARIO',
                        help='run these scenarios (default: series upgrade '
                        'and pause/resume/restart-services ones) against '
                        'the stand-in and the real library; print the '
                        'differences')
    args = parser.parse_args(argv)
    repo = os.path.abspath(args.repo)
    root, commit = checkout(repo, args.commit)
    try:
        if args.compare is not None:
            return compare(root, args.compare)
        with open(RECORD, 'w') as stream:
            stream.write(dumps(record(root, commit)))
    finally:
        if root != repo:
            shutil.rmtree(root)
    print('{} recorded at {}'.format(os.path.relpath(RECORD, REPO_ROOT),
                                     commit))
    return 0


if __name__ == '__main__':
    sys.exit(main())
