"""The docs' unit-status messages are the code's, and the code's are all
in the guide's troubleshooting section.

The messages are read from the source (Python's AST), not copied here:
every (state, message) the charm class, the plan (nova/plan.py) and the
status module (status.py) can return or set, the messages
of the functions that produce a blocked reason (software.py, the install
step, the unitdata problem record, MappingError, a series upgrade held
for guests), and the four messages charms.openstack takes from
charmhelpers (paused, services not running, prepared for a series
upgrade, services running while paused or prepared).
Each becomes a pattern: literal text, with a wildcard where a value is
filled in at run time. A doc message is a pattern too (`...`, `<x>`,
`[...]` and a lone `N` stand for anything; a message may be cut short).
"""
import ast
import functools
import os
import re
from typing import Dict, List, Optional, Sequence, Tuple, Union

import charmhelpers.contrib.openstack.utils as os_utils
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.path.join(REPO, 'src', 'lib')
CHARM_MODULE = os.path.join(LIB, 'charm', 'openstack',
                            'nova_compute_nvidia_vgpu.py')
SOFTWARE = os.path.join(LIB, 'nvidia_vgpu', 'apply', 'software.py')
# Where a unit status is decided: the hook plan's precedence, the plan of
# what Nova gets, the waiting and ready statuses; and where the apply
# side sets one or records a software problem (the charm class, the
# software, the boot units).
STATUS_MODULES = (os.path.join(LIB, 'nvidia_vgpu', 'hook_plan',
                               'precedence.py'),
                  os.path.join(LIB, 'nvidia_vgpu', 'nova', 'plan.py'),
                  os.path.join(LIB, 'nvidia_vgpu', 'status.py'),
                  CHARM_MODULE, SOFTWARE,
                  os.path.join(LIB, 'nvidia_vgpu', 'apply', 'boot_units.py'))
STATES = ('active', 'blocked', 'waiting', 'maintenance')


class _Star:
    def __repr__(self) -> str:
        return '*'


STAR = _Star()
Pattern = Tuple[Union[str, _Star], ...]   # one char or STAR per item


# ------------------------------------------------- the code's messages

def _tree(path: str) -> ast.Module:
    with open(path) as stream:
        return ast.parse(stream.read(), path)


# Module names as the code imports them, where their room is not in it.
ROOMS = ('', 'host', 'nova', 'driver', 'health', 'monitoring', 'mig',
         'hook_plan', 'apply', 'relations')


def _module_path(name: str, room_first: str = '') -> str:
    """nvidia_vgpu's module of this name, whichever room holds it (this
    room first, where two have one of that name)."""
    for room in (room_first,) * bool(room_first) + ROOMS:
        path = os.path.join(LIB, 'nvidia_vgpu', room, name + '.py')
        if os.path.exists(path):
            return path
    return os.path.join(LIB, 'nvidia_vgpu', name + '.py')


@functools.lru_cache(maxsize=None)
def _constants(path: str) -> Dict[str, List[Pattern]]:
    """Module-level NAME = <text> assignments, resolved."""
    found: Dict[str, List[Pattern]] = {}
    tree = _tree(path)
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            value = _text(node.value, path, found)
            if value and not any(STAR in p for p in value):
                found[node.targets[0].id] = value
    return found


def _literal(text: str) -> Pattern:
    return tuple(text)


def _text(node: ast.AST, path: str,
          env: Optional[Dict[str, List[Pattern]]] = None
          ) -> List[Pattern]:
    """The strings an expression can be, as patterns (STAR: unknown)."""
    env = _constants(path) if env is None else env
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [_literal(node.value)]
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and os.path.exists(_module_path(node.value.id))):
        constants = _constants(_module_path(node.value.id))
        if node.attr in constants:
            return constants[node.attr]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [left + right for left in _text(node.left, path, env)
                for right in _text(node.right, path, env)]
    if isinstance(node, ast.IfExp):
        return (_text(node.body, path, env)
                + _text(node.orelse, path, env))
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == 'format'):
        templates = _text(node.func.value, path, env)
        args = [_text(arg, path, env) for arg in node.args]
        return [_format(template, args) for template in templates]
    if isinstance(node, ast.JoinedStr):
        pattern: Pattern = ()
        for part in node.values:
            pattern += (_text(part, path, env)[0]
                        if isinstance(part, ast.Constant) else (STAR,))
        return [pattern]
    return [(STAR,)]


