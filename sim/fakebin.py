"""Fake Juju hook tools and host commands, one script under many names.

The simulator links this file under every tool name into a directory that
comes first (and, with a few read-only pass-throughs, alone) on the hook's
PATH, with the simulator's interpreter in the shebang. Each call reads and
writes the JSON state file named by $SIM_STATE, answering in the forms
charmhelpers uses (see ../shared/reference/reactive-anatomy.md). Host
commands are recorded in $SIM_COMMANDS and change only the simulated host.
It runs with `python -IS` (quick to start, and nothing from the hook's
environment leaks in); only relation-set --file reaches for PyYAML.
juju-log, called dozens of times per hook, is a separate shell script.
"""
import fcntl
import fnmatch
import json
import os
import subprocess
import sys

STATE = os.environ.get('SIM_STATE', '')
HOST_ROOT = os.environ.get('SIM_HOST_ROOT', '')
# The index of the scenario step this process runs in (guest disruptions
# name it).
STEP = int(os.environ.get('SIM_STEP') or 0)
# This command as it was called (main sets it): disruptions name it.
COMMAND = []

JUJU_LOG = '''#!/bin/sh
level=INFO
case "$1" in -l|--log-level) level=$2; shift 2 ;; esac
[ "$1" = --debug ] && shift
printf '%s %s\\n' "$level" "$*" >> "$SIM_LOG"
'''
HOOK_TOOLS = (
    'action-fail', 'action-get', 'action-log', 'action-set',
    'application-version-set', 'close-port', 'config-get', 'goal-state',
    'is-leader', 'juju-reboot', 'leader-get', 'leader-set',
    'network-get', 'open-port', 'opened-ports', 'relation-get',
    'relation-ids', 'relation-list', 'relation-set', 'resource-get',
    'status-get', 'status-set', 'unit-get',
)
HOST_COMMANDS = (
    'apt-cache', 'apt-config', 'apt-get', 'dpkg', 'dpkg-query', 'lsmod',
    'mdevctl', 'modprobe', 'mokutil', 'nc', 'nvidia-smi', 'rmmod',
    'service', 'sriov-manage', 'systemctl', 'touch', 'update-initramfs',
    'virtualenv',
)
# Real, read-only tools run as they are (recorded): lspci is pointed at the
# generated sysfs tree, dpkg-deb only inspects files.
PASS_THROUGH = {'lspci': '/usr/bin/lspci', 'dpkg-deb': '/usr/bin/dpkg-deb'}

RELATION_SET_HELP = """Usage: relation-set [options] key=value [key=value ...]
options:
--app  pass to set the application's relation settings
--file  (= -) file containing key-value pairs
-r, --relation  (= ) specify a relation by id
"""


class Exit(Exception):
    """Stop the tool with this exit code (and optional stderr text)."""

    def __init__(self, code, message=''):
        super().__init__(message)
        self.code = code
        self.message = message


# ---------------------------------------------------------------- state

class State:
    """The shared JSON state, locked for the duration of one tool call."""

    def __enter__(self):
        self._lock = open(STATE + '.lock', 'w')
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        with open(STATE) as stream:
            self.data = json.load(stream)
        self._packages = dict(self.data['host']['packages'])
        return self.data

    def __exit__(self, *exc):
        if exc[0] is None:
            if self.data['host']['packages'] != self._packages:
                write_dpkg_status(HOST_ROOT, self.data['host']['packages'])
            tmp = STATE + '.tmp'
            with open(tmp, 'w') as stream:
                json.dump(self.data, stream, indent=1, sort_keys=True)
            os.replace(tmp, STATE)
        fcntl.flock(self._lock, fcntl.LOCK_UN)
        self._lock.close()
        return False


def write_dpkg_status(host_root, packages):
    """dpkg's database file, rewritten (a new file, as dpkg does) only
    when the installed packages change, so that its stamp tells the
    charm whether anything changed."""
    text = ''.join('Package: {}\nStatus: install ok installed\n'
                   'Version: {}\n\n'.format(name, version)
                   for name, version in sorted(packages.items()))
    path = os.path.join(host_root, 'var', 'lib', 'dpkg', 'status')
    try:
        with open(path) as stream:
            if stream.read() == text:
                return
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + '-new', 'w') as stream:
        stream.write(text)
    os.replace(path + '-new', path)


def record(kind, argv):
    with open(os.environ['SIM_COMMANDS'], 'a') as stream:
        stream.write(json.dumps({'kind': kind, 'argv': argv}) + '\n')


def out(value):
    sys.stdout.write(json.dumps(value))
    sys.stdout.write('\n')


