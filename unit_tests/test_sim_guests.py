"""The simulator's guests: the guests step, VFs as PCI hostdevs, the
vGPU types VFs keep, the oracle of broken vGPUs, and apt's downgrades."""
import contextlib
import io
import os
import sys
import xml.etree.ElementTree as ElementTree

import pytest

from sim import guests, host, scenario
from simulation import simulations

UUID_A = '4b20d080-1b54-4048-85b3-a6a62d165c01'
UUID_B = '9f1c2a7e-3d5b-4e8f-a0c6-1b2d3e4f5a6b'
V100 = {'address': '0000:84:00.0', 'vendor': '10de', 'device': '1db4',
        'class': '030200', 'driver': 'nvidia',
        'mdev_types': {'nvidia-108': {
            'name': 'GRID V100-8Q', 'available_instances': 1,
            'description': 'framebuffer=8192M, max_instance=2'}}}
L40S = {'address': '0000:41:00.0', 'vendor': '10de', 'device': '26b9',
        'class': '030200', 'driver': 'nvidia',
        'sriov': {'total_vfs': 4, 'vf_vgpu_types': {
            1145: 'NVIDIA L40S-1B', 1148: 'NVIDIA L40S-2Q'}}}
VF = '0000:41:00.4'
DRIVER = {'package': 'nvidia-vgpu-ubuntu-550', 'version': '550.54.16'}


# ------------------------------------------------------------ domains

def test_a_vf_is_a_plain_pci_hostdev_as_libvirt_writes_it():
    text = host.domain_xml({'name': 'instance-0000002a', 'pci': [VF]})
    flat = ''.join(line.strip() for line in text.splitlines())
    assert ("<hostdev mode='subsystem' type='pci' managed='no'><source>"
            "<address domain='0x0000' bus='0x41' slot='0x00' "
            "function='0x4'/></source>") in flat
    hostdev, = ElementTree.fromstring(text).iter('hostdev')
    # The guest-side address is libvirt's too; only <source> is the VF.
    assert hostdev.find('source/address').attrib == {
        'domain': '0x0000', 'bus': '0x41', 'slot': '0x00',
        'function': '0x4'}
    assert hostdev.find('address').get('type') == 'pci'


def test_a_guest_may_hold_mdevs_and_vfs_in_one_definition():
    root = ElementTree.fromstring(host.domain_xml(
        {'name': 'g', 'mdevs': [UUID_A], 'pci': [VF, '0000:41:01.1']}))
    assert root.findtext('name') == 'g'
    assert [(dev.get('type'), dev.find('source/address').attrib)
            for dev in root.iter('hostdev')] == [
        ('mdev', {'uuid': UUID_A}),
        ('pci', {'domain': '0x0000', 'bus': '0x41', 'slot': '0x00',
                 'function': '0x4'}),
        ('pci', {'domain': '0x0000', 'bus': '0x41', 'slot': '0x01',
                 'function': '0x1'})]
    slots = [dev.find('address').get('slot') for dev in root.iter('hostdev')]
    assert len(set(slots)) == 3


def test_domain_definitions_become_exactly_the_given_ones(tmp_path):
    host.write_libvirt_domains(str(tmp_path), [{'name': 'a'}, {'name': 'b'}])
    host.write_libvirt_domains(str(tmp_path), [{'name': 'c'}])
    assert os.listdir(str(tmp_path / 'etc/libvirt/qemu')) == ['c.xml']


def test_running_domains_have_live_state_shut_off_ones_only_a_definition(
        tmp_path):
    host.write_libvirt_domains(str(tmp_path), [
        {'name': 'up', 'mdevs': [UUID_A]},
        {'name': 'off', 'mdevs': [UUID_B], 'state': 'shutoff'},
        {'name': 'also-up', 'state': 'running'}])
    assert sorted(os.listdir(str(tmp_path / 'etc/libvirt/qemu'))) == [
        'also-up.xml', 'off.xml', 'up.xml']
    live = str(tmp_path / 'run/libvirt/qemu')
    assert sorted(os.listdir(live)) == ['also-up.xml', 'up.xml']
    # libvirt's record: the live definition inside <domstatus>.
    root = ElementTree.parse(os.path.join(live, 'up.xml')).getroot()
    assert root.tag == 'domstatus' and root.get('state') == 'running'
    assert root.findtext('domain/name') == 'up'
    assert [dev.find('source/address').get('uuid')
            for dev in root.iter('hostdev')] == [UUID_A]
    # The guest stops: its live state goes, its definition stays.
    host.write_libvirt_domains(str(tmp_path), [
        {'name': 'up', 'mdevs': [UUID_A], 'state': 'shutoff'}])
    assert os.listdir(str(tmp_path / 'etc/libvirt/qemu')) == ['up.xml']
    assert os.listdir(live) == []


