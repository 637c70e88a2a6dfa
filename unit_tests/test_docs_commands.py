"""Every `juju ...` command in the operator docs runs against this charm.

Each command in the operator pages (DOCS: code blocks and inline code)
is parsed as the shell and Juju would, then checked against what a built
charm declares: the application it names is this charm or a known other
one, and for this charm its actions, action parameters, options,
resources, endpoints and base exist. Juju 2.9's forms (`relate`,
`run-action --wait`, `deploy --series`, `run --unit ... -- cmd`) and Juju
3's and 4's (`integrate`, `run`, `--base`, `exec`) are all accepted.
Actions named outside a juju command (`pause [force=true]`) are checked
too.

What it cannot check: commands of other charms' options, and that a
shell variable holds what the text says it does.
"""
import os
import re
import shlex
from typing import Dict, Iterator, List, NamedTuple, Optional, Set, Tuple

import pytest
import yaml

from sim import charmdir

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = ['docs/index.md', 'README.md', 'docs/fleet.md', 'docs/reference.md',
        'docs/monitoring.md']
GUIDE = 'docs/index.md'
CHARM = 'nova-compute-nvidia-vgpu'
# `juju deploy` takes the built file: Charmhub's charm of the same name is
# a different, ops-based one (no sha256 option, no pause action).
CHARM_FILE = re.compile(
    r'^\./' + CHARM + r'_ubuntu-(?P<version>\d\d\.\d\d)-amd64\.charm$')
SERIES_VERSIONS = {'bionic': '18.04', 'focal': '20.04', 'jammy': '22.04',
                   'noble': '24.04'}
# Charms the guide deploys or configures beside this one. Their own
# options are not checked (their YAML is not here); their names are, so a
# typo in an application name does not pass as "someone else's".
OTHER_CHARMS = {'nova-compute', 'nova-cloud-controller', 'placement',
                'ovn-chassis', 'ceilometer-agent', 'nrpe', 'nagios',
                'grafana-agent', 'opentelemetry-collector'}
# The principal's end of nova-vgpu (charm-nova-compute, yoga and later).
PRINCIPAL_ENDPOINT = 'nova-vgpu'
SUBST = '$SUBST'   # what a $( ... ) command substitution reads as
UNIT = re.compile(r'^(?P<app>[a-z][a-z0-9-]*)/(?:\d+|leader)$')
ACTION_PARAM = re.compile(r'^(?P<key>[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*)=')


class Charm(NamedTuple):
    """What a built charm declares (layer:openstack's parts merged in)."""

    options: Set[str]
    actions: Dict[str, Dict[str, dict]]   # action -> param -> spec
    resources: Set[str]
    endpoints: Set[str]
    bases: Set[str]                       # '22.04', ...


def _load(name: str) -> dict:
    with open(os.path.join(REPO, 'src', name)) as stream:
        return yaml.safe_load(stream) or {}


def built_charm() -> Charm:
    """The YAML `charm build` would ship, as the simulator assembles it."""
    layer = _load('layer.yaml')
    deletes = set((layer.get('config') or {}).get('deletes', []))
    options = {name for name in charmdir.LAYER_OPENSTACK_OPTIONS
               if name not in deletes}
    options |= set(_load('config.yaml')['options'])
    actions = {name: {} for name in charmdir.LAYER_OPENSTACK_ACTIONS}
    for name, spec in _load('actions.yaml').items():
        actions[name] = dict((spec or {}).get('params') or {})
    metadata = _load('metadata.yaml')
    endpoints = set(charmdir.endpoints(metadata))
    endpoints |= set(charmdir.LAYER_OPENSTACK_REQUIRES)
    bases = {SERIES_VERSIONS[series]
             for series in metadata.get('series') or []}
    charmcraft = os.path.join(REPO, 'charmcraft.yaml')
    if os.path.exists(charmcraft):
        with open(charmcraft) as stream:
            text = stream.read()
        bases |= set(re.findall(r'(\d\d\.\d\d)', text))
    return Charm(options, actions, set(metadata.get('resources') or {}),
                 endpoints, bases)


# -------------------------------------------------------- finding commands

FENCE = re.compile(r'^[ \t]*```[^\n]*\n(.*?)^[ \t]*```',
                   re.MULTILINE | re.DOTALL)
INLINE = re.compile(r'`(juju [^`]+)`')


def _logical_lines(block: str) -> Iterator[str]:
    """Lines as the shell reads them: backslash continuations joined,
    a quote left open carries on to the next line, comments dropped."""
    pending = ''
    for line in block.splitlines():
        if not pending and line.lstrip().startswith('#'):
            continue    # a comment line: its quotes open nothing
        if line.rstrip().endswith('\\') and not _open_quote(pending + line):
            pending += line.rstrip()[:-1] + ' '
            continue
        pending += line
        if _open_quote(pending):
            pending += '\n'
            continue
        yield _strip_comment(pending)
        pending = ''
    if pending.strip():
        yield _strip_comment(pending)