def _format(template: Pattern, args: List[List[Pattern]]) -> Pattern:
    """str.format with {} fields; a field whose argument is one known
    text is filled in, any other becomes STAR."""
    text = ''.join('\0' if item is STAR else item for item in template)
    pieces = re.split(r'\{[^{}]*\}', text)
    out: Pattern = _literal(pieces[0])
    for index, piece in enumerate(pieces[1:]):
        arg = args[index] if index < len(args) else [(STAR,)]
        out += arg[0] if len(arg) == 1 else (STAR,)
        out += _literal(piece)
    return tuple(STAR if item == '\0' else item for item in out)


def _returned(path: str, function: str,
              passed_on: Sequence[str] = ()) -> List[Pattern]:
    """The texts a function returns (its message-building returns);
    passed_on: names of variables it returns that hold another
    function's message, collected at that source."""
    patterns: List[Pattern] = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            for inner in ast.walk(node):
                if isinstance(inner, ast.Return) and inner.value is not None:
                    if isinstance(inner.value, ast.Name) and \
                            inner.value.id in passed_on:
                        continue
                    if not (isinstance(inner.value, ast.Constant)
                            and inner.value.value is None):
                        patterns += _text(inner.value, path)
    assert patterns, '{} has no {}()'.format(path, function)
    return patterns


def _calls(path: str, function: str, module: str, name: str) -> bool:
    """Whether a function returns module.name(...)'s result."""
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            return any(
                isinstance(inner, ast.Return)
                and isinstance(inner.value, ast.Call)
                and isinstance(inner.value.func, ast.Attribute)
                and isinstance(inner.value.func.value, ast.Name)
                and inner.value.func.value.id == module
                and inner.value.func.attr == name
                for inner in ast.walk(node))
    return False


def _local_text(function: ast.AST, name: str, path: str
                ) -> Optional[List[Pattern]]:
    """A local variable's texts: what it is assigned, with STAR after
    it where the function appends to it (message += ...)."""
    assigned: List[Pattern] = []
    appended = False
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name
                for t in node.targets):
            assigned += _text(node.value, path)
        elif (isinstance(node, ast.AugAssign)
              and isinstance(node.target, ast.Name)
              and node.target.id == name):
            appended = True
    if not assigned:
        return None
    return [p + (STAR,) if appended else p for p in assigned]


def _messages_from(node: ast.AST, path: str,
                   function: Optional[ast.AST] = None
                   ) -> Optional[List[Pattern]]:
    """Messages a status's message expression stands for; None if this
    test does not know where it comes from."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and isinstance(node.func.value, ast.Name) \
            and node.func.value.id == 'software' \
            and node.func.attr in ('resource_problem', 'reboot_message'):
        return _returned(_module_path('software'), node.func.attr)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and isinstance(node.func.value, ast.Name) \
            and node.func.value.id == 'verdict' \
            and node.func.attr == 'status_message':
        return _returned(_module_path('verdict'), node.func.attr)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and isinstance(node.func.value, ast.Name) \
            and node.func.value.id == 'series_upgrade' \
            and node.func.attr == 'held_message':
        return _returned(_module_path('series_upgrade'), node.func.attr)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id == 'str':
        # str(error) of an option's error: 'Invalid <option>: ' + problem
        return [pattern for module, name in OPTION_ERRORS
                for pattern in _error_messages(module, name)]
    if isinstance(node, ast.Name) and node.id == 'port_problem':
        return _returned(_module_path('metrics_port'), 'problem')
    if isinstance(node, ast.Name) and node.id == 'nothing':
        return _returned(_module_path('offer_gaps'), 'nothing_offered')
    if isinstance(node, ast.Name) and node.id == 'names_problem':
        return _returned(_module_path('nagios_names'), 'option_problem')
    if isinstance(node, ast.Name) and node.id == 'layout_problem':
        return _error_messages('layout', 'LayoutError')
    if isinstance(node, ast.Name) and node.id == 'mig_problem':
        return _returned(_module_path('plan', 'mig'), 'blocked_message')
    if isinstance(node, ast.Name) and node.id == 'mig_waits':
        # (after any other waiting message and '; ')
        return _returned(_module_path('plan', 'mig'), 'held_message')
    if isinstance(node, ast.Name) and node.id in ('problem',
                                                  'software_problem',
                                                  'failure', 'refused'):
        return []   # a problem recorded elsewhere, collected at its source
    if isinstance(node, ast.Name) and node.id == 'pending':
        return _pending_messages(path)
    env = dict(_constants(path))
    if function is not None:
        for name in {target.id for inner in ast.walk(function)
                     if isinstance(inner, ast.Assign)
                     for target in inner.targets
                     if isinstance(target, ast.Name)}:
            local = _local_text(function, name, path)
            if local and all(p != (STAR,) for p in local):
                env[name] = local
    texts = _text(node, path, env)
    if texts and all(p != (STAR,) for p in texts):
        return texts
    return None


# The exceptions whose text is an option's blocked status.
OPTION_ERRORS = (('mappings', 'MappingError'),
                 ('resource_classes', 'ResourceClassError'))
# Modules whose message functions pending_for_nova() appends.
PENDING_MODULES = ('guest_safety', 'resource_classes')


def _error_messages(module: str, name: str) -> List[Pattern]:
    path = _module_path(module)
    for cls in ast.walk(_tree(path)):
        if isinstance(cls, ast.ClassDef) and cls.name == name:
            call = next(n for n in ast.walk(cls)
                        if isinstance(n, ast.Call)
                        and isinstance(n.func, ast.Attribute)
                        and n.func.attr == 'format')
            return _text(call, path)
    raise AssertionError('{} not found in {}'.format(name, module))


def _pending_messages(path: str) -> List[Pattern]:
    """What pending_for_nova() joins with '; ': each part it appends,
    from guest_safety's message functions or literal, and any after."""
    patterns: List[Pattern] = []
    for function in ast.walk(_tree(path)):
        if not (isinstance(function, ast.FunctionDef)
                and function.name == 'pending_for_nova'):
            continue
        for node in ast.walk(function):
            if not (isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == 'append'):
                continue
            part = node.args[0]
            if (isinstance(part, ast.Call)
                    and isinstance(part.func, ast.Attribute)
                    and isinstance(part.func.value, ast.Name)
                    and part.func.value.id in PENDING_MODULES):
                found = _returned(_module_path(part.func.value.id),
                                  part.func.attr)
            else:
                found = _text(part, path)
            patterns += [p + (STAR,) for p in found]
    assert patterns, 'pending_for_nova() appends no message'
    return patterns