# ------------------------------------------------------ VF vGPU types

def _vf_type_file(root, vf=VF):
    return os.path.join(host.device_dir(root, vf), 'nvidia',
                        'current_vgpu_type')


def _read(path):
    with open(path) as stream:
        return stream.read()


def test_a_written_vf_type_survives_regeneration_once_collected(tmp_path):
    root = str(tmp_path)
    state = {'pci': [L40S], 'modules': ['nvidia'], 'vfs': {L40S['address']:
                                                           4}, 'mdevs': []}
    host.generate_sysfs(root, [L40S], host.hardware_state(state))
    assert _read(_vf_type_file(root)) == '0\n'
    with open(_vf_type_file(root), 'w') as stream:
        stream.write('1148')
    assert host.collect_vf_vgpu_types(root, state) == [(VF, 0, 1148)]
    assert host.collect_vf_vgpu_types(root, state) == []
    host.generate_sysfs(root, [L40S], host.hardware_state(state))
    assert _read(_vf_type_file(root)) == '1148\n'
    assert _read(_vf_type_file(root, '0000:41:00.5')) == '0\n'
    with open(_vf_type_file(root), 'w') as stream:
        stream.write('0')
    assert host.collect_vf_vgpu_types(root, state) == [(VF, 1148, 0)]
    assert state['vf_vgpu_types'] == {}


def test_a_type_for_vfs_not_yet_enabled_waits_for_them(tmp_path):
    root = str(tmp_path)
    state = {'pci': [L40S], 'modules': ['nvidia'], 'vfs': {}, 'mdevs': [],
             'vf_vgpu_types': {VF: 1148}}
    host.generate_sysfs(root, [L40S], host.hardware_state(state))
    assert host.collect_vf_vgpu_types(root, state) == []
    assert state['vf_vgpu_types'] == {VF: 1148}
    state['vfs'] = {L40S['address']: 4}
    host.generate_sysfs(root, [L40S], host.hardware_state(state))
    assert _read(_vf_type_file(root)) == '1148\n'


# ---------------------------------------------------- who uses a vGPU

def test_guests_use_vgpus_through_existing_mdevs_and_typed_vfs():
    state = {
        'mdevs': [{'uuid': UUID_A, 'parent': '0000:84:00.0',
                   'type': 'nvidia-108'}],
        'vf_vgpu_types': {VF: 1148},
        'libvirt_domains': [
            {'name': 'on-vf', 'pci': [VF]},
            {'name': 'on-untyped-vf', 'pci': ['0000:41:00.5']},
            {'name': 'on-mdev', 'mdevs': [UUID_A.upper()]},
            {'name': 'on-gone-mdev', 'mdevs': [UUID_B]},
            {'name': 'plain'}]}
    assert guests.vgpu_guests(state) == ['on-mdev', 'on-vf']
    state['libvirt_domains'][2]['state'] = 'shutoff'
    # Stopping the vGPU Manager breaks only the running guest's vGPU;
    # removing the driver breaks the shut-off one's too.
    assert guests.vgpu_guests(state) == ['on-vf']
    assert guests.vgpu_guests(state, running_only=False) == [
        'on-mdev', 'on-vf']
    guests.vf_retyped(state, 3, VF, 1148, 1145)
    guests.vf_retyped(state, 4, '0000:41:00.5', 0, 1148)
    assert state['guest_disruptions'] == [
        {'step': 3, 'guest': 'on-vf',
         'cause': 'VF 0000:41:00.4 vGPU type 1148 -> 1145'}]


# -------------------------------------------------- scenario checking