def parse(argv, flags_with_value=(), flags=()):
    """A small getopt: returns ({flag: value or True}, positionals)."""
    opts, args = {}, []
    items = list(argv)
    while items:
        item = items.pop(0)
        name, eq, inline = item.partition('=')
        if name in flags_with_value:
            opts[name] = inline if eq else (items.pop(0) if items else '')
        elif item in flags:
            opts[item] = True
        else:
            args.append(item)
    return opts, args


# ---------------------------------------------------------- hook tools

def _relation(state, rid):
    rid = rid or os.environ.get('JUJU_RELATION_ID', '')
    if rid not in state['relations']:
        raise Exit(2, 'ERROR relation not found: {!r}\n'.format(rid))
    return rid, state['relations'][rid]


def tool_config_get(state, argv):
    opts, args = parse(argv, ('--format',), ('--all', '-a'))
    if args:
        out(state['config'].get(args[0]))
    else:
        out(state['config'])


def tool_status_set(state, argv):
    opts, args = parse(argv, (), ('--application',))
    if not args or args[0] not in ('maintenance', 'blocked', 'waiting',
                                   'active'):
        raise Exit(2, 'ERROR invalid status\n')
    state['status'] = {'workload': args[0],
                       'message': args[1] if len(args) > 1 else ''}


def tool_status_get(state, argv):
    out({'status': state['status']['workload'],
         'message': state['status']['message'], 'status-data': {}})


def tool_application_version_set(state, argv):
    state['application_version'] = argv[0] if argv else ''


def tool_relation_ids(state, argv):
    opts, args = parse(argv, ('--format',))
    name = args[0] if args else os.environ.get('JUJU_RELATION', '')
    out(sorted((rid for rid, rel in state['relations'].items()
                if rel['name'] == name),
               key=lambda rid: int(rid.split(':')[1])))


def tool_relation_list(state, argv):
    opts, args = parse(argv, ('--format', '-r', '--relation'), ('--app',))
    rid, rel = _relation(state, opts.get('-r') or opts.get('--relation'))
    out(sorted(rel['units']))


def tool_relation_get(state, argv):
    opts, args = parse(argv, ('--format', '-r', '--relation'), ('--app',))
    rid, rel = _relation(state, opts.get('-r') or opts.get('--relation'))
    attribute = args[0] if args else '-'
    unit = args[1] if len(args) > 1 else os.environ.get('JUJU_REMOTE_UNIT')
    if unit == state['unit']:
        data = rel['local']
    elif '--app' in opts:
        data = rel['app_data'] if '/' not in (unit or '') else {}
    elif unit in rel['units']:
        data = rel['units'][unit]
    elif unit in rel.get('departed', {}):
        # Juju still answers for the departing unit during -departed.
        data = rel['departed'][unit]
    else:
        raise Exit(2, 'ERROR cannot read settings for unit {!r}\n'.format(
            unit))
    out(data if attribute == '-' else data.get(attribute))


def tool_relation_set(state, argv):
    if '--help' in argv:
        sys.stdout.write(RELATION_SET_HELP)
        return
    opts, args = parse(argv, ('-r', '--relation', '--file', '--format'),
                       ('--app',))
    rid, rel = _relation(state, opts.get('-r') or opts.get('--relation'))
    settings = {}
    if '--file' in opts:
        source = opts['--file']
        text = sys.stdin.read() if source == '-' else open(source).read()
        settings.update(_parse_yaml_map(text))
    for item in args:
        key, _, value = item.partition('=')
        settings[key] = value
    bag = rel['app_local'] if '--app' in opts else rel['local']
    for key, value in settings.items():
        if value is None or value == '':
            bag.pop(key, None)
        else:
            bag[key] = str(value)
    state['relation_sets'] = state.get('relation_sets', 0) + 1


def _parse_yaml_map(text):
    """charmhelpers writes --file settings with yaml.safe_dump."""
    sys.path.extend(os.environ['SIM_SITE_PACKAGES'].split(os.pathsep))
    import yaml
    return yaml.safe_load(text) or {}


def tool_is_leader(state, argv):
    out(bool(state.get('leader', True)))


def tool_leader_get(state, argv):
    opts, args = parse(argv, ('--format',))
    key = args[0] if args else '-'
    data = state.setdefault('leader_settings', {})
    out(data if key == '-' else data.get(key))


def tool_leader_set(state, argv):
    data = state.setdefault('leader_settings', {})
    for item in argv:
        key, _, value = item.partition('=')
        if value:
            data[key] = value
        else:
            data.pop(key, None)


def tool_unit_get(state, argv):
    opts, args = parse(argv, ('--format',))
    out('10.0.0.10')


def tool_network_get(state, argv):
    raise Exit(1, 'ERROR network-get is not available in the simulator\n')


