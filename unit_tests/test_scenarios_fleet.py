"""One vgpu-device-mappings value for a fleet (scenarios/fleet/*.yaml):
GPU selectors give each host its own addresses, end to end on the V100
host. The T4 host, and a selector colliding with an address, are
test_plan.py's."""

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
