"""Running or only defined, as the operator sees it.

Nova keeps a stopped guest defined, with its vGPU. Stopping or replacing
the vGPU Manager breaks only the vGPUs of guests that run, so pause,
restart-services, a series upgrade's prepare and a new vGPU software
revision wait for running guests only, and say that stopping them is
enough. A retype of a GPU waits for every guest defined with one of its
vGPUs, shut off or not, and says that stopping one does not free its
vGPU (scenarios/guests/v100-shutoff-guest.yaml,
scenarios/series-upgrade/v100-shutoff-guest-pauses.yaml)."""
from simulation import changing, scenario

SHUT_OFF = 'guests/v100-shutoff-guest.yaml'
PREPARE = 'series-upgrade/v100-shutoff-guest-pauses.yaml'
GUEST_A, GUEST_B = 'instance-0000002a', 'instance-0000002b'
MDEV_A = '4b20d080-1b54-4048-85b3-a6a62d165c01'
READY_TWO = {'workload': 'active',
             'message': 'Unit is ready: 2 NVIDIA GPUs (Tesla V100 PCIe 16GB)'}
RETYPE_WAITS = (
    'Change of vgpu-device-mappings waits for guests using vGPUs: '
    '0000:84:00.0 keeps nvidia-108 for {} (wanted: nvidia-105); it applies '
    'once they are gone (migrate, resize, shelve-offload or delete them; a '
    'stopped guest keeps its vGPU)')
SOFTWARE_WAITS = (
    'Attached vGPU software nvidia-vgpu-ubuntu-550 550.90.05 waits for 1 '
    'guest using vGPUs (instance-0000002b): it installs once it no longer '
    'runs here (stop, migrate, resize, shelve-offload or delete it), or run '
    'install-vgpu-software with force=true')


def refused(action):
    return (
        'Refusing to {0}: 1 vGPU on 0000:84:00.0 in use by running guest '
        '(instance-0000002b); stopping the vGPU Manager would break it. '
        'Stop, migrate, resize, shelve-offload or delete the guest first, '
        'or run {0} with force=true').format(action)


def stops_the_vgpu_manager(step):
    return any(argv[:2] in (['systemctl', 'stop'], ['systemctl', 'restart'])
               and 'nvidia-vgpu-mgr' in argv for argv in step['commands'])


def test_a_running_guest_holds_the_vgpu_manager_and_is_named_alone():
    output = scenario(SHUT_OFF)
    restart, pause = output['actions'][:2]
    assert restart['failed'] == refused('restart-services')
    assert pause['failed'] == refused('pause')
    for index in (5, 6):
        assert not stops_the_vgpu_manager(output['steps'][index])
        assert output['steps'][index]['status'] == READY_TWO


def test_with_every_guest_shut_off_the_vgpu_manager_restarts_and_pauses():
    output = scenario(SHUT_OFF)
    steps = output['steps']
    assert steps[7]['step'] == 'guests'
    restart, pause, resume = output['actions'][2:5]
    assert (restart['name'], restart['failed']) == ('restart-services', None)
    assert (pause['name'], pause['failed']) == ('pause', None)
    assert (resume['name'], resume['failed']) == ('resume', None)
    assert stops_the_vgpu_manager(steps[8])
    assert stops_the_vgpu_manager(steps[9])
    assert steps[9]['status'] == {
        'workload': 'maintenance',
        'message': "Paused. Use 'resume' action to resume normal service."}
    assert steps[10]['status'] == READY_TWO


def test_a_retype_waits_for_the_shut_off_guest_too():
    output = scenario(SHUT_OFF)
    steps = output['steps']
    assert steps[12]['step'] == 'config'
    assert steps[12]['status'] == {
        'workload': 'waiting',
        'message': RETYPE_WAITS.format(GUEST_A + ', ' + GUEST_B)}
    # Once the running guest has left, the shut-off one still holds it,
    # after the new driver's reboot too.
    for index in (16, 17):
        assert steps[index]['status'] == {
            'workload': 'waiting', 'message': RETYPE_WAITS.format(GUEST_A)}
    # 0000:84:00.0 keeps what Nova had; 0000:85:00.0 takes the change.
    nova = output['relations']['nova-vgpu:1']['subordinate_configuration']
    assert ('"enabled_mdev_types","nvidia-105, nvidia-108"' in nova and
            '"mdev_nvidia-108":[["device_addresses","0000:84:00.0"]]'
            in nova)


def test_a_new_driver_waits_for_the_running_guest_only():
    output = scenario(SHUT_OFF)
    steps = output['steps']
    assert steps[13]['step'] == 'attach'
    for index in (13, 14):
        assert steps[index]['status'] == {
            'workload': 'waiting', 'message': SOFTWARE_WAITS + '; ' +
            RETYPE_WAITS.format(GUEST_A + ', ' + GUEST_B)}
        assert not any(argv[0] == 'apt-get' and 'install' in argv
                       for argv in steps[index]['commands'])
    # The running guest has left; the shut-off one does not hold it.
    assert any(argv[0] == 'apt-get' and 'install' in argv
               for argv in changing(steps[15]['commands']))
    assert steps[15]['status'] == {'workload': 'blocked', 'message': (
        'Reboot required: installed NVIDIA software nvidia-vgpu-ubuntu-550 '
        '550.90.05, driver 550.54.16 is still running')}
    assert output['host']['packages']['nvidia-vgpu-ubuntu-550'] == \
        '550.90.05'


def test_the_shut_off_guest_finds_its_vgpu_after_the_new_drivers_reboot():
    output = scenario(SHUT_OFF)
    assert output['steps'][16]['step'] == 'reboot'
    assert output['host']['mdevs'] == [
        {'uuid': MDEV_A, 'parent': '0000:84:00.0', 'type': 'nvidia-108',
         'defined': False}]
    # No guest's vGPU broke at any step.
    assert output['host']['guest_disruptions'] == []


def test_a_shut_off_guest_does_not_hold_a_series_upgrade_prepare():
    output = scenario(PREPARE)
    prepare = output['steps'][5]
    assert prepare['step'] == 'pre-series-upgrade'
    assert prepare['status'] == {
        'workload': 'blocked',
        'message': 'Ready for do-release-upgrade and reboot. Set complete '
                   'when finished.'}
    assert stops_the_vgpu_manager(prepare)
    assert output['host']['guest_disruptions'] == []
    # The upgrade's reboot gives the guest its vGPU back for its start.
    assert output['host']['mdevs'] == [
        {'uuid': MDEV_A, 'parent': '0000:84:00.0', 'type': 'nvidia-108',
         'defined': False}]
    assert output['steps'][-1]['status'] == {
        'workload': 'active',
        'message': 'Unit is ready: 1 NVIDIA GPU (Tesla V100 PCIe 16GB)'}
    assert 'charm.series-upgrading' not in output['flags']
