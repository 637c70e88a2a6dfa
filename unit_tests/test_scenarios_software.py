"""The vGPU host software's life on a host, through the shipped scenarios
(scenarios/software/*.yaml): what the operator sees and what the host gets.
"""
import pytest

from simulation import changing, scenario

ATTACH = ('juju attach-resource nova-compute-nvidia-vgpu '
          'nvidia-vgpu-software=')
REBOOT_550 = ('Reboot required: installed NVIDIA software '
              'nvidia-vgpu-ubuntu-550 550.54.16, the NVIDIA driver is not '
              'loaded yet')
# The software is in and the driver runs: on this host, whose application
# maps no vGPU type yet, what is left is the mapping (the GPU host gives
# Nova nothing, and says so: docs/index.md#this-gpu-host-gives-nova-no-vgpu).
DONE = ('blocked', 'This GPU host gives Nova no vGPU: vgpu-device-mappings '
        'names no type for them. Its GPUs: 0000:84:00.0 (10de:1db4, Tesla '
        'V100 PCIe 16GB); map them in vgpu-device-mappings (list-vgpu-types '
        'shows the types each offers)')
BLACKLIST = '/etc/modprobe.d/nvidia-vgpu-disable-nouveau.conf'


def statuses(output):
    return [(s['status']['workload'], s['status']['message'])
            for s in output['steps']]


def installs(commands):
    return [argv for argv in commands
            if argv[:1] == ['apt-get'] and 'install' in argv]


def test_no_gpu_host_installs_nothing_even_with_a_resource():
    output = scenario('software/no-gpu-with-resource.yaml')
    assert set(statuses(output)) == {
        ('active', 'Unit is ready: no NVIDIA GPU on this host')}
    assert changing(output['commands']) == []
    assert output['files'] == {}
    assert output['application_version'] == ''
    # Not even read: the resource is only fetched where there is a GPU.
    assert not [argv for argv in output['commands']
                if argv[0] == 'dpkg-deb']


@pytest.mark.parametrize('name, expected', [
    ('gpu-without-resource', 'NVIDIA GPU found but no vGPU host software '
     'attached: ' + ATTACH),
    ('empty-resource', 'NVIDIA GPU found but no vGPU host software '
     'attached: ' + ATTACH),
    ('junk-resource', 'Resource nvidia-vgpu-software is not a Debian '
     'package (dpkg-deb cannot read it)'),
    ('guest-driver-resource', 'Resource nvidia-vgpu-software is '
     'nvidia-linux-grid-550 550.54.15 (the vGPU guest driver); attach the '
     'vGPU Manager for Ubuntu KVM, nvidia-vgpu-ubuntu-*'),
    ('sha256-mismatch', 'Resource nvidia-vgpu-software has sha256 '),
])
def test_a_bad_resource_blocks_and_installs_nothing(name, expected):
    output = scenario('software/{}.yaml'.format(name))
    for workload, message in statuses(output):
        assert workload == 'blocked'
        assert message.startswith(expected)
    assert changing(output['commands']) == []
    assert output['files'] == {}
    assert output['host']['packages'] == {
        'nova-common': '3:25.2.1-0ubuntu2'}


def test_install_then_reboot_then_the_driver_runs():
    output = scenario('software/install-reboot-ready.yaml')
    steps = output['steps']
    assert [s['step'] for s in steps[:6]] == [
        'install', 'config-changed', 'start', 'update-status', 'reboot',
        'update-status']
    assert statuses(output)[:4] == [('blocked', REBOOT_550)] * 4
    assert statuses(output)[4:6] == [DONE] * 2
    # Installed once, with apt from the local file, then initramfs rebuilt
    # without nouveau; nothing else changed the host before the reboot.
    resource = ('/var/lib/juju/agents/unit-nova-compute-nvidia-vgpu-0/'
                'resources/nvidia-vgpu-software/nvidia-vgpu.deb')
    assert changing(steps[0]['commands']) == [
        ['apt-get', '--assume-yes',
         '--option=Dpkg::Options::=--force-confold', '--allow-downgrades',
         'install', resource],
        ['update-initramfs', '-u'],
        # yoga: the charm's boot unit that gives guests their vGPUs back.
        ['systemctl', 'daemon-reload'],
        ['systemctl', 'enable', 'nvidia-vgpu-restore-mdevs.service']]
    assert all(changing(s['commands']) == [] for s in steps[1:4])
    assert output['files'][BLACKLIST].splitlines()[-2:] == [
        'blacklist nouveau', 'options nouveau modeset=0']


def test_services_the_package_declares_are_checked_once_it_runs():
    output = scenario('software/install-reboot-ready.yaml')
    before, after = output['steps'][3], output['steps'][5]
    assert not [a for a in before['commands'] if a[0] == 'systemctl']
    assert sorted(a for a in after['commands'] if a[0] == 'systemctl') == [
        ['systemctl', 'is-active', 'nvidia-vgpu-mgr'],
        ['systemctl', 'is-active', 'nvidia-vgpud']]


def test_same_revision_is_not_reinstalled_a_new_one_is():
    output = scenario('software/install-reboot-ready.yaml')
    same, new = output['steps'][6], output['steps'][7]
    assert same['step'] == new['step'] == 'attach'
    assert installs(same['commands']) == []
    assert same['status']['message'] == DONE[1]
    assert len(installs(new['commands'])) == 1
    assert new['status'] == {
        'workload': 'blocked',
        'message': 'Reboot required: installed NVIDIA software '
                   'nvidia-vgpu-ubuntu-550 550.90.05, driver 550.54.16 is '
                   'still running'}
    assert output['status'] == {'workload': DONE[0], 'message': DONE[1]}
    assert output['application_version'] == '550.90.05'
    assert output['host']['packages']['nvidia-vgpu-ubuntu-550'] == \
        '550.90.05'


def test_update_status_never_installs():
    output = scenario('software/install-reboot-ready.yaml')
    for step in output['steps']:
        if step['step'] == 'update-status':
            assert changing(step['commands']) == []


def test_apt_failure_blocks_with_the_reason_and_is_retried_not_looped():
    output = scenario('software/apt-failure-recovery.yaml')
    install, config, start, update, attach = output['steps']
    assert install['status']['workload'] == 'blocked'
    assert install['status']['message'] == (
        'apt-get could not install nvidia-vgpu-ubuntu-550 550.54.16: '
        'nvidia-vgpu-ubuntu-550 : Depends: linux-headers-6.8.0-31-generic '
        'but it is not installable (retried at the next config-changed, '
        'upgrade-charm or start)')
    assert [len(installs(s['commands'])) for s in output['steps']] == [
        1, 1, 1, 0, 1]
    assert attach['status']['message'].startswith(
        'Reboot required: installed NVIDIA software nvidia-vgpu-ubuntu-550 '
        '550.54.16-1')
    assert output['application_version'] == '550.54.16-1'
