"""Juju's hook tools, and the host's service commands, as the principal
unit (nova-compute/0) sees them, answered from a JSON world file:

    {"unit": "nova-compute/0",
     "config": {...},
     "relations": {"nova-vgpu": {"nova-vgpu:5": {
         "nova-compute-nvidia-vgpu/0": {"services": "[]"}}}}}

Every call is appended to WORLD.log as a JSON argv list, so what an
operation did to services can be read back. Services start out running;
`systemctl stop|start|restart` and `service NAME stop|start|restart`
change that (in WORLD.services), and `systemctl is-active` answers from
it. Package commands change nothing.
"""
import json
import os
import stat
import sys
from typing import Any, Dict, List, Optional, Tuple

HOOK_TOOLS = ('config-get', 'relation-ids', 'relation-list', 'relation-get',
              'relation-set', 'juju-log', 'status-set', 'status-get',
              'is-leader', 'application-version-set', 'unit-get',
              'action-get', 'action-set', 'action-fail', 'opened-ports',
              'open-port', 'close-port')
# Host commands the principal's helpers run through PATH.
HOST_COMMANDS = ('service', 'systemctl', 'apt-config', 'invoke-rc.d',
                 'update-rc.d', 'dpkg-query')
SERVICE_COMMANDS = ('service', 'systemctl')
REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def install(directory: str, world_path: str,
            python: str = sys.executable) -> str:
    """Write the tools into directory/bin; return that directory."""
    bin_dir = os.path.join(directory, 'bin')
    os.makedirs(bin_dir, exist_ok=True)
    for name in HOOK_TOOLS + HOST_COMMANDS:
        path = os.path.join(bin_dir, name)
        if os.path.lexists(path):
            os.remove(path)
        with open(path, 'w') as stream:
            stream.write(
                '#!/bin/sh\nPYTHONPATH={repo} WORLD={world} exec {python} '
                '-m sim.principal.hook_tools {name} "$@"\n'.format(
                    repo=REPO, world=world_path, python=python, name=name))
        os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return bin_dir


def calls(world_path: str) -> List[List[str]]:
    """Every tool call so far, in order."""
    if not os.path.exists(world_path + '.log'):
        return []
    with open(world_path + '.log') as stream:
        return [json.loads(line) for line in stream]


def service_calls(world_path: str, since: int = 0) -> List[List[str]]:
    """The service and systemctl calls from call number `since` on."""
    return [argv for argv in calls(world_path)[since:]
            if argv[0] in SERVICE_COMMANDS]


def _option(args: List[str], *flags: str) -> Optional[str]:
    for index, arg in enumerate(args):
        if arg in flags and index + 1 < len(args):
            return args[index + 1]
        for flag in flags:
            if arg.startswith(flag + '='):
                return arg.split('=', 1)[1]
    return None


def _positional(args: List[str]) -> List[str]:
    taking = ('-r', '--relation', '--format', '-l', '--log-level')
    return [arg for index, arg in enumerate(args)
            if not arg.startswith('-') and
            not (index and args[index - 1] in taking)]


def _units(world: Dict[str, Any], rid: str) -> Dict[str, Dict[str, str]]:
    for relations in world['relations'].values():
        if rid in relations:
            return relations[rid]
    return {}


def answer(world: Dict[str, Any], name: str, args: List[str]) -> Any:
    """What the tool prints (as JSON), or None for nothing."""
    positional = _positional(args)
    rid = _option(args, '-r', '--relation') or os.environ.get(
        'JUJU_RELATION_ID', '')
    if name == 'config-get':
        config = world.get('config', {})
        return config.get(positional[0]) if positional else config
    if name == 'relation-ids':
        return sorted(world['relations'].get(positional[0], {}))
    if name == 'relation-list':
        return sorted(_units(world, rid))
    if name == 'relation-get':
        key, unit = (positional + ['-', ''])[:2]
        data = _units(world, rid).get(unit, {})
        return data if key == '-' else data.get(key)
    if name == 'is-leader':
        return True
    return None


def service_state(stopped: List[str], name: str,
                  args: List[str]) -> Tuple[int, Optional[str]]:
    """(exit code, printed state) of a service command; updates stopped,
    the services not running."""
    words = [word for word in args if not word.startswith('-')]
    if len(words) < 2:
        return 0, None
    verb, service = (words[1], words[0]) if name == 'service' else (
        words[0], words[-1])
    if verb == 'stop' and service not in stopped:
        stopped.append(service)
    elif verb in ('start', 'restart') and service in stopped:
        stopped.remove(service)
    elif verb in ('is-active', 'status'):
        running = service not in stopped
        return (0, 'active') if running else (3, 'inactive')
    return 0, None


def main(argv: List[str]) -> int:
    name, args = argv[0], argv[1:]
    world_path = os.environ['WORLD']
    with open(world_path) as stream:
        world = json.load(stream)
    with open(world_path + '.log', 'a') as log:
        log.write(json.dumps([name] + args) + '\n')
    code, printed = 0, answer(world, name, args)
    if name in SERVICE_COMMANDS:
        stopped = _load(world_path + '.stopped', [])
        code, printed = service_state(stopped, name, args)
        with open(world_path + '.stopped', 'w') as stream:
            json.dump(stopped, stream)
    if printed is not None and '--quiet' not in args:
        print(printed if isinstance(printed, str) and
              not any(arg.startswith('--format') for arg in args)
              else json.dumps(printed))
    return code


def _load(path: str, default: Any) -> Any:
    if not os.path.exists(path):
        return default
    with open(path) as stream:
        return json.load(stream)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