def _scan(text: str) -> Iterator[Tuple[int, str, Optional[str]]]:
    """(index, character, quote in force) outside backslash escapes."""
    quote = None
    index = 0
    while index < len(text):
        char = text[index]
        if quote is None and char == '\\':
            index += 2
            continue
        if quote is None and char in '\'"':
            quote = char
        elif quote == char:
            quote = None
        yield index, char, quote
        index += 1


def _open_quote(text: str) -> bool:
    quote = None
    for _, _, quote in _scan(text):
        pass
    return quote is not None


def _strip_comment(line: str) -> str:
    for index, char, quote in _scan(line):
        if (char == '#' and quote is None
                and (index == 0 or line[index - 1].isspace())):
            return line[:index]
    return line


def _split_commands(line: str) -> Iterator[str]:
    """Simple commands of a line: split at | ; && || and out of $( ),
    whose inner commands are yielded too (the outer word reads SUBST)."""
    depth = 0
    current = ''
    inner: List[str] = []
    skip = 0
    for index, char, quote in _scan(line):
        if skip:
            skip -= 1
            continue
        if quote != "'" and line.startswith('$(', index):
            depth += 1
            if depth == 1:
                inner.append('')
                current += SUBST
                skip = 1
                continue
        elif depth and quote is None and char == ')':
            depth -= 1
            if depth == 0:
                yield from _split_commands(inner[-1])
                continue
        if depth:
            inner[-1] += char
            continue
        if quote is None and char in '|;&':
            if current.strip():
                yield current.strip()
            current = ''
            continue
        current += char
    if current.strip():
        yield current.strip()


def juju_commands(text: str) -> Iterator[List[str]]:
    """Every juju command of a Markdown page, as argv lists."""
    sources = [block for block in FENCE.findall(text)]
    prose = FENCE.sub('', text)
    # Inline code may wrap across lines of the Markdown source.
    sources += [span.replace('\n', ' ') for span in INLINE.findall(prose)]
    for source in sources:
        for line in _logical_lines(source):
            for command in _split_commands(line):
                words = _words(command)
                while words and words[0] in ('do', 'then', 'else', 'sudo',
                                             'time', 'echo', '!'):
                    if words[0] == 'echo':
                        words = []
                        break
                    words = words[1:]
                if words and words[0] == 'juju':
                    yield words


def _words(command: str) -> List[str]:
    try:
        words = shlex.split(command)
    except ValueError as error:
        raise AssertionError('cannot parse {!r}: {}'.format(command, error))
    kept: List[str] = []
    redirected = False
    for word in words:          # redirections are the shell's, not juju's
        if redirected:
            redirected = False
        elif word in ('>', '>>', '<', '2>'):
            redirected = True
        elif not re.match(r'^\d?>', word):
            kept.append(word)
    return kept


# -------------------------------------------------------- checking commands

def _is_placeholder(word: str) -> bool:
    return word.startswith('$') or word == '...'


