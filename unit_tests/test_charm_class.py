"""The charm class: release selection from the installed nova-common."""
import importlib
import sys

import charmhelpers.contrib.openstack.utils as os_utils
import charmhelpers.core.hookenv as hookenv
import pytest

import charms_openstack.charm.core as core

MODULE = 'charm.openstack.nova_compute_nvidia_vgpu'


@pytest.fixture
def charm_module(tmp_path, monkeypatch):
    """The charm module freshly imported, as in each hook's process."""
    monkeypatch.setenv('CHARM_DIR', str(tmp_path))
    monkeypatch.setenv('JUJU_CHARM_DIR', str(tmp_path))
    monkeypatch.setattr(core, '_releases', {})
    monkeypatch.setattr(core, '_singleton', None)
    monkeypatch.setattr(core, '_release_selector_function', None)
    monkeypatch.setattr(os_utils, 'OPENSTACK_RELEASES',
                        os_utils.OPENSTACK_RELEASES)
    monkeypatch.setattr(os_utils.CompareOpenStackReleases, '_list',
                        os_utils.CompareOpenStackReleases._list)
    hookenv.cache.clear()
    sys.modules.pop(MODULE, None)
    yield importlib.import_module(MODULE)
    sys.modules.pop(MODULE, None)


def installed(fake_commands, version):
    fake_commands.set('dpkg-query',
                      stdout='ii \t{}'.format(version) if version else '',
                      exit=0 if version else 1)


@pytest.mark.parametrize('version, release', [
    ('2:17.0.13-0ubuntu5', 'queens'),
    ('3:25.2.1-0ubuntu2', 'yoga'),
    ('3:29.2.0-0ubuntu1', 'caracal'),
    ('3:34.0.0-0ubuntu1', 'hibiscus'),
])
def test_release_comes_from_nova_common(charm_module, fake_commands,
                                        version, release):
    installed(fake_commands, version)
    assert charm_module.select_release() == release
    assert fake_commands.calls == [[
        'dpkg-query', '--show',
        '--showformat=${db:Status-Abbrev}\t${Version}', 'nova-common']]


def test_no_release_before_nova_is_installed(charm_module, fake_commands):
    installed(fake_commands, None)
    assert charm_module.select_release() is None


def test_a_removed_but_not_purged_nova_is_not_installed(charm_module,
                                                        fake_commands):
    fake_commands.set('dpkg-query', stdout='rc \t3:25.2.1-0ubuntu2')
    assert charm_module.select_release() is None


def test_releases_past_yoga_are_accepted_and_ordered(charm_module):
    assert 'hibiscus' in os_utils.OPENSTACK_RELEASES
    assert os_utils.CompareOpenStackReleases('caracal') > 'yoga'
    assert os_utils.CompareOpenStackReleases('antelope') > 'zed'


def test_the_hook_instance_is_chosen_through_the_selector(charm_module,
                                                          fake_commands):
    installed(fake_commands, '3:29.2.0-0ubuntu1')
    fake_commands.set('config-get', stdout='{"vgpu-device-mappings": ""}')
    instance = charm_module.NovaComputeNvidiaVgpuCharm.singleton
    assert isinstance(instance, charm_module.NovaComputeNvidiaVgpuCharm)
    assert instance.release == 'caracal'


@pytest.mark.parametrize('version, options, limit', [
    ('2:17.0.13-0ubuntu5', 'QUEENS', 1),
    ('2:20.6.1-0ubuntu1~cloud0', 'QUEENS', 1),
    ('3:21.2.4-0ubuntu2.13', 'USSURI', 1),
    ('3:22.2.0-0ubuntu1~cloud0', 'USSURI', 1),
    ('3:22.2.1-0ubuntu1~cloud0', 'USSURI', None),
    ('3:23.2.2-0ubuntu1~cloud0', 'USSURI', None),
    ('3:24.2.1-0ubuntu1~cloud0', 'XENA', None),
    ('3:25.2.1-0ubuntu2', 'XENA', None),
    ('3:28.0.1-0ubuntu1~cloud0', 'XENA', None),
    ('3:29.2.0-0ubuntu1', 'CARACAL', None),
    ('3:30.0.0-0ubuntu1~cloud0', 'CARACAL', None),
    ('3:31.0.0-0ubuntu1~cloud0', 'EPOXY', None),
    ('3:34.0.0-0ubuntu1', 'EPOXY', None),
    ('3:40.0.0-0ubuntu1', 'EPOXY', None),
])
def test_each_release_family_gets_its_nova_options(
        charm_module, fake_commands, version, options, limit):
    """The instance charms.openstack chooses for the installed nova
    plans with that release's row of families.FAMILIES."""
    from nvidia_vgpu.nova import families, nova_config
    installed(fake_commands, version)
    fake_commands.set('config-get', stdout='{"vgpu-device-mappings": ""}')
    instance = charm_module.NovaComputeNvidiaVgpuCharm.singleton
    rules = families.nova_rules(instance.context.host.nova_version)
    assert rules.options == getattr(nova_config, options)
    assert rules.type_limit == limit


def test_releases_packages_map_names_every_release_family(charm_module):
    instance = charm_module.NovaComputeNvidiaVgpuCharm(config={})
    assert sorted(instance.releases_packages_map) == [
        'caracal', 'dalmatian', 'epoxy', 'queens', 'ussuri', 'victoria',
        'xena']
