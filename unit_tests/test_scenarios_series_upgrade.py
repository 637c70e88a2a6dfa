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
HOW = ('Stop it, or move it to other hosts, before upgrading: openstack '
       'server migrate --live-migration <server> (or cold migration, '
       'shelve-offload, resize or delete)')
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
