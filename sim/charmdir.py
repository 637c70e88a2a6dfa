"""Assemble the charm directory a hook runs in.

From src/: what `charm build` would produce, with the layers' run-time
parts played by sim/emulation. From --charm-dir: a copy of the built charm,
untouched, whose own layer:basic stubs and layer:openstack handlers run.
"""
import os
import shutil
from typing import Any, Dict, List

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
EMULATION = os.path.join(HERE, 'emulation')

STANDARD_HOOKS = (
    'install', 'config-changed', 'start', 'stop', 'update-status',
    'upgrade-charm', 'leader-elected', 'leader-settings-changed',
    'pre-series-upgrade', 'post-series-upgrade', 'remove',
)
RELATION_HOOKS = ('created', 'joined', 'changed', 'departed', 'broken')

# What layer:openstack adds to every charm built on it.
LAYER_OPENSTACK_REQUIRES = {'certificates': {'interface': 'tls-certificates'}}
# Published interface layers the build fetches, played by emulation/.
EMULATED_INTERFACES = {'tls-certificates': 'tls_certificates.py',
                       'juju-info': 'juju_info.py'}
LAYER_OPENSTACK_OPTIONS = {
    'debug': {'type': 'boolean', 'default': False},
    'verbose': {'type': 'boolean', 'default': False},
    'use-syslog': {'type': 'boolean', 'default': False},
    'use-internal-endpoints': {'type': 'boolean', 'default': False},
    'ssl_cert': {'type': 'string', 'default': None},
    'ssl_key': {'type': 'string', 'default': None},
    'ssl_ca': {'type': 'string', 'default': None},
}
LAYER_OPENSTACK_ACTIONS = {
    'pause': {'description': 'Pause services.'},
    'resume': {'description': 'Resume services.'},
    'restart-services': {'description': 'Restart services.'},
}


def _load(path: str) -> Dict[str, Any]:
    with open(path) as stream:
        return yaml.safe_load(stream) or {}


def _dump(path: str, data: Dict[str, Any]) -> None:
    with open(path, 'w') as stream:
        yaml.safe_dump(data, stream, default_flow_style=False)


def endpoints(metadata: Dict[str, Any]) -> List[str]:
    names = []
    for role in ('provides', 'requires', 'peers'):
        names += list(metadata.get(role) or {})
    return names


def _emulate_interface(charm_dir: str, name: str) -> None:
    """A published interface layer (requires side) from emulation/."""
    if name not in EMULATED_INTERFACES:
        raise ValueError('interface:{} is neither in interfaces/ nor '
                         'emulated in sim/emulation'.format(name))
    directory = os.path.join(charm_dir, 'hooks', 'relations', name)
    os.makedirs(directory)
    shutil.copy(os.path.join(EMULATION, EMULATED_INTERFACES[name]),
                os.path.join(directory, 'requires.py'))
    open(os.path.join(directory, '__init__.py'), 'w').close()


def assemble_from_source(repo_root: str, charm_dir: str) -> None:
    """Lay out src/ as a built charm would be, layers emulated."""
    src = os.path.join(repo_root, 'src')
    shutil.copytree(src, charm_dir, symlinks=True,
                    ignore=shutil.ignore_patterns('__pycache__', '*.pyc'))
    layer = _load(os.path.join(src, 'layer.yaml'))

    metadata = _load(os.path.join(src, 'metadata.yaml'))
    requires = dict(LAYER_OPENSTACK_REQUIRES)
    requires.update(metadata.get('requires') or {})
    metadata['requires'] = requires
    _dump(os.path.join(charm_dir, 'metadata.yaml'), metadata)

    deletes = set((layer.get('config') or {}).get('deletes', []))
    options = {name: spec for name, spec in LAYER_OPENSTACK_OPTIONS.items()
               if name not in deletes}
    options.update(_load(os.path.join(src, 'config.yaml'))['options'])
    _dump(os.path.join(charm_dir, 'config.yaml'), {'options': options})

    actions = dict(LAYER_OPENSTACK_ACTIONS)
    actions.update(_load(os.path.join(src, 'actions.yaml')))
    _dump(os.path.join(charm_dir, 'actions.yaml'), actions)

    interfaces = [include.split(':', 1)[1]
                  for include in layer.get('includes', [])
                  if include.startswith('interface:')]
    for name in interfaces:
        layer_dir = os.path.join(repo_root, 'interfaces', name)
        if os.path.isdir(layer_dir):
            # charm build finds the layer by the name layer.yaml gives
            # (interface:cos-agent) and installs it under the name its
            # interface.yaml gives (cos_agent), which charms.reactive
            # imports for the relations of that interface.
            installed = _load(os.path.join(layer_dir, 'interface.yaml'))
            # Without bytecode, as the layer (charm build leaves it out):
            # another process may be writing some there meanwhile.
            shutil.copytree(layer_dir, os.path.join(
                charm_dir, 'hooks', 'relations', installed['name']),
                ignore=shutil.ignore_patterns('__pycache__', '*.pyc'))
        else:
            _emulate_interface(charm_dir, name)
    # layer:openstack's own include.
    _emulate_interface(charm_dir, 'tls-certificates')

    layer_lib = os.path.join(charm_dir, 'lib', 'charms', 'layer')
    os.makedirs(layer_lib, exist_ok=True)
    shutil.copy(os.path.join(EMULATION, 'layer_init.py'),
                os.path.join(layer_lib, '__init__.py'))
    shutil.copy(os.path.join(EMULATION, 'basic.py'),
                os.path.join(layer_lib, 'basic.py'))
    os.makedirs(os.path.join(charm_dir, 'reactive'), exist_ok=True)
    shutil.copy(os.path.join(EMULATION, 'layer_openstack.py'),
                os.path.join(charm_dir, 'reactive', 'layer_openstack.py'))
    actions_dir = os.path.join(charm_dir, 'actions')
    os.makedirs(actions_dir, exist_ok=True)
    shutil.copy(os.path.join(EMULATION, 'os_actions.py'),
                os.path.join(actions_dir, 'os_actions.py'))
    for name in LAYER_OPENSTACK_ACTIONS:
        os.symlink('os_actions.py', os.path.join(actions_dir, name))

    hooks_dir = os.path.join(charm_dir, 'hooks')
    os.makedirs(hooks_dir, exist_ok=True)
    hook_names = list(STANDARD_HOOKS)
    for endpoint in endpoints(metadata):
        hook_names += ['{}-relation-{}'.format(endpoint, kind)
                       for kind in RELATION_HOOKS]
    for name in hook_names:
        target = os.path.join(hooks_dir, name)
        shutil.copy(os.path.join(EMULATION, 'hook.py'), target)
        os.chmod(target, 0o755)
    with open(os.path.join(charm_dir, 'revision'), 'w') as stream:
        stream.write('1\n')


def copy_built(built_dir: str, charm_dir: str) -> None:
    """Use a charm built by `charm build` as it is."""
    shutil.copytree(built_dir, charm_dir, symlinks=True)
    revision = os.path.join(charm_dir, 'revision')
    if not os.path.exists(revision):
        with open(revision, 'w') as stream:
            stream.write('1\n')
