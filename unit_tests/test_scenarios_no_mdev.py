"""NVIDIA's vendor-specific VFIO driver (no mdev): scenarios/no-mdev/."""
import json

from simulation import run_yaml, scenario
from snapshots import vf_addresses
from test_scenarios_guests import until

VFS = ['0000:41:00.4', '0000:41:00.5', '0000:41:00.6', '0000:41:00.7',
       '0000:41:01.0', '0000:41:01.1', '0000:41:01.2', '0000:41:01.3']


def pci_section(output):
    blob = output['relations']['nova-vgpu:1']['subordinate_configuration']
    return json.loads(blob)['nova']['/etc/nova/nova.conf']['sections']


def test_each_vf_gets_its_type_again_at_every_boot():
    output = scenario('no-mdev/l40s-epoxy.yaml')
    assert output['host']['vf_vgpu_types'] == {vf: '1148' for vf in VFS}
    second_reboot = output['steps'][-1]
    assert second_reboot['commands'][:4] == [
        ['systemctl', 'start', 'nvidia-vgpu-sriov'],
        ['sriov-manage', '-e', 'ALL'],
        ['systemctl', 'start', 'nvidia-vgpu-restore-mdevs'],
        ['python3', '-m', 'nvidia_vgpu.restore']]
    assert second_reboot['relation_sets'] == 0


def test_list_vgpu_types_reads_the_vfs_type_tables():
    output = scenario('no-mdev/l40s-epoxy.yaml')
    # VGPU (the default) on this path: each type's own class and alias;
    # two VFs of the alias give a guest two vGPUs (issue 36, item 7).
    *lines, migration = output['actions'][0]['results'][
        'output'].splitlines()
    assert lines == [
        'nvidia-1145, 0000:41:00.0, NVIDIA L40S-1B, no description, '
        'available=8 on 8 VFs, profile=L40S-1B, '
        'resource_class=CUSTOM_NVIDIA_1145, '
        'flavor=pci_passthrough:alias=nvidia-1145:1, '
        'two per guest: pci_passthrough:alias=nvidia-1145:2',
        'nvidia-1148, 0000:41:00.0, NVIDIA L40S-2Q, no description, '
        'available=8 on 8 VFs, profile=L40S-2Q, '
        'resource_class=CUSTOM_NVIDIA_1148, '
        'flavor=pci_passthrough:alias=nvidia-1148:1, '
        'two per guest: pci_passthrough:alias=nvidia-1148:2',
        'nvidia-1155, 0000:41:00.0, NVIDIA L40S-48Q, no description, '
        'available=8 on 8 VFs, profile=L40S-48Q, '
        'resource_class=CUSTOM_NVIDIA_1155, '
        'flavor=pci_passthrough:alias=nvidia-1155:1, '
        'two per guest: pci_passthrough:alias=nvidia-1155:2']
    # Epoxy on noble: its typed VFs can live-migrate.
    assert migration.startswith('Live migration: ready (nova 31.0.0 >= '
                                '31.0.0, libvirt 10.0.0 >= 10.0.0')


def test_before_epoxy_the_status_says_it_needs_a_newer_openstack():
    output = scenario('no-mdev/l40s-caracal.yaml')
    assert output['status'] == {
        'workload': 'blocked',
        'message': "GPUs at 0000:41:00.0 run NVIDIA's vendor-specific VFIO "
                   'driver (no mdev), which Nova supports from 2025.1 '
                   'Epoxy; this host has nova 29.2.0: upgrade OpenStack, or '
                   'use a vGPU driver with mdev'}
    assert pci_section(output) == {}
    assert output['host']['vf_vgpu_types'] == {}


def test_typed_vfs_are_live_migratable_with_noble_s_libvirt_and_qemu():
    output = scenario('no-mdev/l40s-epoxy.yaml')
    entries = [json.loads(value) for key, value in pci_section(output)['pci']
               if key in ('device_spec', 'alias')]
    assert len(entries) == 9    # 8 VFs, 1 alias
    assert all(entry['live_migratable'] == 'yes' for entry in entries)
    assert output['status'] == {
        'workload': 'active',
        'message': 'Unit is ready: 1 NVIDIA GPU (device 10de:26b9); 8 SR-IOV '
                   'VFs; typed VFs live-migratable; nvidia-1148: 8 vGPUs on '
                   '1 GPU'}


def test_below_nova_s_minimums_no_tag_and_not_ready_until_upgraded(
        tmp_path):
    name = 'no-mdev/l40s-epoxy-old-libvirt.yaml'
    before = run_yaml(tmp_path, until(name, 5))
    entries = [json.loads(value) for key, value in pci_section(before)['pci']
               if key in ('device_spec', 'alias')]
    # Exactly what is published without the tag: nothing says "no".
    assert len(entries) == 9
    assert not any('live_migratable' in entry for entry in entries)
    output = scenario(name)
    after_reboot = output['steps'][4]
    assert after_reboot['status'] == {
        'workload': 'active',
        'message': 'Typed VFs not live-migratable (this host has libvirt '
                   '9.6.0 and QEMU 8.0.4; Nova needs libvirt 10.0.0 and QEMU '
                   '8.2.2): guests on them cannot be live-migrated until '
                   'libvirt and QEMU are upgraded; 1 NVIDIA GPU (device '
                   '10de:26b9); 8 SR-IOV VFs; nvidia-1148: 8 vGPUs on 1 GPU'}
    assert after_reboot['relation_sets'] == 1
    # Once the principal upgrades them, update-status tags every entry.
    upgraded = output['steps'][-1]
    assert upgraded['relation_sets'] == 1
    assert upgraded['status']['message'].endswith(
        '; typed VFs live-migratable; nvidia-1148: 8 vGPUs on 1 GPU')
    assert all('"live_migratable": "yes"' in value
               for key, value in pci_section(output)['pci']
               if key in ('device_spec', 'alias'))


def test_the_driver_refuses_nothing_and_nova_gets_24_through_reboots():
    """An RTX PRO 6000 named by its address (48 VFs, 24 DC-4Q at most,
    unit_tests/test_vfio_capacity.py): the simulator's driver refuses a
    VF's type beyond the maximum, and refuses none."""
    output = scenario('no-mdev/rtx-pro-6000-epoxy.yaml')
    assert output['host']['vf_type_refusals'] == []
    first_24 = list(vf_addresses('0000:38:00.0', 48)[:24])
    assert sorted(output['host']['vf_vgpu_types']) == first_24
    assert [json.loads(value)['address'] for key, value
            in pci_section(output)['pci'] if key == 'device_spec'] == first_24
    for step in output['steps'][4:]:
        assert step['status']['message'].startswith(
            'Unit is ready: 1 NVIDIA GPU (device 10de:2bb5); 48 SR-IOV VFs; '
            'typed VFs live-migratable; nvidia-1521: 24 vGPUs on 1 GPU')
    assert [step['relation_sets'] for step in output['steps'][5:]] == [
        0, 0, 0]