class Checker:
    """Checks one page's juju commands; errors collected, not raised.

    Applications of this charm are its default name and any the page
    deploys from the charm file under another name (application groups);
    those of other charms likewise.
    """

    def __init__(self, charm: Charm) -> None:
        self.charm = charm
        self.ours = {CHARM}
        self.others = set(OTHER_CHARMS)
        self.errors: List[str] = []

    def check_page(self, text: str, guide: str = '') -> List[str]:
        """guide: the operator guide, whose walk-through deploys the
        applications (vgpu-v100, nova-compute-v100) other pages name."""
        commands = list(juju_commands(text))
        # Deployments first: a page may name an application before the
        # command that creates it (a summary, then the steps).
        for argv in list(juju_commands(guide)) + commands:
            if len(argv) > 2 and argv[1] == 'deploy':
                self._learn_deploy(argv)
        for argv in commands:
            self.check(argv)
        return self.errors

    def _learn_deploy(self, argv: List[str]) -> None:
        positional, _ = _parse(argv[2:], DEPLOY_FLAGS)
        if len(positional) >= 2:
            charm, app = positional[0], positional[1]
            if CHARM_FILE.match(charm):
                self.ours.add(app)
            elif charm in OTHER_CHARMS:
                self.others.add(app)

    def fail(self, argv: List[str], problem: str) -> None:
        self.errors.append('{}: {}'.format(' '.join(argv), problem))

    def check(self, argv: List[str]) -> None:
        if len(argv) < 2:
            return self.fail(argv, 'no juju subcommand')
        handler = SUBCOMMANDS.get(argv[1])
        if handler is None:
            return self.fail(argv, 'juju {} is not a command this checker '
                             'knows; add it here if it is real'.format(
                                 argv[1]))
        args = argv[2:]
        if args[:1] == ['...'] or all(arg.startswith('-') for arg in args):
            return None   # a mention of the command, not a command
        handler(self, argv, args)

    # -- names

    def app(self, argv: List[str], name: str) -> Optional[bool]:
        """True for this charm, False for another, None if unknown."""
        if _is_placeholder(name):
            return None
        if name in self.ours:
            return True
        if name in self.others:
            return False
        self.fail(argv, 'unknown application {!r}'.format(name))
        return None

    def unit(self, argv: List[str], name: str) -> Optional[bool]:
        if _is_placeholder(name):
            return None
        match = UNIT.match(name)
        if not match:
            self.fail(argv, '{!r} is not a unit name'.format(name))
            return None
        return self.app(argv, match.group('app'))

    def unit_or_app(self, argv: List[str], name: str) -> Optional[bool]:
        return (self.unit(argv, name) if '/' in name
                else self.app(argv, name))

    def option(self, argv: List[str], key: str) -> None:
        if key not in self.charm.options:
            self.fail(argv, 'no option {!r} (options: {})'.format(
                key, ', '.join(sorted(self.charm.options))))

    def resource(self, argv: List[str], assignment: str) -> None:
        name = assignment.split('=', 1)[0]
        if '=' not in assignment or name not in self.charm.resources:
            self.fail(argv, 'no resource {!r} (resources: {})'.format(
                name, ', '.join(sorted(self.charm.resources))))

    # -- subcommands

    def deploy(self, argv, args):
        positional, flags = _parse(args, DEPLOY_FLAGS, self, argv)
        if not positional:
            return self.fail(argv, 'deploy what?')
        charm = positional[0]
        match = CHARM_FILE.match(charm)
        if charm in (CHARM, 'ch:' + CHARM) or charm.startswith(CHARM + ' '):
            return self.fail(argv, 'deploys Charmhub\'s {0}, a different '
                             'charm; deploy the built file ./{0}_ubuntu-'
                             '<version>-amd64.charm'.format(CHARM))
        if match is None:
            if charm not in OTHER_CHARMS:
                self.fail(argv, 'unknown charm {!r}'.format(charm))
            return None
        version = match.group('version')
        if version not in self.charm.bases:
            self.fail(argv, 'no build for ubuntu@{}'.format(version))
        bases = [value for flag, value in flags if flag == '--base']
        series = [value for flag, value in flags if flag == '--series']
        wanted = bases + ['ubuntu@' + SERIES_VERSIONS.get(name, '?' + name)
                          for name in series]
        if wanted != ['ubuntu@' + version]:
            self.fail(argv, 'give exactly one --base (Juju 3) or --series '
                      '(Juju 2.9) matching the file\'s ubuntu@{}'.format(
                          version))
        for flag, value in flags:
            if flag == '--config' and '=' in value:
                self.option(argv, value.split('=', 1)[0])
            elif flag == '--resource':
                self.resource(argv, value)

    def integrate(self, argv, args):
        positional, _ = _parse(args, {}, self, argv)
        if len(positional) != 2:
            return self.fail(argv, 'relates exactly two endpoints')
        ends = []
        for end in positional:
            app, _, endpoint = end.partition(':')
            ends.append((self.app(argv, app), app, endpoint))
        for index, (ours, app, endpoint) in enumerate(ends):
            if not ours:
                continue
            other_ours, other_app, other_endpoint = ends[1 - index]
            if endpoint and endpoint not in self.charm.endpoints:
                self.fail(argv, '{} has no endpoint {!r}'.format(
                    app, endpoint))
            if other_ours is False and (endpoint or 'nova-vgpu') == \
                    'nova-vgpu' and other_endpoint not in (
                        '', PRINCIPAL_ENDPOINT):
                self.fail(argv, 'nova-compute\'s end is {!r}'.format(
                    PRINCIPAL_ENDPOINT))

    def config(self, argv, args):
        positional, flags = _parse(args, CONFIG_FLAGS, self, argv)
        if not positional:
            return self.fail(argv, 'config of which application?')
        ours = self.app(argv, positional[0])
        keys = [word.split('=', 1)[0] for word in positional[1:]]
        for flag, value in flags:
            if flag == '--reset':
                keys += value.split(',')
        if ours:
            for key in keys:
                self.option(argv, key)

    def attach_resource(self, argv, args):
        positional, _ = _parse(args, {}, self, argv)
        if len(positional) != 2:
            return self.fail(argv, 'attach-resource APP NAME=PATH')
        if self.app(argv, positional[0]):
            self.resource(argv, positional[1])

    def run(self, argv, args):
        """Juju 3's `run UNIT... ACTION [k=v...]`, or Juju 2.9's exec form
        (`run --unit U -- command`, `--application`, `--machine`)."""
        if any(word.split('=')[0] in EXEC_TARGETS or word == '--'
               for word in args):
            return self.exec_(argv, args)
        return self.run_action(argv, args, RUN_FLAGS)

    def run_action_29(self, argv, args):
        return self.run_action(argv, args, RUN_ACTION_FLAGS)

    def run_action(self, argv, args, known_flags):
        positional, _ = _parse(args, known_flags, self, argv)
        units = []
        while positional and (UNIT.match(positional[0])
                              or _is_placeholder(positional[0])):
            units.append(positional.pop(0))
        if not units:
            return self.fail(argv, 'run an action on which unit?')
        if not positional:
            return self.fail(argv, 'which action?')
        action, params = positional[0], positional[1:]
        owners = {self.unit(argv, unit) for unit in units}
        if owners == {True, False}:
            self.fail(argv, 'mixes units of different charms')
        if True not in owners:
            return None
        if action not in self.charm.actions:
            return self.fail(argv, 'no action {!r} (actions: {})'.format(
                action, ', '.join(sorted(self.charm.actions))))
        declared = self.charm.actions[action]
        for param in params:
            match = ACTION_PARAM.match(param)
            if not match:
                self.fail(argv, '{!r} is not key=value'.format(param))
                continue
            key = match.group('key')
            value = param.split('=', 1)[1]
            if key not in declared:
                self.fail(argv, 'action {} has no parameter {!r} '
                          '(parameters: {})'.format(
                              action, key,
                              ', '.join(sorted(declared)) or 'none'))
            elif (declared[key].get('type') == 'boolean'
                  and value not in ('true', 'false')):
                self.fail(argv, '{} takes true or false'.format(key))

    def exec_(self, argv, args):
        before, _, _ = _split_dashdash(args)
        _, flags = _parse(before, EXEC_FLAGS, self, argv)
        targets = [(flag, value) for flag, value in flags
                   if flag in EXEC_TARGETS]
        if not targets:
            return self.fail(argv, 'exec on which unit or application?')
        for flag, value in targets:
            for name in value.split(','):
                if flag in ('--unit', '-u'):
                    self.unit(argv, name)
                elif flag in ('--application', '-a', '--app'):
                    self.app(argv, name)

    def status(self, argv, args):
        positional, _ = _parse(args, STATUS_FLAGS, self, argv)
        for name in positional:
            self.unit_or_app(argv, name)

    def one_app(self, argv, args):
        positional, _ = _parse(args, APP_FLAGS, self, argv)
        if len(positional) != 1:
            return self.fail(argv, 'takes one application')
        self.app(argv, positional[0])

    def refresh(self, argv, args):
        positional, flags = _parse(args, REFRESH_FLAGS, self, argv)
        if len(positional) != 1:
            return self.fail(argv, 'refresh which application?')
        if self.app(argv, positional[0]):
            paths = [value for flag, value in flags if flag == '--path']
            if len(paths) != 1 or not CHARM_FILE.match(paths[0]):
                self.fail(argv, 'refresh this charm --path ./{}_ubuntu-'
                          '<version>-amd64.charm'.format(CHARM))
            for flag, value in flags:
                if flag == '--resource':
                    self.resource(argv, value)

    def ssh(self, argv, args):
        positional, _ = _parse(args, SSH_FLAGS, self, argv,
                               stop_at_positional=True)
        if not positional:
            return self.fail(argv, 'ssh to which unit?')
        if not positional[0].isdigit():
            self.unit(argv, positional[0])

    def debug_log(self, argv, args):
        _, flags = _parse(args, DEBUG_LOG_FLAGS, self, argv)
        for flag, value in flags:
            if flag == '--include':
                self.unit_or_app(argv, value)

    def resolved(self, argv, args):
        positional, flags = _parse(args, RESOLVED_FLAGS, self, argv)
        if not positional and ('--all', '') not in flags:
            return self.fail(argv, 'resolve which unit?')
        for name in positional:
            self.unit(argv, name)

    def show_status_log(self, argv, args):
        positional, _ = _parse(args, APP_FLAGS, self, argv)
        for name in positional:
            self.unit(argv, name)

    def show_action(self, argv, args):
        positional, _ = _parse(args, APP_FLAGS, self, argv)
        if len(positional) != 2:
            return self.fail(argv, 'show-action APP ACTION')
        if self.app(argv, positional[0]) and \
                positional[1] not in self.charm.actions:
            self.fail(argv, 'no action {!r}'.format(positional[1]))

    def machine(self, argv: List[str], name: str) -> None:
        if not (_is_placeholder(name) or name.isdigit()):
            self.fail(argv, '{!r} is not a machine number'.format(name))

    def upgrade_machine(self, argv, args):
        """Juju 2.9's upgrade-series MACHINE prepare SERIES, Juju 3's
        upgrade-machine MACHINE prepare BASE; then MACHINE complete."""
        positional, _ = _parse(args, UPGRADE_FLAGS, self, argv)
        if len(positional) < 2 or positional[1] not in (
                'prepare', 'complete'):
            return self.fail(argv, 'MACHINE prepare TARGET | MACHINE '
                             'complete')
        self.machine(argv, positional[0])
        targets = positional[2:]
        wanted = 1 if positional[1] == 'prepare' else 0
        known = (set(SERIES_VERSIONS) if argv[1] == 'upgrade-series' else
                 {'ubuntu@' + v for v in SERIES_VERSIONS.values()})
        if len(targets) != wanted or not all(
                _is_placeholder(t) or t in known for t in targets):
            self.fail(argv, 'prepare takes one of {}; complete nothing'
                      .format(', '.join(sorted(known))))

    def set_base(self, argv, args):
        """Juju 2.9's set-series APP SERIES, Juju 3's set-application-base
        APP BASE: after the last machine's series upgrade."""
        positional, _ = _parse(args, APP_FLAGS, self, argv)
        if len(positional) != 2:
            return self.fail(argv, 'APPLICATION TARGET')
        self.app(argv, positional[0])
        known = (set(SERIES_VERSIONS) if argv[1] == 'set-series' else
                 {'ubuntu@' + v for v in SERIES_VERSIONS.values()})
        if not (_is_placeholder(positional[1]) or positional[1] in known):
            self.fail(argv, 'takes one of {}'.format(
                ', '.join(sorted(known))))

    def add_machine(self, argv, args):
        positional, flags = _parse(args, ADD_MACHINE_FLAGS, self, argv)
        for flag, value in flags:
            if flag == '--base' and value not in {
                    'ubuntu@' + v for v in SERIES_VERSIONS.values()}:
                self.fail(argv, 'unknown base {!r}'.format(value))

    def add_unit(self, argv, args):
        positional, flags = _parse(args, ADD_UNIT_FLAGS, self, argv)
        if len(positional) != 1:
            return self.fail(argv, 'add-unit APP')
        self.app(argv, positional[0])
        for flag, value in flags:
            if flag == '--to':
                self.machine(argv, value)

    def remove_units(self, argv, args):
        positional, _ = _parse(args, APP_FLAGS, self, argv)
        if not positional:
            return self.fail(argv, 'remove which unit?')
        for name in positional:
            self.unit(argv, name)

    def remove_machines(self, argv, args):
        positional, _ = _parse(args, REMOVE_MACHINE_FLAGS, self, argv)
        if not positional:
            return self.fail(argv, 'remove which machine?')
        for name in positional:
            self.machine(argv, name)

    def nothing_to_check(self, argv, args):
        _parse(args, ANY_FLAGS, self, argv)


