"""An in-place OpenStack upgrade to Dalmatian or later, end to end
(scenarios/openstack-upgrade/): the guests' vGPUs made before it, which
Nova did not define, still come back at every reboot after it."""
import json

import pytest

from simulation import scenario

SETTINGS = '/var/lib/nova-compute-nvidia-vgpu/boot.json'
DEFINITIONS = '/etc/mdevctl.d/'


def steps_named(output, name):
    return [step for step in output['steps'] if step['step'] == name]


def defines(step):
    return [argv[3] for argv in step['commands']
            if argv[:2] == ['mdevctl', 'define']]


@pytest.mark.parametrize('name', [
    'openstack-upgrade/caracal-to-dalmatian-v100.yaml',
    'openstack-upgrade/reboot-before-any-hook.yaml',
    'openstack-upgrade/caracal-to-dalmatian-a40-vfs.yaml',
    'openstack-upgrade/define-fails-keeps-restoring.yaml'])
def test_no_guest_loses_its_vgpu_at_any_reboot(name):
    output = scenario(name)
    assert output['host']['guest_disruptions'] == []
    for step in output['steps']:
        assert step['exit_code'] == 0, step
        # No drift: the status would name a guest that lost its vGPU.
        assert step['status']['workload'] == 'active', step['status']
    # At the end every vGPU is defined: the next reboot needs no unit.
    assert output['host']['mdevs'] and all(
        mdev['defined'] for mdev in output['host']['mdevs'])
    assert json.loads(output['files'][SETTINGS])['restore_mdevs'] is False


def test_the_first_hook_after_the_upgrade_defines_the_guests_vgpus():
    output = scenario('openstack-upgrade/caracal-to-dalmatian-v100.yaml')
    before = output['steps'][:7]
    assert not any(defines(step) for step in before)
    # Under Caracal the restore unit brought them back at the reboot.
    assert ['python3', '-m', 'nvidia_vgpu.restore'] in \
        output['steps'][5]['commands']
    first_after = output['steps'][8]
    assert first_after['step'] == 'update-status'
    assert ['apt-get', '--assume-yes',
            '--option=Dpkg::Options::=--force-confold', 'install',
            'mdevctl'] in first_after['commands']
    assert defines(first_after) == ['4b20d080-1b54-4048-85b3-a6a62d165c01',
                                    '9f1c2a7e-3d5b-4e8f-a0c6-1b2d3e4f5a6b']
    # Nothing more to do in any later hook.
    assert not any(defines(step) for step in output['steps'][9:])
    # The third guest, started by Nova 30, has Nova's own definition,
    # and all three come back at the last reboot.
    assert [mdev['uuid'] for mdev in output['host']['mdevs']] == [
        '4b20d080-1b54-4048-85b3-a6a62d165c01',
        '9f1c2a7e-3d5b-4e8f-a0c6-1b2d3e4f5a6b',
        'c3d9e1f2-7a6b-4c5d-8e9f-0a1b2c3d4e5f']


def test_a_reboot_before_any_hook_is_covered_by_the_restore_unit():
    output = scenario('openstack-upgrade/reboot-before-any-hook.yaml')
    reboot = output['steps'][6]
    assert reboot['step'] == 'reboot'
    commands = reboot['commands']
    restore = commands.index(['python3', '-m', 'nvidia_vgpu.restore'])
    # The start hook after the boot defines what the unit recreated,
    # the shut-off guest's vGPU too.
    assert defines(reboot) == ['4b20d080-1b54-4048-85b3-a6a62d165c01',
                               '9f1c2a7e-3d5b-4e8f-a0c6-1b2d3e4f5a6b']
    assert restore < min(commands.index(argv) for argv in commands
                         if argv[:2] == ['mdevctl', 'define'])
    # mdevctl writes its definitions, started at every boot.
    definition = json.loads(output['files'][
        DEFINITIONS + '0000:85:00.0/9f1c2a7e-3d5b-4e8f-a0c6-1b2d3e4f5a6b'])
    assert definition['mdev_type'] == 'nvidia-105'
    assert definition['start'] == 'auto'


def test_a_vfs_vgpu_comes_back_when_the_sriov_unit_makes_the_vf():
    output = scenario('openstack-upgrade/caracal-to-dalmatian-a40-vfs.yaml')
    reboot = steps_named(output, 'reboot')[0]
    assert ['sriov-manage', '-e', 'ALL'] in reboot['commands']
    assert output['host']['mdevs'] == [
        {'uuid': '4b20d080-1b54-4048-85b3-a6a62d165c01',
         'parent': '0000:51:00.6', 'type': 'nvidia-557', 'defined': True}]


def test_while_mdevctl_fails_the_restore_unit_stays_on():
    output = scenario('openstack-upgrade/define-fails-keeps-restoring.yaml')
    failing = output['steps'][7]
    assert failing['step'] == 'update-status'
    assert defines(failing) == ['4b20d080-1b54-4048-85b3-a6a62d165c01']
    reboot = output['steps'][8]
    # The unit still recreates the transient vGPU, and the start hook
    # tries to define it again.
    assert ['python3', '-m', 'nvidia_vgpu.restore'] in reboot['commands']
    assert reboot['status']['workload'] == 'active'
    assert defines(output['steps'][10]) == [
        '4b20d080-1b54-4048-85b3-a6a62d165c01']
    assert not defines(output['steps'][12])