def tool_opened_ports(state, argv):
    opts, args = parse(argv, ('--format',))
    ports = state.setdefault('ports', [])
    if opts.get('--format') == 'json':
        out(ports)
    else:
        sys.stdout.write(''.join(port + '\n' for port in ports))


def tool_open_port(state, argv):
    ports = state.setdefault('ports', [])
    port = argv[0] if '/' in argv[0] else argv[0] + '/tcp'
    if port not in ports:
        ports.append(port)


def tool_close_port(state, argv):
    port = argv[0] if '/' in argv[0] else argv[0] + '/tcp'
    if port in state.setdefault('ports', []):
        state['ports'].remove(port)


def tool_resource_get(state, argv):
    path = state['resources'].get(argv[0]) if argv else None
    if not path:
        raise Exit(1, 'ERROR could not download resource: resource#{} '
                      'not found\n'.format(argv[0] if argv else ''))
    sys.stdout.write(path)


def _action(state):
    if not state.get('action'):
        raise Exit(1, 'ERROR not running an action\n')
    return state['action']


def tool_action_get(state, argv):
    opts, args = parse(argv, ('--format',))
    params = _action(state)['params']
    if not args:
        out(params)
        return
    value = params
    for part in args[0].split('.'):
        value = value.get(part) if isinstance(value, dict) else None
    out(value)


def tool_action_set(state, argv):
    results = _action(state)['results']
    for item in argv:
        key, _, value = item.partition('=')
        target = results
        parts = key.split('.')
        for part in parts[:-1]:
            target = target.setdefault(part, {})
        target[parts[-1]] = value


def tool_action_fail(state, argv):
    _action(state)['failed'] = argv[0] if argv else 'action failed'


def tool_action_log(state, argv):
    _action(state).setdefault('log', []).append(' '.join(argv))


def tool_goal_state(state, argv):
    out({'units': {}, 'relations': {}})


def tool_juju_reboot(state, argv):
    state['host']['reboot_requested'] = '--now' if '--now' in argv else True


# ------------------------------------------------------- host commands

def _packages(state):
    return state['host']['packages']


READ_ONLY_ENV = {'PATH': '/usr/bin:/bin', 'LC_ALL': 'C.UTF-8'}
# The machine's own dpkg, only ever for --compare-versions (a computation).
REAL_DPKG = '/usr/bin/dpkg'


def _sim():
    """The simulator's own modules (sim.guests, sim.host), imported only
    by the commands that need them."""
    if os.environ['SIM_REPO'] not in sys.path:
        sys.path.insert(0, os.environ['SIM_REPO'])
    from sim import guests, host
    return guests, host


def sync_vf_types(state):
    """Take the vGPU types written to the VFs' sysfs files since the
    last look into the host state (a guest on a retyped VF is
    disrupted), so that a regeneration of /sys keeps them."""
    guests, host = _sim()
    for vf, old, new in host.collect_vf_vgpu_types(HOST_ROOT, state['host']):
        guests.vf_retyped(state['host'], STEP, vf, old, new)


def guests_disrupted(state, cause):
    """Every guest using a vGPU right now loses it (cause: one line)."""
    sync_vf_types(state)
    guests, _ = _sim()
    guests.record(state['host'], STEP, guests.vgpu_guests(state['host']),
                  cause)


def _is_driver_package(name):
    return name.startswith('nvidia-vgpu-ubuntu-')


def _version_lt(first, second):
    return subprocess.run([REAL_DPKG, '--compare-versions', first, 'lt',
                           second], env=READ_ONLY_ENV).returncode == 0


def _deb_field(path, field):
    return subprocess.run([PASS_THROUGH['dpkg-deb'], '-f', path, field],
                          capture_output=True, text=True, check=True,
                          env=READ_ONLY_ENV).stdout.strip()


def _deb_listing(path):
    return [line.split()[-1] for line in subprocess.run(
        [PASS_THROUGH['dpkg-deb'], '-c', path], capture_output=True,
        text=True, check=True, env=READ_ONLY_ENV).stdout.splitlines()]


def _deb_units(path):
    return sorted(os.path.basename(name)[:-len('.service')]
                  for name in _deb_listing(path)
                  if '/systemd/system/' in name and name.endswith('.service'))


def _builds_module(deb):
    """Whether installing the package runs DKMS: it depends on dkms or
    ships a dkms.conf."""
    depends = [d.strip().split(' ')[0].split(':')[0]
               for d in deb['depends'].replace('|', ',').split(',')]
    return 'dkms' in depends or any(
        os.path.basename(name) == 'dkms.conf'
        for name in _deb_listing(deb['path']))