def _split_dashdash(args: List[str]) -> Tuple[List[str], bool, List[str]]:
    if '--' in args:
        index = args.index('--')
        return args[:index], True, args[index + 1:]
    return args, False, []


# Flags that take a value (the rest are booleans). A flag unknown to a
# subcommand is an error: a typo or an option of the other Juju version
# must not pass unseen.
COMMON = {'-m': True, '--model': True, '--format': True, '-o': True,
          '--output': True}
DEPLOY_FLAGS = dict(COMMON, **{
    '--base': True, '--series': True, '--channel': True, '--config': True,
    '--resource': True, '-n': True, '--num-units': True, '--to': True,
    '--constraints': True, '--bind': True, '--revision': True,
    '--trust': False, '--dry-run': False, '--force': False})
CONFIG_FLAGS = dict(COMMON, **{'--reset': True, '--file': True})
RUN_FLAGS = dict(COMMON, **{'--wait': 'optional', '--background': False,
                            '--params': True, '--string-args': False,
                            '--color': False, '--utc': False,
                            '--quiet': False})
RUN_ACTION_FLAGS = dict(COMMON, **{'--wait': 'optional', '--params': True,
                                   '--string-args': False})
EXEC_TARGETS = {'--unit', '-u', '--application', '-a', '--app',
                '--machine', '--all'}