@pytest.mark.parametrize('data, message', [
    ({'steps': [{'guests': {'domains': []}}]},
     "steps[0].guests: unknown key 'domains'"),
    ({'steps': [{'guests': []}]},
     'steps[0].guests: expected a mapping, got list'),
    ({'steps': [{'guests': {'mdevs': {}}}]},
     'steps[0].guests.mdevs: wrong type dict'),
    ({'steps': [{'guests': {'mdevs': [{'uuid': UUID_A}]}}]},
     "steps[0].guests.mdevs[0]: missing key 'parent'"),
    ({'steps': [{'guests': {'libvirt_domains': [
        {'name': 'g', 'pci': '0000:41:00.4'}]}}]},
     'steps[0].guests.libvirt_domains[0].pci: wrong type str'),
    ({'host': {'libvirt_domains': [{'name': 'g', 'pci': ['41:00.4']}]}},
     "host.libvirt_domains[0].pci: '41:00.4' is not a PCI address such "
     "as 0000:41:00.4"),
    ({'host': {'libvirt_domains': [{'name': 'g', 'mdevs': [7]}]}},
     'host.libvirt_domains[0].mdevs: 7 is not text'),
    ({'host': {'libvirt_domains': [{'name': 'g', 'state': 'paused'}]}},
     "host.libvirt_domains[0].state: 'paused' is not one of running, "
     "shutoff"),
    ({'steps': [{'guests': {'libvirt_domains': [
        {'name': 'g', 'state': 'shut off'}]}}]},
     "steps[0].guests.libvirt_domains[0].state: 'shut off' is not one of "
     "running, shutoff"),
    ({'host': {'libvirt_domains': [{'name': 'g', 'state': True}]}},
     'host.libvirt_domains[0].state: wrong type bool'),
    ({'host': {'vf_vgpu_types': {VF: '1148'}}},
     'host.vf_vgpu_types.0000:41:00.4: expected a vGPU type id such as '
     '1148'),
    ({'host': {'vf_vgpu_types': {'vf4': 1148}}},
     "host.vf_vgpu_types: 'vf4' is not a PCI address such as 0000:41:00.4"),
])
def test_bad_guests_are_named_precisely(data, message):
    with pytest.raises(scenario.ScenarioError) as error:
        scenario.validate(data)
    assert str(error.value) == message


# ----------------------------------------- against a simulated host

@pytest.fixture
def simulated(tmp_path):
    """A set-up simulation of a scenario's host (no hook run yet)."""
    with simulations(tmp_path) as make:
        yield make


def run(simulation, *commands):
    """Shell command lines run as a hook would run them (the fake tools
    on PATH); their exit codes and what they printed."""
    codes, printed = [], io.StringIO()
    with contextlib.redirect_stderr(printed):
        for command in commands:
            codes.append(simulation.run_program(
                ['/bin/sh', '-c', command + ' 1>&2'], bare=True))
    return codes, printed.getvalue()


def deb(simulation, version, package='nvidia-vgpu-ubuntu-550'):
    return host.build_deb(
        os.path.join(simulation.host_root, 'tmp', version),
        {'package': package, 'version': version})


def output_host(simulation):
    return simulation.report()['host']


def test_guests_step_replaces_domains_and_mdevs_and_runs_no_hook(
        simulated):
    simulation = simulated({'host': {
        'pci': [V100], 'kernel_modules': ['nvidia'],
        'mdevs': [{'uuid': UUID_A, 'parent': V100['address'],
                   'type': 'nvidia-108'}],
        'libvirt_domains': [{'name': 'old', 'mdevs': [UUID_A]}]}})
    available = os.path.join(host.device_dir(simulation.host_root,
                                             V100['address']),
                             'mdev_supported_types', 'nvidia-108',
                             'available_instances')
    # As the scenario gives it: 2 at most, one taken.
    assert _read(available) == '1\n'
    record = simulation.run_step({'guests': {
        'libvirt_domains': [{'name': 'new', 'mdevs': [UUID_B]}],
        'mdevs': [{'uuid': UUID_B, 'parent': V100['address'],
                   'type': 'nvidia-108'},
                  {'uuid': UUID_A, 'parent': V100['address'],
                   'type': 'nvidia-108'}]}})
    assert (record['step'], record['hooks'], record['python'],
            record['relation_sets'], record['commands']) == (
        'guests', [], None, 0, [])
    qemu = os.path.join(simulation.host_root, 'etc', 'libvirt', 'qemu')
    assert os.listdir(qemu) == ['new.xml']
    assert _read(available) == '0\n'
    # Only mdevs change: the guests stay as they are.
    simulation.run_step({'guests': {'mdevs': []}})
    assert os.listdir(qemu) == ['new.xml']
    assert _read(available) == '2\n'
    report = simulation.report()
    assert report['host']['mdevs'] == []
    # Nova's files, not the charm's.
    assert not [path for path in report['files']
                if path.startswith('/etc/libvirt/')]
    assert report['host']['guest_disruptions'] == []