def _dkms_build(state, deb):
    """What the package's maintainer script does with DKMS: build the
    module for the running kernel, which fails without its headers
    (dkms exits 21, dpkg leaves the package unconfigured; here it is
    left out of the package list)."""
    _, host = _sim()
    if host.headers_present(state['host']):
        state['host']['dkms_module'] = deb['package']
        return
    release = state['host']['kernel']['release']
    sys.stdout.write('Setting up {} ({}) ...\n'.format(
        deb['package'], deb['version']))
    raise Exit(100, (
        'Error! Your kernel headers for kernel {release} cannot be found at '
        '/lib/modules/{release}/build or /lib/modules/{release}/source.\n'
        'Please install the linux-headers-{release} package or use the '
        '--kernelsourcedir option to tell DKMS where it\'s located.\n'
        'dpkg: error processing package {package} (--configure):\n'
        ' installed {package} package post-installation script subprocess '
        'returned error exit status 21\n'
        'Errors were encountered while processing:\n {package}\n'
        'E: Sub-process /usr/bin/dpkg returned an error code (1)\n').format(
            release=release, package=deb['package']))


def _read_deb(path):
    """A local .deb's path on this machine and its control fields."""
    real = HOST_ROOT + path if not path.startswith(HOST_ROOT) else path
    try:
        return {'path': real, 'package': _deb_field(real, 'Package'),
                'version': _deb_field(real, 'Version'),
                'depends': _deb_field(real, 'Depends')}
    except subprocess.CalledProcessError:
        raise Exit(100, 'E: Invalid archive signature\n'
                        'E: Could not read meta data from {}\n'.format(path))


def _install_deb(state, deb, how):
    """Install a local .deb (read by _read_deb): its Depends must be
    installable. how: the command doing it, e.g. 'apt-get install'."""
    real, package, version, depends = (
        deb['path'], deb['package'], deb['version'], deb['depends'])
    unavailable = state['host'].get('unavailable_packages', [])
    for dependency in filter(None, (d.strip().split(' ')[0]
                                    for d in depends.split(','))):
        if dependency in unavailable:
            raise Exit(100, (
                'Some packages could not be installed.\n'
                'The following packages have unmet dependencies:\n'
                ' {} : Depends: {} but it is not installable\n'
                'E: Unable to correct problems, you have held broken '
                'packages.\n').format(package, dependency))
        _packages(state).setdefault(dependency, '1.0-0ubuntu1')
    if _is_driver_package(package):
        state['host']['dkms_module'] = None
        if _builds_module(deb):
            _dkms_build(state, deb)
    if _is_driver_package(package) and \
            _packages(state).get(package) != version:
        # Another driver version takes the place of what is installed.
        replaced = ['{} {}'.format(name, old) for name, old in sorted(
            _packages(state).items()) if _is_driver_package(name)]
        if replaced:
            guests_disrupted(state, '{} replaced by {} {} ({})'.format(
                ', '.join(replaced), package, version, how))
    _packages(state)[package] = version
    for unit in _deb_units(real):
        service = state['host']['services'].setdefault(
            unit, {'active': False, 'enabled': False, 'masked': False})
        service['enabled'] = True
        service['package'] = package
        if package.startswith('nvidia-vgpu'):
            # The vGPU Manager daemons only run on the NVIDIA kernel driver.
            service['needs_module'] = 'nvidia'
        # Debian maintainer scripts start what they enable, where it can run.
        needs = service.get('needs_module')
        service['active'] = not service['masked'] and (
            not needs or needs in state['host']['modules'])


APT_READING = ('Reading package lists...\nBuilding dependency tree...\n'
               'Reading state information...\n')


def _apt_install_debs(state, opts, debs):
    """Local .debs as apt-get installs them (apt 2.x, as observed): one
    already installed at its version is left alone; one older than the
    installed version is a downgrade, which apt refuses (the whole
    transaction) unless given --allow-downgrades and --assume-yes."""
    installed = _packages(state)
    notes, downgrades, todo = [], [], []
    for deb in debs:
        current = installed.get(deb['package'])
        if current == deb['version']:
            notes.append('{} is already the newest version ({}).\n'.format(
                deb['package'], current))
            continue
        if current is not None and _version_lt(deb['version'], current):
            downgrades.append((deb, current))
        todo.append(deb)
    if downgrades:
        sys.stdout.write(APT_READING + ''.join(notes) +
                         'The following packages will be DOWNGRADED:\n  ' +
                         ' '.join(deb['package'] for deb, _ in downgrades) +
                         '\n{} upgraded, {} newly installed, {} downgraded, 0 '
                         'to remove and 0 not upgraded.\n'.format(
                             sum(1 for deb in todo
                                 if deb['package'] in installed) -
                             len(downgrades),
                             sum(1 for deb in todo
                                 if deb['package'] not in installed),
                             len(downgrades)))
        if not ({'-y', '--assume-yes', '--yes'} & set(opts)):
            sys.stdout.write('Need to get 0 B of archives.\n'
                             'Do you want to continue? [Y/n] Abort.\n')
            raise Exit(1)
        if '--allow-downgrades' not in opts:
            raise Exit(100, 'E: Packages were downgraded and -y was used '
                            'without --allow-downgrades.\n')
    elif notes:
        sys.stdout.write(APT_READING + ''.join(notes))
    for deb, current in downgrades:
        sys.stdout.write('dpkg: warning: downgrading {} from {} to {}\n'
                         .format(deb['package'], current, deb['version']))
    for deb in todo:
        _install_deb(state, deb, 'apt-get install')