EXEC_FLAGS = dict(COMMON, **{
    '--unit': True, '-u': True, '--application': True, '-a': True,
    '--app': True, '--machine': True, '--all': False, '--timeout': True,
    '--wait': 'optional'})
STATUS_FLAGS = dict(COMMON, **{'--relations': False, '--storage': False,
                               '--watch': True, '--color': False})
APP_FLAGS = dict(COMMON, **{'--force': False, '--no-wait': False,
                            '--no-prompt': False, '--destroy-storage': False,
                            '--schema': False, '--all': False,
                            '--include-storage': False})
RESOLVED_FLAGS = dict(COMMON, **{'--no-retry': False, '--all': False})
REFRESH_FLAGS = dict(COMMON, **{'--path': True, '--resource': True,
                                '--force-units': False, '--switch': True,
                                '--channel': True})
SSH_FLAGS = dict(COMMON, **{'--proxy': False, '--pty': True})
DEBUG_LOG_FLAGS = dict(COMMON, **{
    '--include': True, '--exclude': True, '--level': True, '--replay': False,
    '--tail': False, '--no-tail': False, '-n': True, '--lines': True,
    '--include-module': True, '--exclude-module': True})
UPGRADE_FLAGS = dict(COMMON, **{'--yes': False, '-y': False,
                                '--force': False})
ADD_MACHINE_FLAGS = dict(COMMON, **{'--base': True, '--series': True,
                                    '--constraints': True, '-n': True})
ADD_UNIT_FLAGS = dict(COMMON, **{'--to': True, '-n': True,
                                 '--num-units': True})
