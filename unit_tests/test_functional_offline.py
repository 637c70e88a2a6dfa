"""The zaza functional tests, checked without a Juju controller.

Runs where zaza is installed (tox -e func-noop does); elsewhere it is
skipped, and says so.
"""
import json
import os

import pytest
import yaml

zaza_utils = pytest.importorskip(
    'zaza.charm_lifecycle.utils',
    reason='zaza is not installed here; tox -e func-noop runs these checks')

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(REPO, 'tests')
APPLICATION = 'nova-compute-nvidia-vgpu'
# tox -e build (charmcraft pack) gives one file per base.
BUILT_CHARM = '../../nova-compute-nvidia-vgpu_ubuntu-{}-amd64.charm'
BASES = {'bionic': '18.04', 'focal': '20.04', 'jammy': '22.04',
         'noble': '24.04'}
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
        assert ours['charm'] == BUILT_CHARM.format(
            BASES[bundle['series']]), name
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


@pytest.fixture(scope='module')
def vgpu_tests():
    import sys
    sys.path.insert(0, REPO)
    try:
        import tests.vgpu_tests as module
    finally:
        sys.path.remove(REPO)
    return module


@pytest.mark.parametrize('version, option, prefix', [
    ('2:17.0.13-0ubuntu5', 'enabled_vgpu_types', None),       # queens
    ('2:21.2.4-0ubuntu2', 'enabled_vgpu_types', 'vgpu_'),     # ussuri
    ('3:25.2.1-0ubuntu2', 'enabled_mdev_types', 'mdev_'),     # yoga
    ('3:29.2.0-0ubuntu1', 'enabled_mdev_types', 'mdev_'),     # caracal
])
def test_hardware_test_expects_novas_option_names_per_release(
        vgpu_tests, version, option, prefix):
    assert vgpu_tests.expected_nova_options(version) == (option, prefix)


def test_guest_flavor_asks_placement_for_one_vgpu(vgpu_tests):
    assert vgpu_tests.vgpu_flavor_specs() == {'resources:VGPU': '1'}
    assert vgpu_tests.vgpu_flavor_specs('CUSTOM_NVIDIA_108') == {
        'resources:VGPU': '1', 'trait:CUSTOM_NVIDIA_108': 'required'}


def test_guest_vgpu_is_found_in_its_libvirt_domain(vgpu_tests):
    mdev = ("<domain type='kvm'><devices><hostdev mode='subsystem' "
            "type='mdev' model='vfio-pci'><source><address "
            "uuid='3f2a'/></source></hostdev></devices></domain>")
    vf = ('<domain><devices><hostdev mode="subsystem" type="pci" '
          'managed="no"/></devices></domain>')
    plain = ("<domain><devices><disk type='file'/><interface "
             "type='bridge'/></devices></domain>")
    assert vgpu_tests.domain_has_vgpu(mdev)
    assert vgpu_tests.domain_has_vgpu(vf)
    assert not vgpu_tests.domain_has_vgpu(plain)


def test_guest_test_skips_without_a_gpu_cloud(vgpu_tests, monkeypatch):
    for name in ('TEST_NVIDIA_VGPU_HOST_SW', 'OS_AUTH_URL',
                 'TEST_VGPU_IMAGE'):
        monkeypatch.delenv(name, raising=False)
    assert vgpu_tests.guest_settings() is None
    monkeypatch.setenv('TEST_NVIDIA_VGPU_HOST_SW', '/tmp/vgpu.deb')
    monkeypatch.setenv('TEST_VGPU_DEVICE_MAPPINGS', "{'nvidia-108': []}")
    monkeypatch.setenv('OS_AUTH_URL', 'https://keystone.example:5000/v3')
    monkeypatch.setenv('TEST_VGPU_IMAGE', 'jammy')
    monkeypatch.setenv('TEST_VGPU_NETWORK', 'private')
    assert vgpu_tests.guest_settings() == ('jammy', 'private')


def test_published_sections_are_read_as_nova_compute_reads_them(
        vgpu_tests):
    settings = {'services': '["nvidia-vgpu-mgr"]',
                'subordinate_configuration': json.dumps({'nova': {
                    '/etc/nova/nova.conf': {'sections': {'devices': [
                        ['enabled_mdev_types', 'nvidia-108']]}}}})}
    assert vgpu_tests.nova_conf_sections(settings) == {
        'devices': [['enabled_mdev_types', 'nvidia-108']]}