def cmd_apt_get(state, argv):
    opts, args = parse(argv, ('-o', '--option'),
                       ('-y', '--assume-yes', '--yes', '-q', '--quiet',
                        '--purge', '--no-install-recommends',
                        '--allow-downgrades'))
    if not args:
        raise Exit(100, 'E: Invalid operation\n')
    verb, names = args[0], args[1:]
    unavailable = state['host'].get('unavailable_packages', [])
    if verb in ('update', 'upgrade', 'autoremove', 'clean'):
        return
    if verb == 'install':
        debs = []
        for name in names:
            if name.endswith('.deb') or '/' in name:
                debs.append(_read_deb(name))
            elif name in unavailable:
                raise Exit(100, 'E: Unable to locate package {}\n'.format(
                    name))
        _apt_install_debs(state, opts, debs)
        for name in names:
            if not (name.endswith('.deb') or '/' in name):
                _packages(state).setdefault(name, '1.0-0ubuntu1')
        if any(name.startswith('linux-headers-') for name in names):
            _, host = _sim()
            host.write_kernel_files(HOST_ROOT, state['host'])
        return
    if verb in ('remove', 'purge'):
        for name in names:
            if _is_driver_package(name) and name in _packages(state):
                guests_disrupted(state, '{} {} removed (apt-get {})'.format(
                    name, _packages(state)[name], verb))
            _packages(state).pop(name, None)
            for unit, service in list(state['host']['services'].items()):
                if service.get('package') == name:
                    del state['host']['services'][unit]
        return
    raise Exit(100, 'E: Invalid operation {}\n'.format(verb))


def cmd_dpkg(state, argv):
    if argv[:1] == ['-i'] or argv[:1] == ['--install']:
        for path in argv[1:]:
            deb = _read_deb(path)
            current = _packages(state).get(deb['package'])
            if current is not None and _version_lt(deb['version'], current):
                # dpkg itself downgrades, with a warning.
                sys.stderr.write('dpkg: warning: downgrading {} from {} to '
                                 '{}\n'.format(deb['package'], current,
                                               deb['version']))
            _install_deb(state, deb, 'dpkg -i')
        return
    if argv[:1] == ['--compare-versions']:
        raise Exit(2, 'dpkg: --compare-versions is not simulated\n')
    if argv[:1] in (['--print-architecture'],):
        sys.stdout.write('amd64\n')
        return
    raise Exit(2, 'dpkg: not simulated: {}\n'.format(' '.join(argv)))


def _matching(state, patterns):
    for pattern in patterns:
        found = sorted(name for name in _packages(state)
                       if fnmatch.fnmatchcase(name, pattern))
        yield pattern, found


def cmd_dpkg_query(state, argv):
    opts, args = parse(argv, ('-f', '--showformat'),
                       ('-W', '--show', '-l', '--list', '-L', '--listfiles',
                        '-s', '--status'))
    missing = []
    if '-l' in opts or '--list' in opts:
        lines = ['Desired=Unknown/Install/Remove/Purge/Hold',
                 '| Status=Not/Inst/Conf-files/Unpacked/halF-conf/'
                 'Half-inst/trig-aWait/Trig-pend',
                 '|/ Err?=(none)/Reinst-required (Status,Err: '
                 'uppercase=bad)',
                 '||/ Name Version Architecture Description',
                 '+++-====-=======-============-===========']
        for pattern, found in _matching(state, args):
            if not found:
                missing.append(pattern)
            for name in found:
                lines.append('ii  {} {} amd64 {}'.format(
                    name, _packages(state)[name], name))
        sys.stdout.write('\n'.join(lines) + '\n')
    else:
        fmt = opts.get('-f') or opts.get('--showformat') or \
            '${Package}\t${Version}\n'
        fmt = fmt.replace('\\n', '\n').replace('\\t', '\t')
        for pattern, found in _matching(state, args):
            if not found:
                missing.append(pattern)
            for name in found:
                sys.stdout.write(
                    fmt.replace('${Package}', name)
                    .replace('${binary:Package}', name)
                    .replace('${Version}', _packages(state)[name])
                    .replace('${db:Status-Abbrev}', 'ii ')
                    .replace('${Status}', 'install ok installed'))
    if missing:
        raise Exit(1, ''.join(
            'dpkg-query: no packages found matching {}\n'.format(name)
            for name in missing))


