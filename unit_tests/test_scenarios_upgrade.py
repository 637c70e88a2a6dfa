"""A host the charm was upgraded on keeps booting right: the boot unit
that recreates guests' vGPUs runs `python3 -m nvidia_vgpu.restore`,
the same entry point and the same unit file the charm wrote before its
modules moved into rooms (scenarios/reboot/upgrade-charm-keeps-restoring
.yaml)."""
import json
import os

from simulation import REPO, scenario

UNIT = '/etc/systemd/system/nvidia-vgpu-restore-mdevs.service'
# What the charm wrote before the redesign, recorded then (b414170) and
# kept byte for byte since by test_scenarios_recorded.
BEFORE = os.path.join(REPO, 'unit_tests', 'data', 'scenario_outputs',
                      'reboot', 'restore-before-dalmatian.json')


def test_after_upgrade_charm_the_boot_unit_restores_every_guests_vgpu():
    output = scenario('reboot/upgrade-charm-keeps-restoring.yaml')
    steps = {step['step'] if isinstance(step['step'], str) else 'reboot':
             step for step in output['steps']}
    assert steps['upgrade-charm']['exit_code'] == 0
    reboot = output['steps'][6]
    assert ['python3', '-m', 'nvidia_vgpu.restore'] in reboot['commands']
    assert sorted(mdev['uuid'] for mdev in output['host']['mdevs']) == [
        '4b20d080-1b54-4048-85b3-a6a62d165c01',
        '9f1c2a7e-3d5b-4e8f-a0c6-1b2d3e4f5a6b',
        'c3d9e1f2-7a6b-4c5d-8e9f-0a1b2c3d4e5f']
    assert output['host']['guest_disruptions'] == []
    assert output['status']['workload'] == 'active'
    with open(BEFORE) as stream:
        before = json.load(stream)
    assert output['files'][UNIT] == before['files'][UNIT]