def test_guest_test_has_its_cloud_client():
    import openstack  # noqa: F401  (tests/requirements.txt)


def test_the_hostile_values_hold_real_characters_the_charm_names(
        vgpu_tests):
    import re

    from nvidia_vgpu.nova import mappings
    assert len(vgpu_tests.HOSTILE_MAPPINGS) >= 6
    for value, character in vgpu_tests.HOSTILE_MAPPINGS:
        with pytest.raises(mappings.MappingError) as refused:
            mappings.parse(value)
        assert re.match(vgpu_tests.refusal_pattern(character),
                        str(refused.value)), str(refused.value)


def test_list_vgpu_types_lines_are_read_as_the_charm_writes_them(
        vgpu_tests):
    from nvidia_vgpu import vgpu_types
    record = {'type': 'nvidia-558', 'address': '0000:41:00.0',
              'name': 'NVIDIA A40-2Q', 'framebuffer': '2048M',
              'max_instance': '24', 'available_instances': 24, 'vfs': 32,
              'profile': 'A40-2Q', 'resource_class': 'VGPU',
              'flavor_property': 'resources:VGPU=1'}
    unnamed = dict(record, type='nvidia-999', profile=None,
                   resource_class=None, flavor_property=None)
    lines = vgpu_types.table([record, unnamed, dict(
        record, resource_class='CUSTOM_VGPU_A40_2Q',
        flavor_property='resources:CUSTOM_VGPU_A40_2Q=1')]).splitlines()
    found = [vgpu_tests.TYPE_LINE.match(line) for line in lines]
    assert [(match.group('profile'), match.group('resource_class'),
             match.group('flavor')) for match in found] == [
        ('A40-2Q', 'VGPU', 'resources:VGPU=1'), ('none', 'none', 'none'),
        ('A40-2Q', 'CUSTOM_VGPU_A40_2Q', 'resources:CUSTOM_VGPU_A40_2Q=1')]


@pytest.mark.parametrize('version, types, honoured', [
    ('2:21.2.4-0ubuntu2', 2, False),    # ussuri: no mdev_class
    ('3:25.2.1-0ubuntu2', 1, False),    # yoga, one type: Nova ignores it
    ('3:25.2.1-0ubuntu2', 2, True),
    ('3:28.0.1-0ubuntu1', 2, True),     # bobcat
    ('3:29.2.0-0ubuntu1', 1, True),     # caracal
])
def test_per_profile_test_expects_what_each_release_honours(
        vgpu_tests, version, types, honoured):
    assert vgpu_tests.per_profile_honoured(version, types) is honoured


def test_per_profile_test_reads_the_nova_conf_the_charm_renders(
        vgpu_tests, fake_commands):
    from nova_consumer import consume, published, render_text
    from nvidia_vgpu.nova import nova_config
    sections = nova_config.nova_sections(
        {'nvidia-105': ['0000:84:00.0'], 'nvidia-108': ['0000:85:00.0']},
        nova_config.CARACAL, {'nvidia-105': 'CUSTOM_VGPU_V100_1Q',
                              'nvidia-108': 'CUSTOM_VGPU_V100_8Q'})
    text = render_text(consume(fake_commands, published(sections)))
    assert vgpu_tests.enabled_types(text) == ['nvidia-105', 'nvidia-108']
    assert vgpu_tests.MDEV_CLASS.findall(text) == [
        'CUSTOM_VGPU_V100_1Q', 'CUSTOM_VGPU_V100_8Q']
    assert vgpu_tests.enabled_types('[DEFAULT]\n') == []
    # NVIDIA's vendor-specific VFIO driver: the class is in [pci].
    pci = nova_config.pci_passthrough_section(
        {'nvidia-1148': [('0000:41:00.4', '26b9')]},
        {'nvidia-1148': ('CUSTOM_VGPU_L40S_2Q', 'CUSTOM_VGPU_L40S_2Q')})
    text = render_text(consume(fake_commands, published({'pci': pci})))
    assert set(vgpu_tests.PCI_CLASS.findall(text)) == {
        'CUSTOM_VGPU_L40S_2Q'}
    assert vgpu_tests.MDEV_CLASS.findall(text) == []


