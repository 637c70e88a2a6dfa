"""The vgpu-health action and the drift update-status shows
(scenarios/health/*.yaml), end to end through the simulator."""
import json

from simulation import changing, run_yaml, scenario

A100_UUID = 'c1d2e3f4-0a1b-4c2d-8e3f-405162738495'
V100_UUID = '9f1c2a7e-3d5b-4e8f-a0c6-1b2d3e4f5a6b'


def health(action):
    return json.loads(action['results']['health'])


def by_name(output, name):
    return [step for step in output['steps'] if step['step'] == name]


def assert_read_only(step):
    """An action or update-status that changed nothing on the host and
    set nothing on the relation."""
    assert changing(step['commands']) == [], step['commands']
    assert step['relation_sets'] == 0


def test_a_healthy_v100_host_passes_with_every_gpu_described():
    output = scenario('health/v100-healthy-caracal.yaml')
    action, = output['actions']
    assert action['failed'] is None
    result = health(action)
    assert result['healthy'] is True
    assert result['findings'] == []
    assert [(gpu['address'], gpu['mode'], gpu['nova_types'],
             gpu['profiles'], gpu['created'], gpu['in_use'], gpu['free'],
             gpu['guests']) for gpu in result['gpus']] == [
        ('0000:84:00.0', 'mdev', ['nvidia-105'], ['GRID V100-1Q'], 1, 1,
         15, ['instance-0000002a']),
        ('0000:85:00.0', 'mdev', ['nvidia-105'], ['GRID V100-1Q'], 1, 1,
         15, ['instance-0000002b'])]
    assert result['vgpu_manager'] == {
        'package': 'nvidia-vgpu-ubuntu-550', 'installed': '550.54.16',
        'running': '550.54.16'}
    assert result['services'] == {'nvidia-vgpu-mgr': 'active',
                                  'nvidia-vgpud': 'active'}
    assert result['live_migration']['ready'] is True
    assert [check['version'] for check in
            result['live_migration']['checks']] == [
        '29.2.0', '10.0.0', '8.2.2', '6.8.0']
    lines = action['results']['output'].splitlines()
    assert lines[1].startswith('0000:84:00.0  Tesla V100 PCIe 16GB  mdev')
    assert lines[-1] == 'Healthy'
    # The simulator's nvidia-smi says it is one; the action shows it.
    assert action['results']['nvidia-smi'].startswith(
        'simulated nvidia-smi vgpu:')
    assert output['status']['message'].startswith('Unit is ready: ')
    assert_read_only(output['steps'][-1])


def test_vfs_not_enabled_after_a_boot_fail_the_check_and_show_in_status():
    output = scenario('health/a100-vfs-not-enabled-after-boot.yaml')
    before, broken, mended = output['actions']
    assert before['failed'] is None
    assert health(before)['gpus'][0]['guests'] == ['instance-00000031']
    # The boot with the fault: the boot unit fails, the start hook does
    # not (it logs the failed unit), and the status names the drift.
    reboot = by_name(output, 'reboot')[1]
    assert reboot['hooks'] == [{'hook': 'start', 'exit_code': 0}]
    assert ['systemctl', 'restart', 'nvidia-vgpu-sriov.service'] in \
        reboot['commands']
    # Nova keeps the GPU's VFs (and the guest's allocation) meanwhile.
    assert reboot['relation_sets'] == 0
    update = by_name(output, 'update-status')[1]
    assert update['status'] == {
        'workload': 'blocked', 'message':
        'Host drift: SR-IOV GPU 0000:41:00.0 has no VFs (0 of 16) although '
        'the NVIDIA driver runs: they were not enabled after the last boot '
        '(nvidia-vgpu-sriov) (and 2 more: run vgpu-health)'}
    assert_read_only(update)
    result = health(broken)
    assert result['healthy'] is False
    assert [(finding['code'], finding['broken'])
            for finding in result['findings']] == [
        ('boot-unit-failed', True), ('boot-unit-failed', True),
        ('vfs-missing', True), ('nova-device-missing', True),
        ('guest-vgpu-missing', True)]
    assert result['boot_units'] == {'nvidia-vgpu-restore-mdevs': 'failed',
                                    'nvidia-vgpu-sriov': 'failed'}
    assert result['gpus'][0]['mode'] == 'sriov'
    assert result['gpus'][0]['vfs'] == {'enabled': 0, 'total': 16}
    assert broken['failed'].startswith('Host not healthy: Boot unit ')
    assert ('Guest instance-00000031 has lost its vGPU {} (last seen on '
            '0000:41:00.4 as nvidia-697)'.format(A100_UUID)
            in broken['failed'])
    assert_read_only(by_name(output, 'action vgpu-health')[1])
    # Mended and rebooted: VFs back, the guest's vGPU where it was.
    assert mended['failed'] is None
    assert health(mended)['gpus'][0]['in_use'] == 1
    assert {'uuid': A100_UUID, 'parent': '0000:41:00.4',
            'type': 'nvidia-697', 'defined': False} in output['host']['mdevs']
    assert output['status']['workload'] == 'active'
    assert output['host']['guest_disruptions'] == []