def test_guests_step_stops_and_starts_guests(simulated):
    simulation = simulated(v100_with_guests())
    live = os.path.join(simulation.host_root, 'run', 'libvirt', 'qemu')
    assert sorted(os.listdir(live)) == [
        'idle.xml', 'instance-0000002a.xml', 'instance-0000002b.xml']
    simulation.run_step({'guests': {'libvirt_domains': [
        {'name': 'instance-0000002a', 'mdevs': [UUID_A],
         'state': 'shutoff'},
        {'name': 'instance-0000002b', 'mdevs': [UUID_A]}]}})
    assert os.listdir(live) == ['instance-0000002b.xml']
    report = simulation.report()
    # Nova's files, not the charm's.
    assert not [path for path in report['files']
                if path.startswith(('/etc/libvirt/', '/run/libvirt/'))]


def test_a_reboot_leaves_guests_as_they_were(simulated):
    data = v100_with_guests()
    data['host']['libvirt_domains'][0]['state'] = 'shutoff'
    simulation = simulated(data)
    live = os.path.join(simulation.host_root, 'run', 'libvirt', 'qemu')
    with contextlib.redirect_stderr(io.StringIO()):
        simulation._reboot()
    assert sorted(os.listdir(live)) == ['idle.xml', 'instance-0000002a.xml']


def l40s_host(**extra):
    data = {'host': dict({
        'pci': [L40S], 'kernel_modules': ['nvidia'],
        'libvirt_domains': [{'name': 'instance-0000002a', 'pci': [VF]},
                            {'name': 'instance-0000002b',
                             'pci': ['0000:41:00.5']}]}, **extra)}
    return data


def test_vf_types_survive_sriov_manage_and_are_lost_at_a_reboot(
        simulated):
    simulation = simulated(l40s_host(vf_vgpu_types={VF: 1148}))
    type_file = _vf_type_file(simulation.host_root)
    codes, _ = run(simulation,
                   'apt-get -y install {}'.format(deb(simulation, '570.1')),
                   'sriov-manage -e ALL')
    assert codes == [0, 0]
    # The start's type applies once the VF exists.
    assert _read(type_file) == '1148\n'
    second = _vf_type_file(simulation.host_root, '0000:41:00.5')
    with open(second, 'w') as stream:
        stream.write('1145')
    assert run(simulation, 'sriov-manage -e ALL')[0] == [0]
    assert output_host(simulation)['vf_vgpu_types'] == {
        VF: '1148', '0000:41:00.5': '1145'}
    with contextlib.redirect_stderr(io.StringIO()):
        simulation._reboot()
    assert simulation._load()['host']['vf_vgpu_types'] == {}
    assert not os.path.exists(type_file)
    assert run(simulation, 'sriov-manage -e ALL')[0] == [0]
    assert _read(type_file) == '0\n'


def test_retyping_a_vf_a_guest_uses_is_a_disruption(simulated):
    simulation = simulated(l40s_host(vf_vgpu_types={VF: 1148}))
    run(simulation, 'sriov-manage -e ALL')
    simulation._step_index = 4
    # The charm writes the type files itself (no command): seen after
    # the process, and before sriov-manage regenerates /sys.
    python = sys.executable
    for vf, value in ((VF, 0), ('0000:41:00.5', 1148), (VF, 1145)):
        assert simulation.run_program(
            [python, '-c', 'open({!r}, "w").write({!r})'.format(
                _vf_type_file(simulation.host_root, vf), str(value))],
            bare=True) == 0
    assert simulation._load()['host']['guest_disruptions'] == [
        {'step': 4, 'guest': 'instance-0000002a',
         'cause': 'VF 0000:41:00.4 vGPU type 1148 -> 0'}]
    simulation._step_index = 5
    assert run(simulation, 'sriov-manage -d ALL')[0] == [0]
    assert output_host(simulation)['guest_disruptions'][1:] == [
        {'step': 5, 'guest': 'instance-0000002a',
         'cause': 'VF 0000:41:00.4 (vGPU type 1145) removed by '
                  'sriov-manage -d ALL'},
        {'step': 5, 'guest': 'instance-0000002b',
         'cause': 'VF 0000:41:00.5 (vGPU type 1148) removed by '
                  'sriov-manage -d ALL'}]


