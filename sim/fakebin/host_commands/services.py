"""Services: systemctl and service over the simulated host's units, the
packaged ones and those the charm installs (whose ExecStart runs once
the state lock is released)."""
import os
import sys

from sim.fakebin.host_commands.common import guests_disrupted
from sim.fakebin.state import COMMAND, HOST_ROOT, Exit, parse, record


# Commands to run once the state lock is released (a unit's ExecStart
# runs other fake commands, which take the lock themselves).
AFTER_STATE = []


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
    if verb in QUERIES:
        # As systemctl: a line for each unit asked about, in order, and
        # a failing exit status if any of them is not so.
        codes = [QUERIES[verb](opts, _service(state, unit)[1])
                 for unit in units]
        return max(codes, default=0)
    for unit in units:
        name, service = _service(state, unit)
        _change(state, verb, name, _loaded(state, verb, name, service))


def _is_active(opts, service):
    active = bool(service and service['active'])
    if '--quiet' not in opts and '-q' not in opts:
        sys.stdout.write('active\n' if active else 'failed\n'
                         if service and service.get('failed')
                         else 'inactive\n')
    return 0 if active else 3


def _is_enabled(opts, service):
    enabled = bool(service and service['enabled'])
    sys.stdout.write('enabled\n' if enabled else 'disabled\n')
    return 0 if enabled else 1


# Verbs that only ask, by name.
QUERIES = {'is-active': _is_active, 'is-enabled': _is_enabled}
# Verbs that set one of a unit's settings: (key, value).
SETTINGS = {'enable': ('enabled', True), 'disable': ('enabled', False),
            'mask': ('masked', True), 'unmask': ('masked', False)}


def _loaded(state, verb, name, service):
    """The unit's record: a unit file the charm wrote is known from its
    first use; no unit at all fails as systemctl does."""
    if service is None and os.path.exists(_unit_file(name)):
        service = state['host']['services'].setdefault(name, {
            'active': False, 'enabled': False, 'masked': False,
            'unit_file': True})
    if service is None:
        raise Exit(5, 'Failed to {} {}.service: Unit {}.service not '
                      'found.\n'.format(verb, name, name))
    return service


def _change(state, verb, name, service):
    if verb in ('start', 'restart', 'reload', 'try-restart'):
        _start(state, verb, name, service)
    elif verb == 'stop':
        if service['active']:
            _vgpu_manager_down(state, name, 'stopped')
        service['active'] = False
    elif verb in SETTINGS:
        key, value = SETTINGS[verb]
        service[key] = value
    else:
        raise Exit(1, 'Unknown command verb {}.\n'.format(verb))


def _start(state, verb, name, service):
    """start, restart, reload, try-restart; a charm-installed oneshot
    unit's ExecStart runs once the lock is released (AFTER_STATE). A
    charm-installed daemon (any other Type, e.g. the metrics exporter)
    is only marked active: its ExecStart would never return."""
    if service['masked']:
        raise Exit(1, 'Failed to start {}.service: Unit {}.service '
                      'is masked.\n'.format(name, name))
    needs = service.get('needs_module')
    if needs and needs not in state['host']['modules']:
        raise Exit(1, 'Job for {}.service failed because the control '
                      'process exited with error code.\n'.format(name))
    if service.get('unit_file') and _oneshot(name):
        AFTER_STATE.append(exec_start(name) + (name,))
    if verb in ('restart', 'try-restart') and service['active']:
        _vgpu_manager_down(state, name, 'restarted')
    service['active'] = True
    service.pop('failed', None)


def _vgpu_manager_down(state, name, what):
    """A running vGPU Manager stopped or restarted: the guests lose the
    vGPUs it serves."""
    if name == 'nvidia-vgpu-mgr':
        guests_disrupted(state, '{} {} ({})'.format(
            name, what, ' '.join(COMMAND)))


def _unit_file(name):
    return os.path.join(HOST_ROOT, 'etc', 'systemd', 'system',
                        name + '.service')


def _oneshot(name):
    with open(_unit_file(name)) as stream:
        return 'Type=oneshot\n' in stream.read()


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


def cmd_service(state, argv):
    if len(argv) < 2:
        raise Exit(1)
    verb = {'status': 'is-active'}.get(argv[1], argv[1])
    return cmd_systemctl(state, [verb, argv[0]])
