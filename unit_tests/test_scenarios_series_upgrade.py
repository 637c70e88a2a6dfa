"""A series upgrade as the operator sees it (scenarios/series-upgrade/).

With a running guest using a vGPU, pre-series-upgrade stops nothing (no
vGPU breaks), marks the unit upgrading as charms.openstack does, and the
unit says which guest to stop or move off and how, naming the target
Juju gave. Without running guests (test_scenarios_running_guests.py for
a shut-off one) it prepares exactly as charms.openstack does: paused,
ready for do-release-upgrade; post-series-upgrade resumes it. Where
nothing was paused, post-series-upgrade does not fail."""
from simulation import changing, run_yaml, scenario, shipped

HELD = 'series-upgrade/v100-guest-holds.yaml'
IDLE = 'series-upgrade/v100-idle-pauses.yaml'
READY = {'workload': 'active',
         'message': 'Unit is ready: 1 NVIDIA GPU (Tesla V100 PCIe 16GB)'}
HOW = ('nova-compute is paused for the upgrade, so Nova cannot move it: '
       'shut it down on this host (sudo virsh shutdown <name>), or resume '
       'nova-compute, move it, and pause nova-compute again')
SERVICES = ('nvidia-vgpu-mgr', 'nvidia-vgpud')
# What charms.openstack's pause does to them, and says.
PAUSED = [['systemctl', verb, name] for name in SERVICES
          for verb in ('stop', 'disable', 'mask')]
READY_FOR_UPGRADE = {
    'workload': 'blocked',
    'message': 'Ready for do-release-upgrade and reboot. Set complete '
               'when finished.'}


def _named(output, name):
    return [step for step in output['steps'] if step['step'] == name]


def test_a_guest_using_a_vgpu_holds_the_prepare_and_stops_nothing():
    output = scenario(HELD)
    prepare, = _named(output, 'pre-series-upgrade')
    assert prepare['exit_code'] == 0
    assert changing(prepare['commands']) == []
    while_the_guest_runs = output['steps'][:output['steps'].index(
        _named(output, 'guests')[0]) + 1]
    assert not any(argv[:2] == ['systemctl', 'stop']
                   for step in while_the_guest_runs
                   for argv in step['commands'])
    assert output['host']['guest_disruptions'] == []
    assert prepare['status'] == {
        'workload': 'blocked',
        'message': 'Series upgrade to noble (ubuntu@24.04) prepared without '
                   'stopping the vGPU Manager: 1 running guest uses vGPUs '
                   'here '
                   '(instance-0000002a). ' + HOW}
    assert all(output['host']['services'][name]['active']
               for name in SERVICES)


def test_once_the_guest_is_gone_the_prepare_completes_and_complete_resumes():
    output = scenario(HELD)
    gone = output['steps'][-3]
    assert gone['step'] == 'update-status'
    assert changing(gone['commands']) == PAUSED
    assert gone['status'] == READY_FOR_UPGRADE
    complete, = _named(output, 'post-series-upgrade')
    assert complete['exit_code'] == 0
    assert ['systemctl', 'start', 'nvidia-vgpu-mgr'] in changing(
        complete['commands'])
    assert complete['status'] == READY
    assert output['steps'][-1]['status'] == READY
    assert output['host']['guest_disruptions'] == []
    assert 'charm.series-upgrading' not in output['flags']
    assert 'charm.paused' not in output['flags']


def test_juju_2_9_names_the_target_series(tmp_path):
    text = shipped(HELD).replace('juju_version: "3.4.5"',
                                 'juju_version: "2.9.49"')
    text = text.split('  - guests:')[0]
    assert 'pre-series-upgrade' in text and '2.9.49' in text
    output = run_yaml(tmp_path, text)
    assert output['status']['message'].startswith(
        'Series upgrade to noble (ubuntu@24.04) prepared without stopping')
    assert output['host']['guest_disruptions'] == []


def test_an_idle_host_pauses_as_charms_openstack_does():
    output = scenario(IDLE)
    prepare, = _named(output, 'pre-series-upgrade')
    assert prepare['exit_code'] == 0
    assert changing(prepare['commands']) == PAUSED
    assert prepare['status'] == READY_FOR_UPGRADE
    assert output['host']['guest_disruptions'] == []


def test_an_idle_host_resumes_after_the_upgrade():
    output = scenario(IDLE)
    complete, = _named(output, 'post-series-upgrade')
    assert complete['exit_code'] == 0
    assert changing(complete['commands']) == [
        ['systemctl', verb, name] for name in SERVICES
        for verb in ('unmask', 'enable', 'start')]
    assert complete['status'] == READY
    assert output['status'] == READY
    assert all(output['host']['services'][name]['active']
               for name in SERVICES)
    assert 'charm.paused' not in output['flags']


CHECKED = 'series-upgrade/v100-checked-before-prepare.yaml'
SHUT_DOWN = 'series-upgrade/v100-held-guest-shut-down.yaml'


def test_the_check_before_the_prepare_names_the_guest_to_move_first():
    output = scenario(CHECKED)
    first, second = output['actions']
    assert first['name'] == 'check-series-upgrade'
    assert first['results']['ready'] == 'false'
    assert first['results']['running-guests'] == 'instance-0000002a'
    assert first['failed'] == first['results']['message']
    assert first['failed'].startswith(
        '1 running guest uses vGPUs here (instance-0000002a). Move it '
        'while nova-compute runs: disable the compute service, then '
        'openstack server migrate --live-migration <server>')
    # It only read the host.
    check_step = output['steps'][5]
    assert changing(check_step['commands']) == []
    # Moved: the check passes, and the prepare pauses the unit at once.
    assert second['failed'] is None
    assert second['results']['ready'] == 'true'
    prepare, = _named(output, 'pre-series-upgrade')
    assert prepare['status'] == READY_FOR_UPGRADE
    assert PAUSED == [argv for argv in prepare['commands']
                      if argv[:2] in (['systemctl', 'stop'],
                                      ['systemctl', 'disable'],
                                      ['systemctl', 'mask'])]


def test_a_held_prepare_ends_once_the_guest_is_shut_down_on_the_host():
    output = scenario(SHUT_DOWN)
    prepare, = _named(output, 'pre-series-upgrade')
    assert HOW in prepare['status']['message']
    after_shutdown = output['steps'][7]
    assert after_shutdown['step'] == 'update-status'
    assert after_shutdown['status'] == READY_FOR_UPGRADE
    # No running guest's vGPU broke; the shut-off guest's vGPU is back
    # after the upgrade's reboot, for its next start.
    assert output['host']['guest_disruptions'] == []
    assert [mdev['uuid'] for mdev in output['host']['mdevs']] == [
        '4b20d080-1b54-4048-85b3-a6a62d165c01']
    assert output['status'] == READY