def _status_pair(node: ast.AST) -> Optional[ast.AST]:
    """The message expression of a status the code decides here: a
    (state, message) tuple, status_set(state, message), a refusal
    _Refused(state, message, ...), or a recorded software problem."""
    if (isinstance(node, ast.Tuple) and len(node.elts) == 2
            and isinstance(node.elts[0], ast.Constant)
            and node.elts[0].value in STATES):
        return node.elts[1]
    if not isinstance(node, ast.Call) or len(node.args) < 1:
        return None
    name = (node.func.attr if isinstance(node.func, ast.Attribute) else
            node.func.id if isinstance(node.func, ast.Name) else '')
    if (name in ('status_set', '_Refused') and len(node.args) >= 2
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in STATES):
        return node.args[1]
    if name == 'set_software_problem' and not (
            isinstance(node.args[0], ast.Constant)
            and node.args[0].value is None):
        return node.args[0]
    return None


def code_messages() -> Dict[str, List[Pattern]]:
    """Every status message the charm can show, by where it comes from."""
    messages: Dict[str, List[Pattern]] = {}
    unknown = []
    for path in STATUS_MODULES:
        tree = _tree(path)
        functions = [f for f in ast.walk(tree)
                     if isinstance(f, ast.FunctionDef)]
        owner = {id(node): function for function in functions
                 for node in ast.walk(function)}
        for node in ast.walk(tree):
            pair = _status_pair(node)
            if pair is None:
                continue
            found = _messages_from(pair, path, owner.get(id(node)))
            if found is None:
                unknown.append('{}:{}'.format(os.path.basename(path),
                                              node.lineno))
            else:
                messages.setdefault('{} line {}'.format(
                    os.path.basename(path), node.lineno), []).extend(found)
    # What _install() returns is recorded as the software problem: its own
    # messages, and the kernel module build's (_kernel_module_problem()
    # returns module_build.problem()'s).
    messages['_install'] = _returned(SOFTWARE, '_install',
                                     passed_on=('problem',))
    assert _calls(SOFTWARE, '_kernel_module_problem',
                  'module_build', 'problem')
    # module_build.problem() returns what its two checks return; a
    # kernel booted without the module is the software problem too
    # (_build_module() returns module_build.unbuilt_module()'s).
    assert _calls(SOFTWARE, '_build_module', 'module_build',
                  'unbuilt_module')
    messages['module_build'] = [
        pattern for function in ('_headers_problem', '_signing_problem',
                                 'unbuilt_module')
        for pattern in _returned(_module_path('module_build'), function)]
    # Why this nova cannot have per-profile classes (shown as 'refused').
    messages['resource_classes.refusal'] = _returned(
        _module_path('resource_classes'), 'refusal')
    assert not unknown, (
        'status messages at {} come from a source this test does not '
        'read; teach _messages_from()'.format(unknown))
    helpers = os_utils.__file__
    for start in ("Paused. Use 'resume'", 'Services not running that',
                  'Ready for do-release-upgrade',
                  'Services should be paused but'):
        hits = [p for node in ast.walk(_tree(helpers))
                if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == 'format'
                or isinstance(node, ast.Constant)
                for p in _text(node, helpers)
                if ''.join(x for x in p if x is not STAR).startswith(start)]
        assert hits, 'charmhelpers no longer says {!r}'.format(start)
        messages['charmhelpers: ' + start] = hits[:1]
    return messages