def test_monitoring_test_runs_the_commands_the_charm_writes(
        vgpu_tests, monkeypatch):
    """The check commands read back from nrpe.d, as `grep -h` prints the
    files the charm wrote in the simulator's healthy V100 story."""
    record = os.path.join(REPO, 'unit_tests', 'data', 'scenario_outputs',
                          'monitoring', 'v100-healthy.json')
    with open(record) as stream:
        files = json.load(stream)['files']
    lines = [line for path, text in sorted(files.items())
             if path.startswith('/etc/nagios/nrpe.d/')
             for line in text.splitlines() if line.startswith('command[')]
    monkeypatch.setattr(vgpu_tests.zaza.model, 'run_on_unit',
                        lambda unit, command: {'Stdout': '\n'.join(lines)})
    commands = vgpu_tests.nrpe_commands('nova-compute-nvidia-vgpu/0')
    assert sorted(commands) == [
        'check_nvidia_vgpu_' + name for name in
        ('capacity', 'drift', 'driver', 'hardware', 'services', 'status',
         'waits')]
    assert commands['check_nvidia_vgpu_drift'].split() == [
        '/usr/local/lib/nagios/plugins/check_nvidia_vgpu',
        'nvidia_vgpu_drift', '--facts',
        '/var/lib/nova-compute-nvidia-vgpu/monitoring.json', '--max-age',
        '7200']


def test_mig_test_skips_without_its_settings(vgpu_tests, monkeypatch):
    for name in ('TEST_NVIDIA_VGPU_HOST_SW', 'TEST_MIG_LAYOUT',
                 'TEST_MIG_MAPPINGS'):
        monkeypatch.delenv(name, raising=False)
    assert vgpu_tests.mig_settings() is None
    monkeypatch.setenv('TEST_NVIDIA_VGPU_HOST_SW', '/tmp/vgpu.deb')
    monkeypatch.setenv('TEST_MIG_LAYOUT', "{'10de:2330': {'1g.10gb': 4}}")
    assert vgpu_tests.mig_settings() is None
    monkeypatch.setenv('TEST_MIG_MAPPINGS', "{'H100XM-1-10C': ['10de:2330']}")
    assert vgpu_tests.mig_settings() == (
        "{'10de:2330': {'1g.10gb': 4}}", "{'H100XM-1-10C': ['10de:2330']}")


def test_mig_test_reads_what_the_charm_lists_and_nova_gets(
        vgpu_tests, fake_commands):
    """The charm's own list-vgpu-types output and the nova.conf rendered
    from its plan, for an H100 cut into 4 1g.10gb and 1 3g.40gb
    instances with both sizes mapped: the test expects what they say."""
    from nova_consumer import consume, published, render_text
    from snapshots import (CARACAL, H100_VFS, h100, host, in_mig_mode,
                           rules)
    from nvidia_vgpu.model import GpuTypes, VgpuType
    from nvidia_vgpu.nova import plan, type_listing
    snapshot = in_mig_mode(host(h100(), nova=CARACAL),
                           *['1g.10gb'] * 4 + ['3g.40gb'])
    decided = plan.plan_nova(
        snapshot, "{'H100XM-1-10C': ['10de:2330'], "
        "'H100XM-3-40C': ['10de:2330']}", None, rules(CARACAL), None, None)
    text = render_text(consume(fake_commands, published(decided.sections)))
    assert vgpu_tests.mdev_devices(text) == {
        'nvidia-1130': list(H100_VFS[:4]), 'nvidia-1133': [H100_VFS[4]]}
    per_vf = [[VgpuType(type_id, vf, name, '', 1)
               for type_id, name in snapshot.offered[vf].items()]
              for vf in H100_VFS]
    listing = type_listing.listing(
        [GpuTypes('0000:41:00.0', per_vf, sriov=True)], 'VGPU',
        mig=dict(snapshot.mig))['output']
    assert vgpu_tests.vgpus_per_gpu_instance(listing) == {
        'nvidia-1130': 4, 'nvidia-1133': 1}
    assert vgpu_tests.vgpus_per_gpu_instance(
        'MIG on 0000:41:00.0: disabled') == {}
