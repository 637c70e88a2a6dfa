"""Simulated charms.layer.basic: the config flags layer:basic manages.

Rules (reactive-anatomy.md, section a): at the start of every hook, for
each option in config.yaml, set config.changed(.<opt>) if it changed since
the last successful hook (everything counts as changed in the first one),
toggle config.set.<opt> by truthiness and config.default.<opt> by equality
with the default; at the end of a successful hook, clear all of them.
"""
import os
import subprocess

import yaml


def bootstrap_charm_deps() -> None:
    """Dependencies are already installed: run exec.d pre-install scripts
    once each (a .<module>_charm-pre-install.done sentinel remembers),
    then put bin/ on PATH."""
    charm_dir = os.environ['JUJU_CHARM_DIR']
    execd = os.path.join(charm_dir, 'exec.d')
    for module in sorted(os.listdir(execd)) if os.path.isdir(execd) else []:
        script = os.path.join(execd, module, 'charm-pre-install')
        sentinel = os.path.join(execd, '.{}_charm-pre-install.done'.format(
            module))
        if os.access(script, os.X_OK) and not os.path.exists(sentinel):
            subprocess.run([script], check=True, cwd=charm_dir)
            open(sentinel, 'w').close()
    os.environ['PATH'] += ':' + os.path.join(charm_dir, 'bin')


def activate_venv() -> None:
    """The simulator's interpreter is the charm's environment."""


def _options() -> dict:
    from charmhelpers.core import hookenv
    path = os.path.join(hookenv.charm_dir(), 'config.yaml')
    if not os.path.exists(path):
        return {}
    with open(path) as stream:
        return (yaml.safe_load(stream) or {}).get('options', {})


def init_config_states() -> None:
    from charmhelpers.core import hookenv
    from charms.reactive import set_flag, toggle_flag
    config = hookenv.config()
    for name, definition in _options().items():
        if config.changed(name):
            set_flag('config.changed')
            set_flag('config.changed.' + name)
        toggle_flag('config.set.' + name, config.get(name))
        toggle_flag('config.default.' + name,
                    config.get(name) == definition.get('default'))


def clear_config_states() -> None:
    from charmhelpers.core import hookenv, unitdata
    from charms.reactive import clear_flag
    clear_flag('config.changed')
    for name in hookenv.config().keys():
        for family in ('config.changed.', 'config.set.', 'config.default.'):
            clear_flag(family + name)
    unitdata.kv().flush()
