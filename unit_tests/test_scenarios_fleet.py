"""One vgpu-device-mappings value for a fleet (scenarios/fleet/*.yaml):
GPU selectors give each host its own addresses."""

from simulation import scenario, sections


def test_the_v100_host_gets_its_v100s():
    output = scenario('fleet/v100-host.yaml')
    assert sections(output) == {
        'devices': [['enabled_mdev_types', 'nvidia-108']],
        'mdev_nvidia-108': [['device_addresses',
                             '0000:84:00.0,0000:85:00.0']]}
    assert output['steps'][3]['status'] == {
        'workload': 'active',
        'message': 'Unit is ready: 2 NVIDIA GPUs (Tesla V100 PCIe 16GB); '
                   'nvidia-108 on 2 GPUs (10de:1db4); no GPU here matches '
                   '10de:1eb8:10de:12a2; not on this host: 0000:86:00.0'}


def test_the_t4_host_gets_its_t4s_from_the_same_value():
    output = scenario('fleet/t4-host.yaml')
    assert sections(output) == {
        'devices': [['enabled_mdev_types', 'nvidia-234']],
        'mdev_nvidia-234': [['device_addresses',
                             '0000:3b:00.0,0000:af:00.0']]}
    assert output['status'] == {
        'workload': 'active',
        'message': 'Unit is ready: 2 NVIDIA GPUs (Tesla T4); nvidia-234 on '
                   '2 GPUs (10de:1eb8:10de:12a2); no GPU here matches '
                   '10de:1db4; not on this host: 0000:86:00.0'}


def test_a_collision_through_a_selector_is_refused_and_changes_nothing():
    output = scenario('fleet/v100-host.yaml')
    refused = output['steps'][-1]
    assert refused['status'] == {
        'workload': 'blocked',
        'message': 'Invalid vgpu-device-mappings: 0000:84:00.0 is claimed '
                   'by both nvidia-105 and nvidia-108 (through 10de:1db4 '
                   'matching 0000:84:00.0); a device offers one type'}
    assert refused['relation_sets'] == 0
    assert sections(output)['mdev_nvidia-108'] == [
        ['device_addresses', '0000:84:00.0,0000:85:00.0']]
