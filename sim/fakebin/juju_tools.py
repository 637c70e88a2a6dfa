"""Juju's hook tools, as a unit agent answers them: config, status,
relation data, leadership, ports, resources, actions, juju-reboot.
Each takes the locked state and the tool's arguments."""
import os
import sys

from sim.fakebin.state import Exit, out, parse

# juju-log, called dozens of times per hook, is a shell script of its own.
JUJU_LOG = '''#!/bin/sh
level=INFO
case "$1" in -l|--log-level) level=$2; shift 2 ;; esac
[ "$1" = --debug ] && shift
printf '%s %s\\n' "$level" "$*" >> "$SIM_LOG"
'''

RELATION_SET_HELP = """Usage: relation-set [options] key=value [key=value ...]
options:
--app  pass to set the application's relation settings
--file  (= -) file containing key-value pairs
-r, --relation  (= ) specify a relation by id
"""


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


# Each hook tool by the name it is called by.
TOOLS = {
    'action-fail': tool_action_fail,
    'action-get': tool_action_get,
    'action-log': tool_action_log,
    'action-set': tool_action_set,
    'application-version-set': tool_application_version_set,
    'close-port': tool_close_port,
    'config-get': tool_config_get,
    'goal-state': tool_goal_state,
    'is-leader': tool_is_leader,
    'juju-reboot': tool_juju_reboot,
    'leader-get': tool_leader_get,
    'leader-set': tool_leader_set,
    'network-get': tool_network_get,
    'open-port': tool_open_port,
    'opened-ports': tool_opened_ports,
    'relation-get': tool_relation_get,
    'relation-ids': tool_relation_ids,
    'relation-list': tool_relation_list,
    'relation-set': tool_relation_set,
    'resource-get': tool_resource_get,
    'status-get': tool_status_get,
    'status-set': tool_status_set,
    'unit-get': tool_unit_get,
}
HOOK_TOOLS = tuple(TOOLS)