def cmd_apt_cache(state, argv):
    opts, args = parse(argv, (), ('--no-all-versions',))
    if args[:1] != ['show']:
        raise Exit(100, 'E: not simulated\n')
    unavailable = state['host'].get('unavailable_packages', [])
    for name in args[1:]:
        if name in unavailable:
            raise Exit(100, 'E: No packages found\n')
        version = _packages(state).get(name, '1.0-0ubuntu1')
        sys.stdout.write('Package: {}\nVersion: {}\nArchitecture: amd64\n'
                         'Description: {}\n\n'.format(name, version, name))


def cmd_apt_config(state, argv):
    """charmhelpers runs `apt-config dump` when charmhelpers.fetch is
    imported, i.e. in every hook of an OpenStack charm."""
    if argv[:1] != ['dump']:
        raise Exit(100, 'E: not simulated\n')
    sys.stdout.write('APT "";\nAPT::Architecture "amd64";\n'
                     'APT::Install-Recommends "1";\n'
                     'Dir "/";\nDir::Cache "var/cache/apt/";\n')


def _service(state, name):
    name = name[:-len('.service')] if name.endswith('.service') else name
    return name, state['host']['services'].get(name)


def cmd_systemctl(state, argv):
    opts, args = parse(argv, (), ('--quiet', '-q', '--now', '--no-block',
                                  '--no-pager', '--system'))
    if not args:
        raise Exit(1)
    verb, units = args[0], args[1:]
    if verb == 'daemon-reload':
        return
    for unit in units:
        name, service = _service(state, unit)
        if verb == 'is-active':
            active = bool(service and service['active'])
            if '--quiet' not in opts and '-q' not in opts:
                sys.stdout.write('active\n' if active else 'failed\n'
                                 if service and service.get('failed')
                                 else 'inactive\n')
            if not active:
                raise Exit(3)
            continue
        if verb == 'is-enabled':
            enabled = bool(service and service['enabled'])
            sys.stdout.write('enabled\n' if enabled else 'disabled\n')
            if not enabled:
                raise Exit(1)
            continue
        if service is None and os.path.exists(_unit_file(name)):
            service = state['host']['services'].setdefault(name, {
                'active': False, 'enabled': False, 'masked': False,
                'unit_file': True})
        if service is None:
            raise Exit(5, 'Failed to {} {}.service: Unit {}.service not '
                          'found.\n'.format(verb, name, name))
        if verb in ('start', 'restart', 'reload', 'try-restart'):
            if service['masked']:
                raise Exit(1, 'Failed to start {}.service: Unit {}.service '
                              'is masked.\n'.format(name, name))
            needs = service.get('needs_module')
            if needs and needs not in state['host']['modules']:
                raise Exit(1, 'Job for {}.service failed because the control '
                              'process exited with error code.\n'.format(
                                  name))
            if service.get('unit_file'):
                AFTER_STATE.append(exec_start(name) + (name,))
            if verb in ('restart', 'try-restart') and service['active']:
                _vgpu_manager_down(state, name, 'restarted')
            service['active'] = True
            service.pop('failed', None)
        elif verb == 'stop':
            if service['active']:
                _vgpu_manager_down(state, name, 'stopped')
            service['active'] = False
        elif verb == 'enable':
            service['enabled'] = True
        elif verb == 'disable':
            service['enabled'] = False
        elif verb == 'mask':
            service['masked'] = True
        elif verb == 'unmask':
            service['masked'] = False
        else:
            raise Exit(1, 'Unknown command verb {}.\n'.format(verb))


def _vgpu_manager_down(state, name, what):
    """A running vGPU Manager stopped or restarted: the guests lose the
    vGPUs it serves."""
    if name == 'nvidia-vgpu-mgr':
        guests_disrupted(state, '{} {} ({})'.format(
            name, what, ' '.join(COMMAND)))


# Commands to run once the state lock is released (a unit's ExecStart
# runs other fake commands, which take the lock themselves).
AFTER_STATE = []


def _unit_file(name):
    return os.path.join(HOST_ROOT, 'etc', 'systemd', 'system',
                        name + '.service')