def v100_with_guests():
    return {'host': {
        'pci': [V100], 'kernel_modules': ['nvidia'],
        'mdevs': [{'uuid': UUID_A, 'parent': V100['address'],
                   'type': 'nvidia-108'}],
        'libvirt_domains': [{'name': 'instance-0000002b', 'mdevs': [UUID_A]},
                            {'name': 'instance-0000002a', 'mdevs': [UUID_A]},
                            {'name': 'idle'}]}}


def test_stopping_or_restarting_a_running_vgpu_manager_is_a_disruption(
        simulated):
    simulation = simulated(v100_with_guests())
    path = deb(simulation, '550.54.16')
    codes, _ = run(simulation,
                   'apt-get --assume-yes install {}'.format(path),
                   'systemctl restart nvidia-vgpud',
                   'systemctl restart nvidia-vgpu-mgr.service',
                   'systemctl stop nvidia-vgpu-mgr',
                   'systemctl stop nvidia-vgpu-mgr',
                   'systemctl start nvidia-vgpu-mgr',
                   'systemctl is-active nvidia-vgpu-mgr')
    assert codes == [0] * 7
    causes = [(entry['guest'], entry['cause'])
              for entry in output_host(simulation)['guest_disruptions']]
    # The vGPU Manager serves the vGPUs; a stopped one breaks nothing more.
    assert causes == [
        ('instance-0000002a', 'nvidia-vgpu-mgr restarted '
         '(systemctl restart nvidia-vgpu-mgr.service)'),
        ('instance-0000002b', 'nvidia-vgpu-mgr restarted '
         '(systemctl restart nvidia-vgpu-mgr.service)'),
        ('instance-0000002a',
         'nvidia-vgpu-mgr stopped (systemctl stop nvidia-vgpu-mgr)'),
        ('instance-0000002b',
         'nvidia-vgpu-mgr stopped (systemctl stop nvidia-vgpu-mgr)')]


def test_a_shut_off_guest_loses_nothing_to_the_vgpu_manager_or_a_new_driver(
        simulated):
    data = v100_with_guests()
    for domain in data['host']['libvirt_domains']:
        domain['state'] = 'shutoff'
    data['host']['libvirt_domains'][1]['state'] = 'running'
    simulation = simulated(data)
    run(simulation, 'apt-get -y install {}'.format(deb(simulation, '1.0')),
        'systemctl restart nvidia-vgpu-mgr',
        'apt-get -y install {}'.format(deb(simulation, '2.0')),
        'apt-get -y purge nvidia-vgpu-ubuntu-550')
    assert [(entry['guest'], entry['cause']) for entry in
            output_host(simulation)['guest_disruptions']] == [
        ('instance-0000002a', 'nvidia-vgpu-mgr restarted '
         '(systemctl restart nvidia-vgpu-mgr)'),
        ('instance-0000002a', 'nvidia-vgpu-ubuntu-550 1.0 replaced by '
         'nvidia-vgpu-ubuntu-550 2.0 (apt-get install)'),
        # Without a driver no guest gets its vGPU back: both lose it.
        ('instance-0000002a',
         'nvidia-vgpu-ubuntu-550 2.0 removed (apt-get purge)'),
        ('instance-0000002b',
         'nvidia-vgpu-ubuntu-550 2.0 removed (apt-get purge)')]


def test_no_guest_on_a_vgpu_no_disruption(simulated):
    data = v100_with_guests()
    data['host']['mdevs'] = []
    simulation = simulated(data)
    run(simulation, 'apt-get -y install {}'.format(deb(simulation, '1.0')),
        'systemctl restart nvidia-vgpu-mgr',
        'apt-get -y install {}'.format(deb(simulation, '2.0')),
        'apt-get -y purge nvidia-vgpu-ubuntu-550')
    assert output_host(simulation)['guest_disruptions'] == []