def test_a_guests_vanished_vgpu_is_drift_until_the_boot_unit_restores_it():
    output = scenario('health/v100-guest-vgpu-vanished-yoga.yaml')
    healthy, broken, restored = output['actions']
    assert healthy['failed'] is None and restored['failed'] is None
    message = ('Guest instance-0000002b has lost its vGPU {} (last seen on '
               '0000:85:00.0 as nvidia-108)'.format(V100_UUID))
    update = by_name(output, 'update-status')[1]
    assert update['status'] == {'workload': 'blocked',
                                'message': 'Host drift: ' + message}
    assert_read_only(update)
    assert broken['failed'] == 'Host not healthy: ' + message
    assert health(broken)['gpus'][1]['created'] == 0
    # The record kept where the vanished vGPU was, through the hooks
    # between; the reboot's restore unit put it back there.
    reboot = by_name(output, 'reboot')[0]
    assert ['python3', '-m', 'nvidia_vgpu.restore'] in reboot['commands']
    assert {'uuid': V100_UUID, 'parent': '0000:85:00.0',
            'type': 'nvidia-108', 'defined': False} in output['host']['mdevs']
    assert output['status']['message'].startswith('Unit is ready: ')


def test_migration_not_ready_is_reported_without_failing():
    output = scenario('health/v100-guest-vgpu-vanished-yoga.yaml')
    result = health(output['actions'][0])
    assert result['healthy'] is True
    assert result['live_migration'] == {'ready': False, 'checks': [
        {'component': 'nova', 'version': '25.2.1', 'minimum': '29.0.0',
         'ok': False},
        {'component': 'libvirt', 'version': '8.0.0', 'minimum': '8.6.0',
         'ok': False},
        {'component': 'qemu', 'version': '6.2', 'minimum': '8.1.0',
         'ok': False},
        # jammy's kernel, the simulator's default for the series
        {'component': 'linux', 'version': '5.15.0', 'minimum': '5.18',
         'ok': False}],
        # charm-nova-compute's default renders no post-copy line: off
        'post_copy': {'permitted': False, 'ok': True},
        'group': '550.54.16/10de:1db4:10de:1214'}
    assert 'Live migration: not ready (nova 25.2.1 < 29.0.0' in \
        output['actions'][0]['results']['output']


def test_vendor_vfio_host_is_healthy_and_a_pending_retype_is_a_note():
    output = scenario('health/l40s-vendor-vfio-epoxy.yaml')
    healthy, pending = output['actions']
    assert healthy['failed'] is None and pending['failed'] is None
    gpu, = health(healthy)['gpus']
    assert (gpu['mode'], gpu['vfs'], gpu['nova_types'], gpu['profiles'],
            gpu['created'], gpu['in_use'], gpu['free'], gpu['guests']) == (
        'vendor-vfio', {'enabled': 8, 'total': 8}, ['nvidia-1148'],
        ['NVIDIA L40S-2Q'], 8, 1, 7, ['instance-00000040'])
    result = health(pending)
    assert result['healthy'] is True
    assert [(f['code'], f['broken']) for f in result['findings']] == [
        ('retype-pending', False)]
    assert result['gpus'][0]['wanted_types'] == ['nvidia-1155']
    assert ('nvidia-1148 (NVIDIA L40S-2Q) -> nvidia-1155' in
            pending['results']['output'])
    assert output['host']['guest_disruptions'] == []


def test_a_host_without_gpu_is_healthy_and_has_no_nvidia_smi(tmp_path):
    output = run_yaml(tmp_path, """
name: no GPU, vgpu-health
host:
  packages: {nova-common: "3:25.2.1-0ubuntu2"}
  pci:
    - {address: "0000:00:1f.3", vendor: "8086", device: "a348",
       class: "040300"}
steps:
  - install
  - action: vgpu-health
""")
    action, = output['actions']
    assert action['failed'] is None
    assert 'nvidia-smi' not in action['results']
    assert action['results']['output'].splitlines() == [
        'No NVIDIA GPU on this host.',
        'Live migration: not ready (nova 25.2.1 < 29.0.0, libvirt not found '
        '(needs 8.6.0), qemu not found (needs 8.1.0), linux 5.15.0 < 5.18, '
        'post-copy off)',
        'nvidia-smi: not on this host', 'Healthy']
    assert ['nvidia-smi', 'vgpu'] in output['steps'][-1]['commands']


def test_post_copy_permitted_means_not_ready_to_live_migrate_naming_the_fix():
    """Issue 36, item 6: both actions say, per host, whether its vGPU
    guests can live-migrate and to which hosts."""
    output = scenario('health/v100-post-copy-permitted.yaml')
    listing, health = output['actions']
    expected = (
        "Live migration: not ready (nova 29.2.0 >= 29.0.0, libvirt 10.0.0 "
        ">= 8.6.0, qemu 8.2.2 >= 8.1.0, linux 6.8.0 >= 5.18, post-copy "
        "permitted (nova-compute's live-migration-permit-post-copy must be "
        "false)); only to hosts of group 550.54.16/10de:1db4:10de:1214 "
        "(the same vGPU Manager and board)")
    assert expected in listing['results']['output'].splitlines()
    assert expected in health['results']['output'].splitlines()
    migration = json.loads(listing['results']['live_migration'])
    assert migration['post_copy'] == {'permitted': True, 'ok': False}
    assert migration['group'] == '550.54.16/10de:1db4:10de:1214'
    # Information, not a failure.
    assert health['failed'] is None