def exec_start(name):
    """(argv, environment) of a charm-installed unit's ExecStart: a fake
    command by its name, or the charm's own Python module run by the
    simulator's interpreter against the sandbox host."""
    argv, environment = None, {}
    with open(_unit_file(name)) as stream:
        for line in stream:
            if line.startswith('Environment='):
                key, _, value = line.strip()[len('Environment='):].partition(
                    '=')
                environment[key] = value
            if line.startswith('ExecStart='):
                argv = line[len('ExecStart='):].split()
    if argv is None:
        raise Exit(1, 'unit {} has no ExecStart\n'.format(name))
    if os.path.basename(argv[0]).startswith('python3'):
        record('host', ['python3'] + argv[1:])
        environment['NVIDIA_VGPU_HOST_ROOT'] = HOST_ROOT
        # Only the unit's own path, and the simulator's host boundary
        # (runtime/: sysfs attributes take each write as one event).
        runtime = os.path.join(os.environ['SIM_REPO'], 'sim', 'runtime')
        environment['PYTHONPATH'] = os.pathsep.join(
            [runtime] + [part for part in [environment.get('PYTHONPATH')]
                         if part])
        return [os.environ['SIM_PYTHON']] + argv[1:], environment
    return [os.path.basename(argv[0])] + argv[1:], environment


def cmd_sriov_manage(state, argv):
    """NVIDIA's tool: -e enables (-d disables) the VFs of one GPU or ALL,
    which only works with the NVIDIA driver loaded."""
    if len(argv) != 2 or argv[0] not in ('-e', '-d'):
        raise Exit(1, 'usage: sriov-manage <-e|-d> <ssss:bb:dd.f|ALL>\n')
    if 'nvidia' not in state['host']['modules']:
        raise Exit(1, 'NVIDIA driver not loaded\n')
    sync_vf_types(state)
    guests, host = _sim()
    types = state['host'].setdefault('vf_vgpu_types', {})
    for function in state['host']['pci']:
        sriov = function.get('sriov')
        if not sriov or argv[1] not in ('ALL', function['address']):
            continue
        if argv[0] == '-e':
            state['host']['vfs'][function['address']] = sriov['total_vfs']
            continue
        # Disabled VFs are gone, and with them the types they were given.
        for vf in host.vf_addresses(
                function['address'],
                state['host']['vfs'].pop(function['address'], 0)):
            if vf in types:
                guests.vf_retyped(state['host'], STEP, vf, types.pop(vf),
                                  None, ' '.join(COMMAND))
    refresh_sysfs(state)


def refresh_sysfs(state):
    """Regenerate the sandbox's /sys after a change of hardware state,
    keeping the vGPU types written to VFs (host state)."""
    sync_vf_types(state)
    _, host = _sim()
    host.generate_sysfs(HOST_ROOT, state['host']['pci'],
                        host.hardware_state(state['host']))


def cmd_touch(state, argv):
    """Marker files (exec.d scripts use them): relative paths land in the
    hook's working directory (the charm dir), absolute ones in the host
    root; never on the machine running the simulator."""
    for name in argv:
        if name.startswith('-'):
            continue
        path = (HOST_ROOT + name if os.path.isabs(name)
                else os.path.abspath(name))
        if not path.startswith(HOST_ROOT + os.sep):
            raise Exit(1, 'touch: {} is outside the simulated host\n'.format(
                name))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, 'a').close()


def cmd_virtualenv(state, argv):
    """The host's virtualenv, which a built charm's layer:basic runs to
    rebuild its venv on upgrade-charm: a venv of the simulator's
    interpreter (the one the built charm's first venv was made with),
    inside the sandbox only."""
    opts, args = parse(argv, (), ('--never-download', '-ppython3',
                                  '--system-site-packages'))
    if len(args) != 1:
        raise Exit(2, 'virtualenv: give one destination\n')
    target = os.path.abspath(args[0])
    if not target.startswith(HOST_ROOT + os.sep):
        raise Exit(1, 'virtualenv: {} is outside the simulated host\n'
                   .format(args[0]))
    command = [os.environ['SIM_PYTHON'], '-m', 'venv', target]
    if '--system-site-packages' in opts:
        command.append('--system-site-packages')
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise Exit(done.returncode, done.stderr)


def cmd_service(state, argv):
    if len(argv) < 2:
        raise Exit(1)
    verb = {'status': 'is-active'}.get(argv[1], argv[1])
    cmd_systemctl(state, [verb, argv[0]])


def cmd_update_initramfs(state, argv):
    state['host']['initramfs_updated'] = True


def cmd_modprobe(state, argv):
    opts, args = parse(argv, (), ('-r', '--remove', '-q', '--quiet'))
    modules = state['host']['modules']
    for name in args[:1]:
        if '-r' in opts or '--remove' in opts:
            if name in modules:
                modules.remove(name)
        elif name not in modules:
            raise Exit(1, 'modprobe: FATAL: Module {} not found in directory '
                          '/lib/modules/{}\n'.format(
                              name, state['host']['kernel']['release']))


