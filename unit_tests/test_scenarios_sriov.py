"""SR-IOV GPUs (scenarios/sriov/*.yaml): VFs enabled at every boot, the
GPU's address standing for its VFs, as many VFs as the GPU can host."""

from simulation import scenario, sections

UNIT = '/etc/systemd/system/nvidia-vgpu-sriov.service'
READY = 'Unit is ready: 1 NVIDIA GPU (A100 PCIe 80GB); 16 SR-IOV VFs'
# One A100 hosts 2 A100D-40C (nvidia-697), whatever its 16 VFs say.
READY_697 = READY + '; nvidia-697: 2 vGPUs on 1 GPU'
VFS = ['0000:41:00.{}'.format(f) for f in range(4, 8)] + [
    '0000:41:01.{}'.format(f) for f in range(8)] + [
    '0000:41:02.{}'.format(f) for f in range(4)]


def test_boot_unit_is_installed_with_the_software_and_enabled():
    output = scenario('sriov/a100-yoga-vf-addresses.yaml')
    install = output['steps'][0]
    assert ['systemctl', 'enable', 'nvidia-vgpu-sriov.service'] in \
        install['commands']
    unit = output['files'][UNIT]
    assert 'ExecStart=/usr/lib/nvidia/sriov-manage -e ALL' in unit
    assert 'After=nvidia-vgpu-mgr.service' in unit
    assert 'Before=nova-compute.service' in unit


def test_vfs_are_enabled_at_boot_before_the_charm_runs():
    output = scenario('sriov/a100-caracal.yaml')
    reboot = output['steps'][4]
    assert reboot['step'] == 'reboot'
    # VFs first, then (before Dalmatian) the vGPU restore that needs them.
    assert reboot['commands'][:4] == [
        ['systemctl', 'start', 'nvidia-vgpu-sriov'],
        ['sriov-manage', '-e', 'ALL'],
        ['systemctl', 'start', 'nvidia-vgpu-restore-mdevs'],
        ['python3', '-m', 'nvidia_vgpu.restore']]
    assert reboot['status'] == {'workload': 'active', 'message': READY_697}


def test_the_gpus_address_is_given_to_nova_as_as_many_vfs_as_it_hosts():
    output = scenario('sriov/a100-caracal.yaml')
    reboot = output['steps'][4]
    assert reboot['relation_sets'] == 1
    # One A100 hosts at most 2 A100D-40C vGPUs: its two lowest VFs, and
    # no host-wide max_instances (nvidia_vgpu.nova.capacity says why).
    assert sections(output) == {
        'devices': [['enabled_mdev_types', 'nvidia-697']],
        'mdev_nvidia-697': [['device_addresses', ','.join(VFS[:2])]]}


def test_vfs_gone_at_reboot_come_back_and_nova_is_not_touched():
    output = scenario('sriov/a100-caracal.yaml')
    second = output['steps'][7]
    assert second['step'] == 'reboot'
    assert ['sriov-manage', '-e', 'ALL'] in second['commands']
    assert second['relation_sets'] == 0
    assert output['host']['vfs'] == {'0000:41:00.0': 16}


def test_a_vf_claimed_through_its_gpu_and_by_address_is_refused():
    output = scenario('sriov/a100-caracal.yaml')
    refused = output['steps'][9]
    assert refused['status'] == {
        'workload': 'blocked',
        'message': 'Invalid vgpu-device-mappings: 0000:41:00.5 is claimed '
                   'by both nvidia-692 and nvidia-697 (through '
                   '0000:41:00.0); a device offers one type'}
    assert refused['relation_sets'] == 0


def test_list_vgpu_types_groups_vfs_under_their_gpu():
    output = scenario('sriov/a100-caracal.yaml')
    lines = output['actions'][0]['results']['output'].splitlines()
    assert lines == [
        'nvidia-692, 0000:41:00.0, GRID A100D-4C, framebuffer=4096M, '
        'max_instance=20, num_heads=1, max_resolution=4096x2160, '
        'available=16 on 16 VFs, profile=A100D-4C, resource_class=VGPU, '
        'flavor=resources:VGPU=1',
        'nvidia-697, 0000:41:00.0, GRID A100D-40C, framebuffer=40960M, '
        'max_instance=2, num_heads=1, max_resolution=4096x2160, '
        'available=2 on 16 VFs, profile=A100D-40C, resource_class=VGPU, '
        'flavor=resources:VGPU=1',
        'nvidia-698, 0000:41:00.0, GRID A100D-80C, framebuffer=81920M, '
        'max_instance=1, num_heads=1, max_resolution=4096x2160, '
        'available=1 on 16 VFs, profile=A100D-80C, resource_class=VGPU, '
        'flavor=resources:VGPU=1']


def test_stop_takes_the_boot_unit_away():
    output = scenario('sriov/a100-caracal.yaml')
    stop = output['steps'][-1]
    assert stop['step'] == 'stop'
    assert [argv for argv in stop['commands']
            if argv[0] == 'systemctl' and argv[1] != 'is-active'] == [
        ['systemctl', 'disable', 'nvidia-vgpu-sriov.service'],
        ['systemctl', 'daemon-reload'],
        ['systemctl', 'disable', 'nvidia-vgpu-restore-mdevs.service'],
        ['systemctl', 'daemon-reload']]
    assert UNIT not in output['files']