REMOVE_MACHINE_FLAGS = dict(COMMON, **{'--force': False, '--no-wait': False,
                                       '--no-prompt': False,
                                       '--keep-instance': False})
ANY_FLAGS = None


def _parse(args: List[str], flags: Optional[Dict[str, object]],
           checker: Optional[Checker] = None,
           argv: Optional[List[str]] = None,
           stop_at_positional: bool = False
           ) -> Tuple[List[str], List[Tuple[str, str]]]:
    """Positional words and (flag, value) pairs, as Juju's gnuflag reads
    them: `--flag value`, `--flag=value`; `--` ends the flags."""
    positional: List[str] = []
    found: List[Tuple[str, str]] = []
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == '--':
            break
        if not word.startswith('-') or word == '-':
            positional.append(word)
            if stop_at_positional:
                break
            continue
        name, has_value, value = word.partition('=')
        if flags is None:
            continue
        if name not in flags:
            if checker is not None:
                checker.fail(argv, 'unknown flag {}'.format(name))
            continue
        takes = flags[name]
        if has_value:
            found.append((name, value))
        elif takes is True:
            if index >= len(args):
                if checker is not None:
                    checker.fail(argv, '{} needs a value'.format(name))
                break
            found.append((name, args[index]))
            index += 1
        else:
            found.append((name, ''))
    return positional, found


SUBCOMMANDS = {
    'deploy': Checker.deploy,
    'integrate': Checker.integrate,         # Juju 3
    'relate': Checker.integrate,            # Juju 2.9 (and 3's alias)
    'add-relation': Checker.integrate,      # Juju 2.9
    'remove-relation': Checker.integrate,
    'config': Checker.config,
    'attach-resource': Checker.attach_resource,
    'attach': Checker.attach_resource,      # Juju 2.9's alias
    'run': Checker.run,
    'run-action': Checker.run_action_29,    # Juju 2.9
    'exec': Checker.exec_,                  # Juju 3
    'status': Checker.status,
    'remove-application': Checker.one_app,
    'resources': Checker.one_app,
    'actions': Checker.one_app,
    'show-action': Checker.show_action,
    'refresh': Checker.refresh,
    'upgrade-charm': Checker.refresh,       # Juju 2.9's older name
    'ssh': Checker.ssh,
    'debug-log': Checker.debug_log,
    'show-status-log': Checker.show_status_log,
    'resolved': Checker.resolved,           # 2.9, 3 and 4
    'resolve': Checker.resolved,            # its alias
    'add-model': Checker.nothing_to_check,
    'show-operation': Checker.nothing_to_check,
    'show-task': Checker.nothing_to_check,
    'show-action-output': Checker.nothing_to_check,
    'version': Checker.nothing_to_check,
    'upgrade-series': Checker.upgrade_machine,   # Juju 2.9
    'upgrade-machine': Checker.upgrade_machine,  # Juju 3 (gone in 4)
    'add-machine': Checker.add_machine,
    'set-series': Checker.set_base,              # Juju 2.9
    'set-application-base': Checker.set_base,    # Juju 3
    'add-unit': Checker.add_unit,
    'remove-unit': Checker.remove_units,
    'remove-machine': Checker.remove_machines,
}


def check_text(text: str, charm: Optional[Charm] = None,
               guide: str = '') -> List[str]:
    return Checker(charm or built_charm()).check_page(text, guide)


def _read(page: str) -> str:
    with open(os.path.join(REPO, page)) as stream:
        return stream.read()


# ----------------------------------------------------------------- tests

# Commands a page shows as what NOT to run; the checker must refuse them.
COUNTER_EXAMPLES = {
    'docs/index.md': {'juju deploy nova-compute-nvidia-vgpu'},
    'README.md': {'juju deploy nova-compute-nvidia-vgpu'},
}
# Errors known on a page and being fixed elsewhere (none today).
PENDING = {}  # type: Dict[str, Set[str]]


@pytest.mark.parametrize('page', DOCS)
def test_every_juju_command_in_the_docs_fits_the_charm(page):
    guide = _read(GUIDE) if page != GUIDE else ''
    errors = check_text(_read(page), guide=guide)
    wrong = COUNTER_EXAMPLES.get(page, set())
    assert [error for error in errors
            if error not in PENDING.get(page, ())
            and error.split(': ', 1)[0] not in wrong] == []
    for command in wrong:
        assert '`{}`'.format(command) in _read(page)
        assert check_text('`{}`'.format(command)), command


def test_the_guide_has_the_commands_a_fleet_needs():
    """The checker read the guide's commands, not an empty page."""
    commands = list(juju_commands(_read('docs/index.md')))
    used = {argv[1] for argv in commands}
    assert {'deploy', 'integrate', 'relate', 'config', 'attach-resource',
            'run', 'run-action', 'exec', 'status', 'remove-relation',
            'remove-application', 'refresh'} <= used
    assert len(commands) >= 40
    deploys = [argv for argv in commands if argv[1] == 'deploy'
               and CHARM_FILE.match(argv[2])]
    # Juju 3 (--base) and Juju 2.9 (--series) forms of the same deploy.
    assert any('--base' in ' '.join(argv) for argv in deploys)
    assert any('--series' in ' '.join(argv) for argv in deploys)
    actions = {word for argv in commands if argv[1] in ('run', 'run-action')
               for word in argv[2:] if word in built_charm().actions}
    assert {'list-vgpu-types', 'pause', 'resume'} <= actions


