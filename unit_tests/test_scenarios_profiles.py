"""vGPU profile names as mapping keys (scenarios/profiles/*.yaml): each
host finds the type id its own driver gives the name, on every kind of
GPU, and publishes nothing for a name before the driver runs."""
import json

from simulation import run_yaml, scenario, sections, shipped, until

A100_VFS = ['0000:41:00.{}'.format(f) for f in range(4, 8)] + [
    '0000:41:01.{}'.format(f) for f in range(8)]
A40_VFS = ['0000:41:0{}.{}'.format(d, f) for d in range(4) for f in range(8)
           if (d, f) >= (0, 4)]


def test_before_the_driver_runs_the_name_gets_nothing_the_id_is_published(
        tmp_path):
    output = run_yaml(tmp_path, until(
        shipped('profiles/v100-yoga.yaml'), 'start'))
    assert sections(output) == {
        'devices': [['enabled_mdev_types', 'nvidia-105']],
        'mdev_nvidia-105': [['device_addresses', '0000:85:00.0']]}
    assert output['status'] == {
        'workload': 'blocked',
        'message': 'Reboot required: installed NVIDIA software '
                   'nvidia-vgpu-ubuntu-550 550.54.16, the NVIDIA driver is '
                   'not loaded yet'}


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


def test_a_profile_the_v100_lacks_blocks_and_lists_its_names():
    output = scenario('profiles/v100-yoga.yaml')
    refused, fixed, again = output['steps'][6:9]
    assert refused['status'] == {
        'workload': 'blocked',
        'message': 'Invalid vgpu-device-mappings: V100-2Q is not offered by '
                   'the GPU at 0000:84:00.0 (it offers: V100-1Q, V100-8Q, '
                   'V100-16C); see the list-vgpu-types action'}
    assert refused['relation_sets'] == 0   # Nova keeps what it had
    # Back to the valid value: what Nova has already, nothing is set.
    assert fixed['status']['workload'] == 'active'
    assert fixed['relation_sets'] == again['relation_sets'] == 0


def test_a_mig_backed_name_is_read_on_the_a100s_vfs():
    output = scenario('profiles/a100-mig-caracal.yaml')
    # A100D-1-10C: 7 per GPU, so 7 of the 16 VFs.
    assert sections(output) == {
        'devices': [['enabled_mdev_types', 'nvidia-699']],
        'mdev_nvidia-699': [['device_addresses', ','.join(A100_VFS[:7])]]}
    assert output['status']['message'] == (
        'Unit is ready: 1 NVIDIA GPU (A100 PCIe 80GB); 16 SR-IOV VFs; '
        'nvidia-699: 7 vGPUs on 1 GPU; A100D-1-10C is nvidia-699; '
        'nvidia-699 on 1 GPU (10de:20b5)')


def test_the_name_is_the_same_whichever_prefix_the_driver_prints(tmp_path):
    """Drivers print "GRID A100D-..." or "NVIDIA A100D-..."."""
    text = shipped('profiles/a100-mig-caracal.yaml').replace(
        'name: GRID A100D', 'name: NVIDIA A100D')
    assert 'NVIDIA A100D-1-10C' in text
    output = run_yaml(tmp_path, text)
    assert sections(output) == sections(
        scenario('profiles/a100-mig-caracal.yaml'))


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
        'L40S-2Q is nvidia-1148')
    # The next boot types the VFs again and changes nothing in Nova.
    assert output['steps'][-1]['relation_sets'] == 0


def test_two_models_on_one_host_each_take_their_own_name():
    output = scenario('profiles/v100-and-a40-caracal.yaml')
    assert sections(output) == {
        'devices': [['enabled_mdev_types', 'nvidia-108, nvidia-558']],
        'mdev_nvidia-108': [['device_addresses', '0000:84:00.0']],
        # A40-2Q: 24 per A40
        'mdev_nvidia-558': [['device_addresses', ','.join(A40_VFS[:24])]]}
    assert output['steps'][4]['status'] == {
        'workload': 'active',
        'message': 'Unit is ready: 2 NVIDIA GPUs (1 A40, 1 Tesla V100 PCIe '
                   '16GB); 32 SR-IOV VFs; nvidia-558: 24 vGPUs on 1 GPU; '
                   'A40-2Q is nvidia-558; V100-8Q is nvidia-108; no GPU '
                   'here offers T4-4Q; nvidia-558 on 1 GPU (10de:2235)'}


def test_the_other_models_name_on_the_v100_is_refused_naming_its_own():
    output = scenario('profiles/v100-and-a40-caracal.yaml')
    refused = output['steps'][-1]
    assert refused['status'] == {
        'workload': 'blocked',
        'message': 'Invalid vgpu-device-mappings: A40-2Q is not offered by '
                   'the GPU at 0000:84:00.0 (it offers: V100-1Q, V100-8Q); '
                   'see the list-vgpu-types action'}
    assert refused['relation_sets'] == 0
    assert 'mdev_nvidia-558' in sections(output)