def all_code_patterns() -> List[Pattern]:
    return [p for patterns in code_messages().values() for p in patterns]


# ------------------------------------------------- the docs' messages

PLACEHOLDER = re.compile(r'\.\.\.|<[^>]*>|\[[^\]]*\]|\bN\b')


def doc_pattern(message: str) -> Pattern:
    """A message as a doc writes it: placeholders and the cut-off end
    stand for anything."""
    out: Pattern = ()
    for index, piece in enumerate(PLACEHOLDER.split(message)):
        if index:
            out += (STAR,)
        out += _literal(piece)
    return _squash(out + (STAR,))


def _squash(pattern: Pattern) -> Pattern:
    out: List[Union[str, _Star]] = []
    for item in pattern:
        if not (item is STAR and out and out[-1] is STAR):
            out.append(item)
    return tuple(out)


def intersect(left: Pattern, right: Pattern) -> bool:
    """Whether some message matches both patterns."""
    left, right = _squash(left), _squash(right)

    @functools.lru_cache(maxsize=None)
    def match(i: int, j: int) -> bool:
        if i == len(left) and j == len(right):
            return True
        if i < len(left) and left[i] is STAR:
            if match(i + 1, j) or (j < len(right) and match(i, j + 1)):
                return True
        if j < len(right) and right[j] is STAR:
            if match(i, j + 1) or (i < len(left) and match(i + 1, j)):
                return True
        return (i < len(left) and j < len(right)
                and left[i] is not STAR and right[j] is not STAR
                and left[i] == right[j] and match(i + 1, j + 1))
    return match(0, 0)


def common_prefix(left: Pattern, right: Pattern) -> int:
    """Literal characters the two patterns share before either's first
    wildcard: how specifically a doc message names a code message."""
    count = 0
    for a, b in zip(left, right):
        if a is STAR or b is STAR or a != b:
            break
        count += 1
    return count


def _section(text: str, heading: str) -> str:
    match = re.search(r'^## {}\n(.*?)(?=^## |\Z)'.format(re.escape(heading)),
                      text, re.MULTILINE | re.DOTALL)
    assert match, 'no section ## {}'.format(heading)
    return match.group(1)


def troubleshooting_keys(text: str) -> List[str]:
    """The guide's troubleshooting headings that are messages."""
    section = _section(text, 'Troubleshooting by unit status')
    return re.findall(r'^### `([^`]+)`\s*$', section, re.MULTILINE)


def status_table_messages(text: str) -> List[str]:
    """Messages in the message column of status tables (rows whose status
    column is a workload state): code spans that start a message."""
    messages = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip('|').split('|')]
        if len(cells) >= 2 and cells[0] in STATES:
            messages += [span for span in re.findall(r'`([^`]+)`', cells[1])
                         if span[:1].isupper() or span.startswith('apt-get')]
    return messages


def _read(page: str) -> str:
    with open(os.path.join(REPO, page)) as stream:
        return stream.read()


def uncovered(keys: Sequence[str], patterns: List[Pattern]) -> List[str]:
    """Code messages no doc key names. A key names the code messages it
    can match that share the longest literal start with it, so one key
    does not stand in for a neighbour that lacks its own."""
    covered = set()
    for key in keys:
        pattern = doc_pattern(key)
        candidates = [(common_prefix(pattern, code), index)
                      for index, code in enumerate(patterns)
                      if intersect(pattern, code)]
        if candidates:
            best = max(score for score, _ in candidates)
            covered |= {index for score, index in candidates
                        if score == best}
    return [''.join(str(x) for x in patterns[index])
            for index in range(len(patterns)) if index not in covered]