def test_before_caracal_vf_addresses_without_caps():
    output = scenario('sriov/a100-yoga-vf-addresses.yaml')
    assert output['status'] == {'workload': 'active', 'message': READY + (
        '; nvidia-692: 2 vGPUs on 1 GPU; nvidia-698: 1 vGPU on 1 GPU')}
    assert sections(output) == {
        'devices': [['enabled_mdev_types', 'nvidia-692, nvidia-698']],
        'mdev_nvidia-692': [['device_addresses',
                             '0000:41:00.4,0000:41:00.5']],
        'mdev_nvidia-698': [['device_addresses', '0000:41:00.6']]}


GUEST_VF = '0000:52:01.1'


def a40_vfs(gpu_bus, count):
    return ['0000:{}:{:02x}.{}'.format(gpu_bus, (4 + i) // 8, (4 + i) % 8)
            for i in range(count)]


def test_each_a40_offers_what_it_can_host_and_keeps_the_guests_vf():
    output = scenario('sriov/two-a40-guests-caracal.yaml')
    first = output['steps'][2]
    assert first['step'] == 'config-changed'
    assert first['status']['message'] == (
        'Unit is ready: 2 NVIDIA GPUs (A40); 64 SR-IOV VFs; nvidia-566: '
        '1 vGPU per GPU on 2 GPUs; nvidia-566 on 2 GPUs (10de:2235)')
    # The new mapping leaves the second A40 out, but a guest uses its
    # A40-48Q: that GPU keeps its VF of nvidia-566 until the guest is
    # gone; the first GPU takes nvidia-557 at once.
    later = output['steps'][-3]
    assert later['status'] == {'workload': 'waiting', 'message': (
        'Change of vgpu-device-mappings waits for guests using vGPUs: '
        '0000:52:00.0 keeps nvidia-566 for instance-0000002a (wanted: out '
        'of the mapping); it applies once they are gone (stop or migrate '
        'them)')}


def test_while_the_guest_stays_its_a40_keeps_its_vf(tmp_path):
    import os
    from simulation import SCENARIOS, run_yaml
    with open(os.path.join(SCENARIOS, 'sriov',
                           'two-a40-guests-caracal.yaml')) as stream:
        text = stream.read()
    text = text[:text.index('  - guests:')]
    output = run_yaml(tmp_path, text)
    assert sections(output) == {
        'devices': [['enabled_mdev_types', 'nvidia-557, nvidia-566']],
        'mdev_nvidia-557': [['device_addresses',
                             ','.join(a40_vfs('51', 24))]],
        'mdev_nvidia-566': [['device_addresses', GUEST_VF]]}


def test_the_a40s_change_applies_once_the_guest_is_gone():
    output = scenario('sriov/two-a40-guests-caracal.yaml')
    gone, after = output['steps'][-2:]
    assert gone['step'] == 'guests' and after['step'] == 'update-status'
    assert after['relation_sets'] == 1
    assert after['status'] == {'workload': 'active', 'message': (
        'Unit is ready: 2 NVIDIA GPUs (A40); 64 SR-IOV VFs; nvidia-557: '
        '24 vGPUs on 1 GPU')}
    assert sections(output) == {
        'devices': [['enabled_mdev_types', 'nvidia-557']],
        'mdev_nvidia-557': [['device_addresses',
                             ','.join(a40_vfs('51', 24))]]}


def test_the_guests_vf_is_the_one_given_for_its_gpu(tmp_path):
    import os
    from simulation import SCENARIOS, run_yaml
    with open(os.path.join(SCENARIOS, 'sriov',
                           'two-a40-guests-caracal.yaml')) as stream:
        text = stream.read()
    text = text[:text.index('steps:')] + 'steps: [install]\n'
    output = run_yaml(tmp_path, text)
    assert sections(output)['mdev_nvidia-566'] == [
        ['device_addresses', ','.join([a40_vfs('51', 1)[0], GUEST_VF])]]


def test_list_vgpu_types_says_what_each_a40_can_still_host():
    output = scenario('sriov/two-a40-guests-caracal.yaml')
    lines = output['actions'][0]['results']['output'].splitlines()
    # The second A40 hosts the guest's A40-48Q: full, and one type at a
    # time; the first can take 24 A40-2Q or one A40-48Q.
    assert [line.split(', ')[:3] + line.split(', ')[-4:-3]
            for line in lines] == [
        ['nvidia-557', '0000:51:00.0', 'NVIDIA A40-2Q',
         'available=24 on 32 VFs'],
        ['nvidia-566', '0000:51:00.0', 'NVIDIA A40-48Q',
         'available=1 on 32 VFs'],
        ['nvidia-557', '0000:52:00.0', 'NVIDIA A40-2Q',
         'available=0 on 32 VFs'],
        ['nvidia-566', '0000:52:00.0', 'NVIDIA A40-48Q',
         'available=0 on 32 VFs']]
