"""The charm layer's declarations, as Juju and charm build will read them."""
import ast
import importlib.util
import os
import sys
import sysconfig

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(REPO, 'src')


def load(name):
    with open(os.path.join(SRC, name)) as stream:
        return yaml.safe_load(stream)


def test_top_level_declarations_are_links_into_src():
    for name in ('layer.yaml', 'metadata.yaml', 'config.yaml',
                 'actions.yaml', 'wheelhouse.txt'):
        path = os.path.join(REPO, name)
        assert os.path.islink(path), name
        assert os.readlink(path) == os.path.join('src', name)
        assert os.path.exists(path), name


def test_metadata_is_a_nova_compute_subordinate():
    metadata = load('metadata.yaml')
    assert metadata['name'] == 'nova-compute-nvidia-vgpu'
    assert metadata['subordinate'] is True
    assert metadata['provides'] == {
        'nova-vgpu': {'interface': 'nova-vgpu', 'scope': 'container'},
        'nrpe-external-master': {'interface': 'nrpe-external-master',
                                 'scope': 'container'},
        'cos-agent': {'interface': 'cos_agent', 'limit': 1}}
    assert metadata['requires'] == {
        'juju-info': {'interface': 'juju-info', 'scope': 'container'}}
    assert metadata['series'] == ['bionic', 'focal', 'jammy', 'noble']
    assert metadata['min-juju-version'] == '2.9.0'
    assert 'openstack' in metadata['tags']


def test_resource_tells_the_operator_what_to_upload():
    resource = load('metadata.yaml')['resources']['nvidia-vgpu-software']
    assert resource['type'] == 'file'
    assert resource['filename'] == 'nvidia-vgpu.deb'
    assert 'nvidia-vgpu-ubuntu' in resource['description']
    assert 'guest driver' in resource['description']


def test_config_declares_mappings_with_an_example():
    option = load('config.yaml')['options']['vgpu-device-mappings']
    assert option['type'] == 'string'
    assert option['default'] == ''
    assert "'nvidia-35': ['0000:84:00.0'" in option['description']


def test_actions_declare_the_charms_actions_and_their_scripts():
    actions = load('actions.yaml')
    assert set(actions) == {"list-vgpu-types", "pause", "restart-services",
                            "install-vgpu-software", "vgpu-health",
                            "preview-config", "check-series-upgrade"}
    for name in ('list-vgpu-types', 'install-vgpu-software', 'vgpu-health',
                 'preview-config', 'check-series-upgrade'):
        script = os.path.join(SRC, 'actions', name)
        assert os.access(script, os.X_OK)
    # layer:openstack brings pause's and restart-services' scripts; this
    # charm adds force=true to both, since both stop the vGPU Manager, and
    # to install-vgpu-software, which replaces it.
    assert 'force' in actions['install-vgpu-software']['params']
    for name in ('pause', 'restart-services'):
        assert actions[name]['params']['force'] == {
            'type': 'boolean', 'default': False,
            'description': actions[name]['params']['force']['description']}
        assert not os.path.exists(os.path.join(SRC, 'actions', name))
    # The health check takes nothing: it only reads the host.
    assert 'params' not in actions['vgpu-health']
    # The preview takes the options it previews, in their own form.
    config = load('config.yaml')['options']
    assert {name: param['type'] for name, param in
            actions['preview-config']['params'].items()} == {
        name: config[name]['type'] for name in (
            'vgpu-device-mappings', 'mig-layout', 'vgpu-resource-class')}


def test_layer_builds_on_layer_openstack_in_a_venv():
    layer = load('layer.yaml')
    assert 'layer:openstack' in layer['includes']
    assert 'interface:nova-vgpu' in layer['includes']
    # The subordinate's container relation needs its interface layer, or
    # charms.reactive logs an error in every hook.
    assert 'interface:juju-info' in layer['includes']
    assert os.path.isfile(os.path.join(REPO, 'interfaces', 'nova-vgpu',
                                       'provides.py'))
    # charm build finds interface:cos-agent in interfaces/cos-agent and
    # installs it as hooks/relations/<its interface.yaml name>, which must
    # be metadata's interface for charms.reactive to import it.
    assert 'interface:cos-agent' in layer['includes']
    with open(os.path.join(REPO, 'interfaces', 'cos-agent',
                           'interface.yaml')) as stream:
        assert yaml.safe_load(stream)['name'] == \
            load('metadata.yaml')['provides']['cos-agent']['interface']
    assert layer['options']['basic']['use_venv'] is True
    assert 'pciutils' in layer['options']['basic']['packages']


def test_layer_openstack_options_the_charm_does_not_use_are_deleted():
    deleted = set(load('layer.yaml')['config']['deletes'])
    assert deleted == {'debug', 'verbose', 'use-syslog',
                       'use-internal-endpoints', 'ssl_ca', 'ssl_cert',
                       'ssl_key'}


# The framework the layers bring, by import name.
FROM_LAYERS = {'charmhelpers', 'charms', 'charms_openstack'}
# This charm's own packages (src/lib, src/reactive, the interface layer).
OWN = {'charm', 'nvidia_vgpu', 'reactive', 'relations'}
DISTRIBUTION_IMPORTS = {'PyYAML': 'yaml', 'nvidia-ml-py': 'pynvml'}
# Narrower pins of what a layer's wheelhouse brings, for the build.
LAYER_PINS = {'dnspython', 'charms.reactive', 'charmhelpers', 'setuptools',
              'netifaces'}


def is_stdlib(name):
    """sys.stdlib_module_names is Python 3.10 and later; older ones (the
    bionic and focal test runs) are asked where the module lives."""
    if hasattr(sys, 'stdlib_module_names'):
        return name in sys.stdlib_module_names
    if name in sys.builtin_module_names:
        return True
    spec = importlib.util.find_spec(name)
    stdlib = os.path.realpath(sysconfig.get_paths()['stdlib'])
    return bool(spec and spec.origin and
                os.path.realpath(spec.origin).startswith(stdlib + os.sep) and
                'site-packages' not in spec.origin)


def third_party_imports():
    found = set()
    for directory, _, files in os.walk(SRC):
        for name in files:
            path = os.path.join(directory, name)
            if not name.endswith('.py') and not (
                    os.path.basename(directory) == 'actions'):
                continue
            if os.path.islink(path):
                continue
            with open(path) as stream:
                tree = ast.parse(stream.read(), path)
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    found |= {alias.name.split('.')[0]
                              for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    found.add(node.module.split('.')[0])
    return {name for name in found if not is_stdlib(name)} - \
        FROM_LAYERS - OWN


def wheelhouse_imports():
    names = set()
    with open(os.path.join(SRC, 'wheelhouse.txt')) as stream:
        for line in stream:
            line = line.split('#', 1)[0].split(';', 1)[0].strip()
            if not line or line.startswith('git+'):
                continue
            distribution = line.split('<')[0].split('>')[0].split('=')[0]
            if distribution in LAYER_PINS:
                continue
            names.add(DISTRIBUTION_IMPORTS.get(distribution, distribution))
    return names


def test_wheelhouse_lists_exactly_what_the_charm_imports():
    assert third_party_imports() == wheelhouse_imports()