def cmd_rmmod(state, argv):
    cmd_modprobe(state, ['-r'] + argv)


def cmd_lsmod(state, argv):
    sys.stdout.write('Module                  Size  Used by\n')
    for name in state['host']['modules']:
        sys.stdout.write('{:<24}{:>6}  0\n'.format(name, 16384))


def cmd_mokutil(state, argv):
    """shim's key tool, where the mokutil package is installed:
    --sb-state, and --test-key on DKMS's certificate (the only key the
    simulated host has), worded as mokutil 0.6 words them."""
    if 'mokutil' not in _packages(state):
        raise Exit(127, 'mokutil: command not found\n')
    kernel = state['host']['kernel']
    if argv == ['--sb-state']:
        sys.stdout.write('SecureBoot {}\n'.format(
            'enabled' if kernel['secure_boot'] else 'disabled'))
        return
    if len(argv) == 2 and argv[0] in ('--test-key', '-t'):
        if not os.path.isfile(HOST_ROOT + argv[1]):
            raise Exit(255, 'Failed to open {}\n'.format(argv[1]))
        if kernel['mok'] == 'enrolled':
            sys.stdout.write('{} is already enrolled\n'.format(argv[1]))
        elif kernel['mok'] == 'imported':
            sys.stdout.write('{} is already in the enrollment request\n'
                             .format(argv[1]))
        else:
            sys.stdout.write('{} is not enrolled\n'.format(argv[1]))
            raise Exit(1)
        return
    raise Exit(2, 'mokutil: not simulated: {}\n'.format(' '.join(argv)))


def cmd_nc(state, argv):
    raise Exit(1)


def cmd_nvidia_smi(state, argv):
    """Installed with the vGPU Manager package; it needs the driver.
    Its output is NVIDIA's and no real capture is at hand, so the fake
    says plainly that it is a simulation rather than imitate it."""
    if not any(_is_driver_package(name) for name in _packages(state)):
        raise Exit(127, 'nvidia-smi: command not found\n')
    if 'nvidia' not in state['host']['modules']:
        raise Exit(9, 'simulated nvidia-smi: the NVIDIA driver is not '
                      'loaded\n')
    sys.stdout.write('simulated nvidia-smi {}: the simulator does not '
                     'emulate nvidia-smi output\n'.format(' '.join(argv)))


def cmd_mdevctl(state, argv):
    if 'mdevctl' not in _packages(state):
        raise Exit(127, 'mdevctl: command not found\n')
    state['host'].setdefault('mdevctl_calls', []).append(argv)


def pass_through(name, argv):
    if name == 'lspci':
        argv = ['-A', 'linux-sysfs', '-O',
                'sysfs.path={}/sys/bus/pci'.format(HOST_ROOT)] + argv
    # dpkg-deb runs tar and decompressors of its own; they only read.
    os.environ['PATH'] = READ_ONLY_ENV['PATH']
    os.execv(PASS_THROUGH[name], [PASS_THROUGH[name]] + argv)


def main(argv):
    name = os.path.basename(argv[0])
    args = argv[1:]
    COMMAND[:] = [name] + args
    if name in PASS_THROUGH:
        record('host', [name] + args)
        pass_through(name, args)
    if name in HOOK_TOOLS:
        record('tool', [name] + args)
        handler = globals()['tool_' + name.replace('-', '_')]
    elif name in HOST_COMMANDS:
        record('host', [name] + args)
        handler = globals()['cmd_' + name.replace('-', '_')]
    else:
        sys.stderr.write('{}: not simulated\n'.format(name))
        return 127
    try:
        with State() as state:
            fault = (state['host'].get('faults', {}).get(name)
                     if name in HOST_COMMANDS else None)
            if fault:
                # The scenario broke this command (a faults step).
                raise Exit(1, fault.rstrip('\n') + '\n')
            handler(state, args)
    except Exit as stop:
        sys.stderr.write(stop.message)
        return stop.code
    for command, environment, unit in AFTER_STATE:
        if not os.path.isabs(command[0]):
            command = [os.path.join(os.path.dirname(
                os.path.abspath(argv[0])), command[0])] + command[1:]
        done = subprocess.run(command, env=dict(os.environ, **environment))
        if done.returncode:
            # As systemd: the unit is left failed, systemctl says so.
            with State() as state:
                service = state['host']['services'][unit]
                service['active'] = False
                service['failed'] = True
            sys.stderr.write(
                'Job for {0}.service failed because the control process '
                'exited with error code.\nSee "systemctl status '
                '{0}.service" and "journalctl -xeu {0}.service" for '
                'details.\n'.format(unit))
            return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