def test_the_built_charm_is_what_the_yaml_says():
    charm = built_charm()
    assert {'vgpu-device-mappings', 'nvidia-vgpu-software-sha256'} <= \
        charm.options
    assert 'debug' not in charm.options        # deleted in layer.yaml
    assert set(charm.actions) >= {'list-vgpu-types', 'pause', 'resume',
                                  'restart-services'}
    assert set(charm.actions['pause']) == {'force'}
    assert charm.resources == {'nvidia-vgpu-software'}
    assert 'nova-vgpu' in charm.endpoints
    assert charm.bases >= {'18.04', '20.04', '22.04', '24.04'}


GOOD = '''
```sh
juju deploy ./nova-compute-nvidia-vgpu_ubuntu-22.04-amd64.charm \\
    --base ubuntu@22.04 \\
    --config nvidia-vgpu-software-sha256=$(sha256sum f | cut -d' ' -f1)
juju deploy ./nova-compute-nvidia-vgpu_ubuntu-22.04-amd64.charm vgpu-t4 \\
    --series jammy
juju integrate vgpu-t4:nova-vgpu nova-compute:nova-vgpu
juju run vgpu-t4/0 nova-compute-nvidia-vgpu/3 pause force=true  # comment
juju run-action --wait vgpu-t4/leader list-vgpu-types pci-address=0000:84:00.0
juju run --unit vgpu-t4/0 -- nvidia-smi vgpu
juju config nova-compute-nvidia-vgpu vgpu-device-mappings="
nvidia-108: ['10de:1db4']   # a YAML comment inside the quoted value
"
for unit in $(gpu_units); do juju run "$unit" list-vgpu-types; done
```
'''


def test_the_checker_accepts_both_juju_versions_forms():
    assert check_text(GOOD) == []
    assert len(list(juju_commands(GOOD))) == 8


@pytest.mark.parametrize('command, problem', [
    ('juju deploy nova-compute-nvidia-vgpu', "Charmhub's"),
    ('juju deploy ch:nova-compute-nvidia-vgpu --channel yoga/stable',
     "Charmhub's"),
    ('juju deploy ./nova-compute-nvidia-vgpu_ubuntu-22.04-amd64.charm',
     'exactly one --base'),
    ('juju deploy ./nova-compute-nvidia-vgpu_ubuntu-22.04-amd64.charm '
     '--base ubuntu@24.04', 'matching the file'),
    ('juju deploy ./nova-compute-nvidia-vgpu_ubuntu-22.04-amd64.charm '
     '--series focal', 'matching the file'),
    ('juju deploy ./nova-compute-nvidia-vgpu_ubuntu-16.04-amd64.charm '
     '--base ubuntu@16.04', 'no build for ubuntu@16.04'),
    ('juju deploy ./nova-compute-nvidia-vgpu_ubuntu-22.04-amd64.charm '
     '--base ubuntu@22.04 --config force-install-nvidia-vgpu=true',
     "no option 'force-install-nvidia-vgpu'"),
    ('juju deploy ./nova-compute-nvidia-vgpu_ubuntu-22.04-amd64.charm '
     '--base ubuntu@22.04 --resource nvidia-software=./x.deb',
     "no resource 'nvidia-software'"),
    ('juju config nova-compute-nvidia-vgpu vgpu-mappings="{}"',
     "no option 'vgpu-mappings'"),
    ('juju config nova-compute-nvidia-vgpu --reset debug',
     "no option 'debug'"),
    ('juju attach-resource nova-compute-nvidia-vgpu vgpu-software=./x.deb',
     "no resource 'vgpu-software'"),
    ('juju run nova-compute-nvidia-vgpu/0 reboot-host',
     "no action 'reboot-host'"),
    ('juju run nova-compute-nvidia-vgpu/0 gpu-status',
     "no action 'gpu-status'"),
    ('juju run nova-compute-nvidia-vgpu/0 pause force=yes',
     'force takes true or false'),
    ('juju run nova-compute-nvidia-vgpu/0 list-vgpu-types address=x',
     "no parameter 'address'"),
    ('juju run-action --wait nova-compute-nvidia-vgpu/0 resume now=true',
     "no parameter 'now'"),
    ('juju run-action --wait list-vgpu-types', 'which unit'),
    ('juju run nova-compute-nvidai-vgpu/0 pause',
     "unknown application 'nova-compute-nvidai-vgpu'"),
    ('juju integrate nova-compute-nvidia-vgpu:vgpu nova-compute:nova-vgpu',
     "no endpoint 'vgpu'"),
    ('juju relate nova-compute-nvidia-vgpu:nova-vgpu nova-compute:juju-info',
     "nova-compute's end"),
    ('juju exec --unit nova-compute-nvidia-vgpu/x -- ls', 'not a unit'),
    ('juju run-action nova-compute-nvidia-vgpu/0 pause --timeout=5',
     'unknown flag --timeout'),
    ('juju refresh nova-compute-nvidia-vgpu', '--path'),
    ('juju frobnicate nova-compute-nvidia-vgpu', 'not a command'),
])
def test_the_checker_catches_what_would_not_run(command, problem):
    errors = check_text('```sh\n{}\n```\n'.format(command))
    assert len(errors) == 1 and problem in errors[0], errors