def test_replacing_or_removing_the_driver_package_is_a_disruption(
        simulated):
    simulation = simulated(v100_with_guests())
    old, new = deb(simulation, '550.54.16'), deb(simulation, '550.90.05')
    other = deb(simulation, '570.172.07', 'nvidia-vgpu-ubuntu-570')
    codes, _ = run(simulation,
                   'apt-get -y install {}'.format(old),
                   'apt-get -y install {}'.format(old),
                   'dpkg -i {}'.format(new),
                   'apt-get -y purge nvidia-vgpu-ubuntu-550',
                   'apt-get -y install {}'.format(old),
                   'apt-get -y install {}'.format(other))
    assert codes == [0] * 6
    causes = [entry['cause'] for entry in
              output_host(simulation)['guest_disruptions']
              if entry['guest'] == 'instance-0000002a']
    assert causes == [
        'nvidia-vgpu-ubuntu-550 550.54.16 replaced by '
        'nvidia-vgpu-ubuntu-550 550.90.05 (dpkg -i)',
        'nvidia-vgpu-ubuntu-550 550.90.05 removed (apt-get purge)',
        'nvidia-vgpu-ubuntu-550 550.54.16 replaced by '
        'nvidia-vgpu-ubuntu-570 570.172.07 (apt-get install)']


# ---------------------------------------------------------- downgrades

APT = 'apt-get --assume-yes --option=Dpkg::Options::=--force-confold'


def test_apt_refuses_a_downgrade_as_real_apt_does(simulated):
    simulation = simulated({'host': {'pci': [V100],
                                     'kernel_modules': ['nvidia']}})
    newer, older = deb(simulation, '550.90.05'), deb(simulation, '550.54.16')
    codes, printed = run(simulation, '{} install {}'.format(APT, newer),
                         '{} install {}'.format(APT, older))
    assert codes == [0, 100]
    assert ('The following packages will be DOWNGRADED:\n'
            '  nvidia-vgpu-ubuntu-550\n'
            '0 upgraded, 0 newly installed, 1 downgraded, 0 to remove and '
            '0 not upgraded.\n') in printed
    assert ('E: Packages were downgraded and -y was used without '
            '--allow-downgrades.\n') in printed
    assert output_host(simulation)['packages'][
        'nvidia-vgpu-ubuntu-550'] == '550.90.05'
    codes, printed = run(simulation,
                         'apt-get --option=Dpkg::Options::=--force-confold '
                         '--allow-downgrades install {}'.format(older))
    assert codes == [1]
    assert 'Do you want to continue? [Y/n] Abort.' in printed
    codes, printed = run(simulation, '{} --allow-downgrades install {}'
                         .format(APT, older))
    assert codes == [0]
    assert ('dpkg: warning: downgrading nvidia-vgpu-ubuntu-550 from '
            '550.90.05 to 550.54.16') in printed
    assert output_host(simulation)['packages'][
        'nvidia-vgpu-ubuntu-550'] == '550.54.16'


def test_apt_leaves_an_installed_version_alone(simulated):
    simulation = simulated({'host': {'pci': [V100],
                                     'kernel_modules': ['nvidia']}})
    path = deb(simulation, '550.54.16')
    codes, printed = run(simulation, '{} install {}'.format(APT, path),
                         'systemctl stop nvidia-vgpu-mgr',
                         '{} install {}'.format(APT, path))
    assert codes == [0, 0, 0]
    assert ('nvidia-vgpu-ubuntu-550 is already the newest version '
            '(550.54.16).\n') in printed
    # Nothing was unpacked, so nothing started the service again.
    assert output_host(simulation)['services']['nvidia-vgpu-mgr'][
        'active'] is False


def test_versions_compare_as_dpkg_compares_them(simulated):
    simulation = simulated({'host': {'pci': [V100],
                                     'kernel_modules': ['nvidia']}})
    codes, _ = run(simulation,
                   '{} install {}'.format(APT, deb(simulation, '550.9')),
                   '{} install {}'.format(APT, deb(simulation, '550.10')),
                   '{} install {}'.format(APT, deb(simulation, '1:1.0')),
                   '{} install {}'.format(APT, deb(simulation, '999.0')))
    # 550.10 is newer than 550.9; an epoch outranks any upstream version.
    assert codes == [0, 0, 0, 100]
