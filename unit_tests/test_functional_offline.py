"""The zaza functional tests, checked without a Juju controller.

Runs where zaza is installed (tox -e func-noop does); elsewhere it is
skipped, and says so.
"""
import os

import pytest
import yaml

zaza_utils = pytest.importorskip(
    'zaza.charm_lifecycle.utils',
    reason='zaza is not installed here; tox -e func-noop runs these checks')

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(REPO, 'tests')
APPLICATION = 'nova-compute-nvidia-vgpu'
BUILT_CHARM = '../../nova-compute-nvidia-vgpu.charm'
# Ubuntu series -> OpenStack releases it ships (distro first, then the
# Ubuntu Cloud Archive), from ../shared/reference/nova-vgpu-config.md.
SHIPPED = {
    'bionic': ['queens', 'rocky', 'stein', 'train', 'ussuri'],
    'focal': ['ussuri', 'victoria', 'wallaby', 'xena', 'yoga'],
    'jammy': ['yoga', 'zed', 'antelope', 'bobcat', 'caracal'],
    'noble': ['caracal', 'dalmatian', 'epoxy', 'flamingo', 'gazpacho'],
}


@pytest.fixture(scope='module')
def config():
    return zaza_utils.get_charm_config(
        yaml_file=os.path.join(TESTS, 'tests.yaml'))


def bundle_names(config):
    names = []
    for key in ('smoke_bundles', 'gate_bundles', 'dev_bundles'):
        names += [name for name in config.get(key, []) if
                  name not in names]
    return names


def load_bundle(name):
    with open(os.path.join(TESTS, 'bundles', name + '.yaml')) as stream:
        return yaml.safe_load(stream)


def test_every_test_and_configure_step_imports(config, monkeypatch):
    monkeypatch.chdir(REPO)
    steps = config['tests'] + config.get('configure', [])
    for path in steps:
        assert zaza_utils.get_class(path) is not None, path


def test_required_series_release_pairs_are_tested(config):
    assert {'bionic-queens', 'focal-ussuri', 'focal-yoga', 'jammy-yoga',
            'jammy-caracal', 'noble-caracal'} <= set(bundle_names(config))


def test_every_bundle_deploys_the_built_charm_beside_nova_compute(config):
    for name in bundle_names(config):
        bundle = load_bundle(name)
        ours = bundle['applications'][APPLICATION]
        assert ours['charm'] == BUILT_CHARM, name
        assert 'num_units' not in ours, name
        relations = [sorted(pair) for pair in bundle['relations']]
        assert sorted(['nova-compute:nova-vgpu',
                       APPLICATION + ':nova-vgpu']) in relations, name


def test_series_and_release_are_ones_ubuntu_ships(config):
    for name in bundle_names(config):
        series, release = name.split('-', 1)
        bundle = load_bundle(name)
        assert bundle['series'] == series
        assert release in SHIPPED[series], name
        origin = bundle['variables']['openstack-origin']
        expected = ('distro' if release == SHIPPED[series][0] else
                    'cloud:{}-{}'.format(series, release))
        assert origin == expected, name


def test_forced_deploys_name_real_bundles(config):
    forced = config.get('tests_options', {}).get('force_deploy', [])
    assert set(forced) <= set(bundle_names(config))
