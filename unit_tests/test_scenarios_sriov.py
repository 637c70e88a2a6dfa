"""SR-IOV GPUs (scenarios/sriov/*.yaml): VFs enabled at every boot by a
unit the charm installs and takes away, list-vgpu-types per GPU, and a
change held for a guest applied once it is gone. Which VFs Nova is
given (as many as the GPU can host, a guest's VF kept) is test_plan.py's.
"""

from simulation import scenario, sections

UNIT = '/etc/systemd/system/nvidia-vgpu-sriov.service'
READY = 'Unit is ready: 1 NVIDIA GPU (A100 PCIe 80GB); 16 SR-IOV VFs'
# One A100 hosts 2 A100D-40C (nvidia-697), whatever its 16 VFs say.
READY_697 = READY + '; nvidia-697: 2 vGPUs on 1 GPU'


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


def test_vfs_gone_at_reboot_come_back_and_nova_is_not_touched():
    output = scenario('sriov/a100-caracal.yaml')
    second = output['steps'][7]
    assert second['step'] == 'reboot'
    assert ['sriov-manage', '-e', 'ALL'] in second['commands']
    assert second['relation_sets'] == 0
    assert output['host']['vfs'] == {'0000:41:00.0': 16}


def test_list_vgpu_types_groups_vfs_under_their_gpu():
    output = scenario('sriov/a100-caracal.yaml')
    *lines, migration = output['actions'][0]['results'][
        'output'].splitlines()
    assert migration.startswith('Live migration: not ready (nova 29.2.0 >= '
                                '29.0.0, libvirt not found')
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


def a40_vfs(gpu_bus, count):
    return ['0000:{}:{:02x}.{}'.format(gpu_bus, (4 + i) // 8, (4 + i) % 8)
            for i in range(count)]


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


def test_list_vgpu_types_says_what_each_a40_can_still_host():
    output = scenario('sriov/two-a40-guests-caracal.yaml')
    lines = output['actions'][0]['results']['output'].splitlines()[:-1]
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


L40S_READY = 'Unit is ready: 1 NVIDIA GPU (device 10de:26b9); 32 SR-IOV VFs'


def test_two_sizes_on_one_l40s_from_mixed_size_mode_and_back():
    """The story of sriov/l40s-two-sizes-jammy.yaml: the mode set before
    Nova is told, and again at a reboot before the guests start, their
    vGPUs back at their placements; one size again once they are gone.
    No VM ever meets a placement it cannot start with."""
    output = scenario('sriov/l40s-two-sizes-jammy.yaml')
    steps = output['steps']
    mixed = L40S_READY + ('; nvidia-1147: 8 vGPUs on 1 GPU; nvidia-1148: 8 '
                          'vGPUs on 1 GPU')
    assert steps[4]['status']['message'].startswith(mixed)
    assert ['nvidia-smi', 'vgpu', '-i', '00000000:41:00.0', '-shm', '1'] in \
        steps[4]['commands']
    # nothing changed: nothing set, nothing published
    assert steps[5]['relation_sets'] == 0
    assert not [argv for argv in steps[5]['commands'] if '-shm' in argv]
    # the reboot: the restore unit sets the mode; the guests' vGPUs are
    # there again (no drift)
    boot = steps[7]['commands']
    assert boot.index(['python3', '-m', 'nvidia_vgpu.restore']) < boot.index(
        ['nvidia-smi', 'vgpu', '-i', '00000000:41:00.0', '-shm', '1'])
    assert steps[7]['status']['message'].startswith(mixed)
    assert steps[8]['status']['message'].startswith(
        L40S_READY + '; nvidia-1147: 2 vGPUs on 1 GPU; nvidia-1148: 2 vGPUs '
        'on 1 GPU')
    assert steps[10]['status'] == {'workload': 'waiting', 'message': (
        'Change of vgpu-device-mappings waits for guests using vGPUs: '
        "0000:41:00.0 leaves NVIDIA's mixed-size mode, which cannot change "
        'while a vGPU exists on it (instance-0000005a, instance-0000005b): '
        'move them to another host (openstack server migrate), and the next '
        'hook changes it')}
    assert steps[-1]['status']['message'].startswith(
        L40S_READY + '; nvidia-1148: 24 vGPUs on 1 GPU')
    host = output['host']
    assert host['mixed_modes'] == {'0000:41:00.0': 'Disabled'}
    assert host['mdevs'] == []
    assert host['placement_refusals'] == []
    assert host['guest_disruptions'] == []
    assert len(sections(output)['mdev_nvidia-1148'][0][1].split(',')) == 24