def test_inline_commands_in_prose_are_checked_too():
    errors = check_text('Run `juju run nova-compute-nvidia-vgpu/0 '
                        'list-gpus` on a GPU host.')
    assert errors and "no action 'list-gpus'" in errors[0]


def test_a_command_after_a_comment_with_an_apostrophe_is_checked():
    """The shell drops a comment line whole: its apostrophe opens no
    quote that would swallow the commands after it."""
    errors = check_text("```sh\n# the GPU's address\n"
                        'juju run nova-compute-nvidia-vgpu/0 list-gpus\n'
                        '```\n')
    assert errors and "no action 'list-gpus'" in errors[0]


MACHINES = '''
```sh
juju upgrade-series 7 prepare noble
juju upgrade-series 7 complete
juju upgrade-machine 7 prepare ubuntu@24.04
juju upgrade-machine 7 complete
juju add-machine --base ubuntu@24.04
juju add-unit nova-compute --to 12
juju remove-unit nova-compute/7
juju remove-machine 7
```
'''


def test_the_checker_reads_series_upgrade_and_machine_commands():
    assert check_text(MACHINES) == []
    for wrong in ('juju upgrade-series 7 prepare ubuntu@24.04',
                  'juju upgrade-machine 7 prepare noble',
                  'juju upgrade-machine 7 prepare',
                  'juju upgrade-series 7 complete noble',
                  'juju upgrade-machine vgpu-v100/7 complete',
                  'juju add-machine --base ubuntu@26.04',
                  'juju remove-unit vgpu-t4x/0',
                  'juju remove-machine nova-compute/7'):
        assert check_text('`{}`'.format(wrong)), wrong


# Actions named outside a juju command, in prose or a list:
# `pause [force=true]`, `install-vgpu-software force=true`.
ACTION_MENTION = re.compile(
    r'`([a-z][a-z0-9-]*)((?: \[?[a-z][a-z0-9.-]*=[^`\]\s]*\]?)+)`')


def action_mention_errors(text: str,
                          charm: Optional[Charm] = None) -> List[str]:
    """Each `action key=value` span names an action this charm has and
    parameters that action takes, with a value of the declared type."""
    charm = charm or built_charm()
    errors = []
    for name, params in ACTION_MENTION.findall(FENCE.sub('', text)):
        if name not in charm.actions:
            errors.append('{}: no such action'.format(name))
            continue
        for param in params.split():
            key, _, value = param.strip('[]').partition('=')
            spec = charm.actions[name].get(key)
            if spec is None:
                errors.append('{} has no parameter {}'.format(name, key))
            elif spec.get('type') == 'boolean' and value not in (
                    'true', 'false'):
                errors.append('{} {} takes true or false'.format(name, key))
    return errors


@pytest.mark.parametrize('page', DOCS)
def test_actions_named_in_prose_exist(page):
    assert action_mention_errors(_read(page)) == []


def test_prose_action_check_can_fail():
    assert action_mention_errors('Run `reboot-host force=true`.') == [
        'reboot-host: no such action']
    assert action_mention_errors('`pause [now=true]`') == [
        'pause has no parameter now']
    assert action_mention_errors('`pause force=yes`') == [
        'pause force takes true or false']


def _table_rows(text: str, heading: str) -> List[List[str]]:
    section = re.search(r'^## {}\n(.*?)(?=^## |\Z)'.format(heading), text,
                        re.MULTILINE | re.DOTALL)
    assert section, heading
    return [[cell.strip() for cell in line.strip().strip('|').split('|')]
            for line in section.group(1).splitlines()
            if line.startswith('| `')]


def test_the_readme_lists_every_action_with_its_parameters():
    """The front page's table: every action of the built charm, each
    with exactly the parameters actions.yaml gives it."""
    charm = built_charm()
    rows = _table_rows(_read('README.md'), 'Actions')
    listed = {row[0].strip('`'): set(re.findall(r'`([a-z-]+)=', row[1]))
              for row in rows}
    assert listed == {name: set(params)
                      for name, params in charm.actions.items()}


def test_the_reference_describes_every_action():
    section = _read('docs/reference.md').split('\n## Actions\n', 1)[1]
    for name in built_charm().actions:
        assert re.search(r'^- `{}[ `]'.format(re.escape(name)), section,
                         re.MULTILINE), name