def stale(keys: Sequence[str], patterns: List[Pattern]) -> List[str]:
    """Doc messages the code cannot show."""
    return [key for key in keys
            if not any(intersect(doc_pattern(key), code)
                       for code in patterns)]


# ----------------------------------------------------------------- tests

def test_the_code_messages_are_found():
    """The reading of the source finds every kind of status it has, so
    the docs are compared with something."""
    shown = [''.join(str(x) for x in p) for p in all_code_patterns()]
    for start in ('Invalid vgpu-device-mappings: *',
                  'Invalid vgpu-resource-class: *',
                  'Invalid vgpu-resource-class: per-profile needs Nova',
                  'Invalid vgpu-resource-class: * ignores [mdev_<type>] '
                  'mdev_class',
                  'Waiting for the NVIDIA driver to name vGPU types *',
                  'Waiting for nova-compute to install nova-common',
                  'NVIDIA GPU found but no vGPU host software attached: '
                  'juju attach-resource nova-compute-nvidia-vgpu ',
                  'Resource nvidia-vgpu-software has sha256 ',
                  'Resource nvidia-vgpu-software is not a Debian package',
                  'Resource nvidia-vgpu-software is *',
                  'apt-get could not install *',
                  'apt-get could not install mdevctl',
                  'Reboot required: installed NVIDIA software *',
                  'Waiting for the nova-vgpu relation: ',
                  'Unit is ready: *',
                  'GPUs at *',
                  'Installing NVIDIA vGPU host software *',
                  'Kernel headers for the running kernel * are missing',
                  'NVIDIA kernel module of * * not built for the running '
                  'kernel *',
                  'The kernel only loads signed modules (*) and the DKMS '
                  'signing key * is not enrolled',
                  "Paused. Use 'resume' action to resume normal service.",
                  'Services not running that should be: *',
                  'Host drift: *'):
        assert any(message.startswith(start) for message in shown), start


def test_every_status_message_has_its_troubleshooting_entry():
    keys = troubleshooting_keys(_read('docs/index.md'))
    assert len(keys) >= 15
    assert uncovered(keys, all_code_patterns()) == []


def test_the_guide_status_table_lists_every_message():
    messages = status_table_messages(
        _section(_read('docs/index.md'), 'Unit status'))
    assert uncovered(messages, all_code_patterns()) == []


@pytest.mark.parametrize('page', ['docs/index.md', 'README.md'])
def test_no_doc_shows_a_message_the_code_cannot(page):
    text = _read(page)
    messages = status_table_messages(text)
    if page == 'docs/index.md':
        messages += troubleshooting_keys(text)
    assert messages, 'no status table found in ' + page
    assert stale(messages, all_code_patterns()) == []


def test_the_comparison_can_fail():
    patterns = all_code_patterns()
    # A message the code never had, and one whose wording drifted.
    assert stale(['Unit is broken: ...', 'Waiting for the vgpu relation'],
                 patterns) == ['Unit is broken: ...',
                               'Waiting for the vgpu relation']
    # Leaving an entry out of the troubleshooting section is noticed,
    # even where a neighbouring entry could match it.
    keys = troubleshooting_keys(_read('docs/index.md'))
    without = [key for key in keys
               if not key.startswith('Resource nvidia-vgpu-software is <')]
    missing = uncovered(without, patterns)
    assert len(missing) == 1 and missing[0].startswith(
        'Resource nvidia-vgpu-software is *'), missing


def test_each_troubleshooting_entry_names_its_own_message():
    """Without any one entry some message has none: no entry is a
    vaguer copy of another."""
    keys = troubleshooting_keys(_read('docs/index.md'))
    patterns = all_code_patterns()
    for key in keys:
        assert uncovered([k for k in keys if k != key], patterns), key


def test_patterns_match_as_messages_would():
    assert intersect(doc_pattern('Unit is ready: N NVIDIA GPUs (...)'),
                     _literal('Unit is ready: 2 NVIDIA GPUs (Tesla T4)'))
    assert not intersect(doc_pattern('Unit is ready: no GPU'),
                         _literal('Unit is ready: 2 NVIDIA GPUs'))
    assert intersect(doc_pattern('Reboot required: ...'),
                     ('R', 'e', STAR))
    assert not intersect(_literal('abc'), _literal('abd'))
    assert intersect(('a', STAR, 'c'), (STAR, 'b', 'c'))
