"""Run charm-nova-compute's own functions, from a copy of its repository,
against a world of relation data (hook_tools), and say which services
each operation acted on:

    python -m sim.principal.nova_compute --repo PATH --world WORLD.json OP

OP: services | pause | resume | pre-series-upgrade | post-series-upgrade
| openstack-upgrade | status | resume-while-prepared (its resume action
after its pre-series-upgrade, before the upgrade) | pause-while-prepared
(resume-while-prepared, then its pause action). Prints {"services":
[...], "changed": [...], "checked": [...], "service_commands": [...],
"error": "..." where it raised} as JSON: the
principal's service list, the services the operation stopped, started,
restarted, disabled or masked, and those it only looked at.

Runs in its own process: the copy's bundled charmhelpers must be the one
imported. Only the host's package manager (apt, python-apt) and the
template renderer are replaced; service commands and hook tools are the
fakes on PATH, so the copy's functions run unchanged.
"""
import argparse
import json
import os
import sys
from typing import Any, Callable, Dict, List
from unittest import mock

from sim.principal import hook_tools

# What each operation calls in the copy: (hook name it runs in, function).
OPERATIONS: Dict[str, str] = {
    'services': 'config-changed',
    'pause': 'pause',
    'resume': 'resume',
    'pre-series-upgrade': 'pre-series-upgrade',
    'post-series-upgrade': 'post-series-upgrade',
    'openstack-upgrade': 'openstack-upgrade',
    'status': 'update-status',
    'resume-while-prepared': 'resume',
    'pause-while-prepared': 'pause',
}
# Operations run after others in the same unit (its unitdata and services
# as those left them): what each needs first.
BEFORE: Dict[str, List[str]] = {
    'resume': ['pause'],
    'post-series-upgrade': ['pause'],
    'resume-while-prepared': ['pre-series-upgrade'],
    'pause-while-prepared': ['pre-series-upgrade', 'resume'],
}
# Package operations do_openstack_upgrade runs: the host's, not nova's.
PACKAGE_OPERATIONS = ('configure_installation_source', 'apt_update',
                      'apt_upgrade', 'apt_install', 'remove_old_packages',
                      'reset_os_release', 'determine_packages',
                      'get_os_codename_install_source')


# Service verbs that change a service; the rest only look at it.
CHANGING = ('stop', 'start', 'restart', 'reload', 'disable', 'enable',
            'mask', 'unmask')


def acted_on(service_commands: List[List[str]],
             changing: bool = True) -> List[str]:
    """The services that `service NAME VERB` and `systemctl VERB [--flags]
    NAME` calls changed (or, changing=False, only looked at), each once,
    in first-seen order."""
    names: List[str] = []
    for argv in service_commands:
        words = [word for word in argv[1:] if not word.startswith('-')]
        if len(words) < 2:
            continue
        verb, name = ((words[1], words[0]) if argv[0] == 'service'
                      else (words[0], words[-1]))
        if (verb in CHANGING) == changing and name not in names:
            names.append(name)
    return names


def _import_copy(repo: str) -> Any:
    """nova_compute_utils from the copy, as its own unit tests import it
    (python-apt is not installed; the platform is Ubuntu jammy with
    systemd)."""
    sys.modules['apt'] = mock.MagicMock()
    sys.modules['apt_pkg'] = mock.MagicMock()
    sys.path[:0] = [os.path.join(repo, 'hooks'),
                    os.path.join(repo, 'actions')]
    mock.patch('charmhelpers.osplatform.get_platform',
               return_value='ubuntu').start()
    mock.patch('charmhelpers.core.host.lsb_release',
               return_value={'DISTRIB_CODENAME': 'jammy'}).start()
    # The host's init system: a compute host runs systemd.
    mock.patch('charmhelpers.core.host.init_is_systemd',
               return_value=True).start()
    import nova_compute_utils
    return nova_compute_utils


def _operation(utils: Any, name: str) -> Callable[[], None]:
    from charmhelpers.contrib.openstack import utils as os_utils
    # The template renderer: every context complete (the world relates
    # the principal to what it requires).
    configs = mock.MagicMock()
    configs.complete_contexts.return_value = sorted(
        {name for names in utils.REQUIRED_INTERFACES.values()
         for name in names})
    if name == 'openstack-upgrade':
        for function in PACKAGE_OPERATIONS:
            mock.patch.object(utils, function).start()
        return lambda: utils.do_openstack_upgrade(configs)
    return {
        'services': lambda: None,
        'pause': lambda: utils.pause_unit_helper(configs),
        'resume': lambda: utils.resume_unit_helper(configs),
        'pre-series-upgrade': lambda: os_utils.series_upgrade_prepare(
            utils.pause_unit_helper, configs),
        'post-series-upgrade': lambda: os_utils.series_upgrade_complete(
            utils.resume_unit_helper, configs),
        'status': lambda: utils.assess_status(configs),
        'resume-while-prepared': lambda: utils.resume_unit_helper(configs),
        'pause-while-prepared': lambda: utils.pause_unit_helper(configs),
    }[name]


def run(repo: str, world_path: str, name: str) -> Dict[str, Any]:
    """Run one operation here (the environment is set by `main`), after
    what it needs first (BEFORE); an exception it raises (an action's
    failure) is its "error"."""
    utils = _import_copy(repo)
    for earlier in BEFORE.get(name, []):
        try:
            _operation(utils, earlier)()
        except Exception:
            # A resume under a prepared upgrade fails its action, but
            # what it started runs (resume-while-prepared says so).
            pass
    operation = _operation(utils, name)
    before = len(hook_tools.calls(world_path))
    services = utils.services()
    error = None
    try:
        operation()
    except Exception as raised:
        error = str(raised)
    commands = hook_tools.service_calls(world_path, before)
    result = {'services': sorted(services), 'changed': acted_on(commands),
              'checked': acted_on(commands, changing=False),
              'service_commands': commands}
    if error is not None:
        result['error'] = error
    return result


def environment(repo: str, world_path: str, bin_dir: str,
                operation: str) -> Dict[str, str]:
    """The unit agent's environment for this operation."""
    return dict(
        os.environ, PATH=bin_dir + os.pathsep + os.environ['PATH'],
        WORLD=world_path, CHARM_DIR=repo, JUJU_UNIT_NAME='nova-compute/0',
        JUJU_HOOK_NAME=OPERATIONS[operation],
        UNIT_STATE_DB=world_path + '.unit-state.db')


def with_config_defaults(repo: str, world_path: str) -> None:
    """Give the world the principal's config.yaml defaults, as Juju
    gives a unit every option."""
    import yaml
    with open(os.path.join(repo, 'config.yaml')) as stream:
        options = yaml.safe_load(stream)['options']
    with open(world_path) as stream:
        world = json.load(stream)
    config = {name: option['default'] for name, option in options.items()
              if 'default' in option}
    config.update(world.get('config', {}))
    world['config'] = config
    with open(world_path, 'w') as stream:
        json.dump(world, stream, sort_keys=True)


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--repo', required=True)
    parser.add_argument('--world', required=True)
    parser.add_argument('operation', choices=sorted(OPERATIONS))
    args = parser.parse_args(argv)
    if os.environ.get('WORLD') != args.world:
        with_config_defaults(args.repo, args.world)
        os.execve(sys.executable,
                  [sys.executable, '-m', 'sim.principal.nova_compute'] + argv,
                  environment(args.repo, args.world, hook_tools.install(
                      args.world + '.tools', args.world),
                      args.operation))
    print(json.dumps(run(args.repo, args.world, args.operation),
                     sort_keys=True))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
