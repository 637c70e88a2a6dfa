"""A GPU fails, is taken out of Nova and swapped (scenarios/gpu-failure/):
the guest on it is named with the fix, its vGPU is never recreated on
another GPU, nothing waits for it once it has moved, and the GPU swapped
in gets its type back with nothing to clean up."""
import json

from simulation import scenario

SWAPPED = 'gpu-failure/v100-fails-and-is-swapped.yaml'
ONE_BOOT = 'gpu-failure/v100-gone-for-one-boot.yaml'
GUEST_B_VGPU = '9f1c2a7e-3d5b-4e8f-a0c6-1b2d3e4f5a6b'
LOST = ('Host drift: Guest instance-0000002b has lost its vGPU '
        '9f1c2a7e-3d5b-4e8f-a0c6-1b2d3e4f5a6b with its device 0000:85:00.0, '
        'which is not on this host any more (a failed or removed GPU): '
        'cold-migrate the guest off this host, then take the GPU out of '
        'Nova or swap it (Replacing a failed GPU)')


def addresses(output):
    sections = json.loads(output['relations']['nova-vgpu:1'][
        'subordinate_configuration'])['nova']['/etc/nova/nova.conf'][
            'sections']
    return dict(sections['mdev_nvidia-108'])['device_addresses']


def test_the_guest_of_a_failed_gpu_is_named_with_the_fix():
    output = scenario(SWAPPED)
    reboot = output['steps'][6]
    assert reboot['step'] == 'reboot'
    assert reboot['status'] == {'workload': 'blocked', 'message': LOST}
    # Its vGPU is not made on the GPU that is left, whose capacity is
    # other guests'; the other guest keeps its own.
    health = output['actions'][0]
    assert LOST[len('Host drift: '):] in health['failed']
    assert '0000:84:00.0  Tesla V100 PCIe 16GB  mdev  -    nvidia-108 ' \
        '(GRID V100-8Q)  1        1' in health['results']['output']


def test_once_the_guest_moved_the_gpu_leaves_nova_at_once():
    output = scenario(SWAPPED)
    taken_out = output['steps'][10]
    assert 'config' in taken_out['step']
    assert taken_out['status']['workload'] == 'active'
    assert not any(step['status']['message'].startswith('Change of')
                   for step in output['steps'])


def test_the_gpu_swapped_in_gets_its_type_back():
    output = scenario(SWAPPED)
    assert output['status']['workload'] == 'active'
    assert output['status']['message'].startswith(
        'Unit is ready: 2 NVIDIA GPUs')
    assert addresses(output) == '0000:84:00.0,0000:85:00.0'
    listed = output['actions'][1]['results']['output']
    assert 'nvidia-108, 0000:85:00.0, GRID V100-8Q' in listed
    assert output['host']['guest_disruptions'] == []


def test_a_gpu_back_at_its_address_gets_its_guest_vgpu_back():
    output = scenario(ONE_BOOT)
    gone = output['steps'][6]
    assert gone['status']['message'] == LOST
    assert output['status']['workload'] == 'active'
    assert {'uuid': GUEST_B_VGPU, 'parent': '0000:85:00.0',
            'type': 'nvidia-108', 'defined': False} in output['host']['mdevs']
