"""Guests' vGPUs across a reboot (scenarios/reboot/*.yaml)."""
import json

from simulation import scenario

UNIT = '/etc/systemd/system/nvidia-vgpu-restore-mdevs.service'
MAPPINGS = '/var/lib/nova-compute-nvidia-vgpu/mappings.json'
INVENTORY = '/var/lib/nova-compute-nvidia-vgpu/mdevs.json'
SETTINGS = '/var/lib/nova-compute-nvidia-vgpu/boot.json'
MDEVS = [
    {'parent': '0000:84:00.0', 'type': 'nvidia-108',
     'uuid': '4b20d080-1b54-4048-85b3-a6a62d165c01', 'defined': False},
    # A second guest on the same GPU, same type: both come back.
    {'parent': '0000:84:00.0', 'type': 'nvidia-108',
     'uuid': 'c3d9e1f2-7a6b-4c5d-8e9f-0a1b2c3d4e5f', 'defined': False},
    {'parent': '0000:85:00.0', 'type': 'nvidia-105',
     'uuid': '9f1c2a7e-3d5b-4e8f-a0c6-1b2d3e4f5a6b', 'defined': False}]


def test_before_dalmatian_a_boot_unit_restores_guests_vgpus():
    output = scenario('reboot/restore-before-dalmatian.yaml')
    unit = output['files'][UNIT]
    assert 'ExecStart=/usr/bin/python3 -m nvidia_vgpu.restore' in unit
    assert 'Before=nova-compute.service' in unit
    assert 'After=nvidia-vgpu-mgr.service nvidia-vgpu-sriov.service' in unit
    reboot = output['steps'][5]
    assert reboot['step'] == 'reboot'
    assert reboot['commands'][:2] == [
        ['systemctl', 'start', 'nvidia-vgpu-restore-mdevs'],
        ['python3', '-m', 'nvidia_vgpu.restore']]
    assert output['host']['mdevs'] == MDEVS
    assert reboot['status']['workload'] == 'active'


def test_the_charm_records_where_each_vgpu_lives():
    output = scenario('reboot/restore-before-dalmatian.yaml')
    assert json.loads(output['files'][INVENTORY]) == {
        mdev['uuid']: [mdev['parent'], mdev['type']] for mdev in MDEVS}
    assert not any(argv[0] == 'mdevctl' for argv in output['commands'])


def test_the_boot_time_restore_follows_what_nova_has():
    # The last step retypes 0000:85:00.0 under its guest: that waits, so
    # the boot unit still puts the guest's nvidia-105 vGPU back there.
    output = scenario('reboot/restore-before-dalmatian.yaml')
    assert output['status']['message'].startswith(
        'Change of vgpu-device-mappings waits for guests using vGPUs: '
        '0000:85:00.0 keeps nvidia-105 for instance-0000002b')
    assert json.loads(output['files'][MAPPINGS]) == {
        'nvidia-105': ['0000:85:00.0'], 'nvidia-108': ['0000:84:00.0']}


def test_from_dalmatian_mdevctl_and_no_vgpu_recreation_by_the_charm():
    output = scenario('reboot/mdevctl-from-dalmatian.yaml')
    assert ['apt-get', '--assume-yes',
            '--option=Dpkg::Options::=--force-confold', 'install',
            'mdevctl'] in output['steps'][0]['commands']
    assert 'mdevctl' in output['host']['packages']
    # The boot unit stays for VF types; it is told not to touch vGPUs,
    # and no inventory is kept.
    assert json.loads(output['files'][SETTINGS]) == {
        'restore_mdevs': False, 'vf_vgpu_types': {}}
    assert INVENTORY not in output['files']
    # Nova defined them: the charm defines none, and at the reboot
    # mdevctl brings both back.
    assert not any(argv[:2] == ['mdevctl', 'define']
                   for argv in output['commands'])
    assert output['host']['mdevs'] == [
        {'uuid': '4b20d080-1b54-4048-85b3-a6a62d165c01',
         'parent': '0000:84:00.0', 'type': 'nvidia-108', 'defined': True},
        {'uuid': '9f1c2a7e-3d5b-4e8f-a0c6-1b2d3e4f5a6b',
         'parent': '0000:85:00.0', 'type': 'nvidia-105', 'defined': True}]
    assert output['status']['workload'] == 'active'
    installs = [argv for step in output['steps'][1:]
                for argv in step['commands'] if argv[0] == 'apt-get']
    assert installs == []
