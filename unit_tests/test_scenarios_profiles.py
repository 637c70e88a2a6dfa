"""vGPU profile names as mapping keys (scenarios/profiles/*.yaml), end
to end: the name is published once the driver that names it runs, on mdev
and on the vendor-specific VFIO driver. What each name resolves to on
each kind of GPU, and what waits or is refused, is test_plan.py's."""
import json

from simulation import scenario, sections


def test_once_the_driver_runs_the_v100s_name_is_its_type_id():
    output = scenario('profiles/v100-yoga.yaml')
    reboot = output['steps'][4]
    assert reboot['step'] == 'reboot' and reboot['relation_sets'] == 1
    assert reboot['status'] == {
        'workload': 'active',
        'message': 'Unit is ready: 2 NVIDIA GPUs (Tesla V100 PCIe 16GB); '
                   'V100-8Q is nvidia-108'}
    assert sections(output) == {
        'devices': [['enabled_mdev_types', 'nvidia-105, nvidia-108']],
        'mdev_nvidia-105': [['device_addresses', '0000:85:00.0']],
        'mdev_nvidia-108': [['device_addresses', '0000:84:00.0']]}


def test_on_the_vendor_specific_vfio_driver_the_vfs_table_names_it():
    output = scenario('profiles/l40s-epoxy.yaml')
    pci = sections(output)['pci']
    specs = [json.loads(value) for key, value in pci if key == 'device_spec']
    assert {spec['resource_class'] for spec in specs} == {
        'CUSTOM_NVIDIA_1148'}
    assert len(specs) == 8
    assert set(output['host']['vf_vgpu_types'].values()) == {'1148'}
    assert output['status']['message'] == (
        'Unit is ready: 1 NVIDIA GPU (device 10de:26b9); 8 SR-IOV VFs; '
        'typed VFs live-migratable; nvidia-1148: 8 vGPUs on 1 GPU; L40S-2Q '
        'is nvidia-1148')
    # The next boot types the VFs again and changes nothing in Nova.
    assert output['steps'][-1]['relation_sets'] == 0
