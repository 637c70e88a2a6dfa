"""Running guests keep their vGPUs (scenarios/guests/*.yaml): a retype of
a GPU in use and a new vGPU software revision wait for the guests on
V100 (mdev on the GPU; from Gazpacho also one guest with a vGPU on each
GPU), A100 (mdevs on SR-IOV VFs) and L40S (typed VFs of the
vendor-specific VFIO driver); once the guests are gone the first hook,
update-status included, applies what waited."""
import json
import os

from simulation import SCENARIOS, run_yaml, scenario, sections

RESOURCE = ('/var/lib/juju/agents/unit-nova-compute-nvidia-vgpu-0/'
            'resources/nvidia-vgpu-software/nvidia-vgpu.deb')
INSTALL = ['apt-get', '--assume-yes',
           '--option=Dpkg::Options::=--force-confold', '--allow-downgrades',
           'install', RESOURCE]


def by_step(output):
    return {index: step for index, step in enumerate(output['steps'])}


def until(name, last_step):
    """A shipped scenario cut after its step number last_step."""
    with open(os.path.join(SCENARIOS, name)) as stream:
        text = stream.read()
    head, steps = text.split('\nsteps:\n')
    kept, count = [], -1
    for line in steps.splitlines():
        if line.startswith('  - '):
            count += 1
        if count > last_step:
            break
        kept.append(line)
    return head + '\nsteps:\n' + '\n'.join(kept) + '\n'


# ------------------------------------------------------------ V100

def test_v100_the_change_applies_at_the_first_update_status_after_them():
    output = scenario('guests/v100-retype-waits.yaml')
    steps = by_step(output)
    assert steps[7]['step'] == 'guests' and steps[7]['hooks'] == []
    assert steps[8]['step'] == 'update-status'
    assert steps[8]['relation_sets'] == 1
    assert steps[8]['status'] == {
        'workload': 'active',
        'message': 'Unit is ready: 2 NVIDIA GPUs (Tesla V100 PCIe 16GB)'}
    assert sections(output) == {
        'devices': [['enabled_mdev_types', 'nvidia-105']],
        'mdev_nvidia-105': [['device_addresses',
                             '0000:84:00.0,0000:85:00.0']]}
    # Unchanged state sets nothing: nova-compute restarts once.
    assert steps[9]['relation_sets'] == 0
    assert output['host']['guest_disruptions'] == []


def test_v100_a_new_driver_waits_for_the_guests_and_names_them():
    output = scenario('guests/v100-driver-upgrade-waits.yaml')
    steps = by_step(output)
    waits = ('Attached vGPU software nvidia-vgpu-ubuntu-550 550.90.05 waits '
             'for 2 guests using vGPUs (instance-0000002a, '
             'instance-0000002b): it installs once they no longer run here '
             '(stop, migrate, resize, shelve-offload or delete them), or run '
             'install-vgpu-software with force=true')
    for index in (5, 6, 7, 8):
        assert steps[index]['status'] == {'workload': 'waiting',
                                          'message': waits}, index
        assert INSTALL not in steps[index]['commands']
    refused = output['actions'][0]
    assert refused['name'] == 'install-vgpu-software'
    assert refused['failed'] == (
        'Refusing to install-vgpu-software: 2 vGPUs on 0000:84:00.0 in use '
        'by 2 running guests (instance-0000002a, instance-0000002b); '
        'replacing the vGPU Manager would break them. Stop, migrate, resize, '
        'shelve-offload or delete those guests first, or run '
        'install-vgpu-software with force=true')
    # The guests are gone: the next update-status installs it.
    assert steps[9]['step'] == 'update-status'
    assert INSTALL in steps[9]['commands']
    assert steps[9]['status'] == {'workload': 'blocked', 'message': (
        'Reboot required: installed NVIDIA software nvidia-vgpu-ubuntu-550 '
        '550.90.05, driver 550.54.16 is still running')}
    assert steps[10]['step'] == 'reboot'
    assert steps[10]['status']['workload'] == 'active'
    assert output['host']['guest_disruptions'] == []


def test_v100_rolling_back_installs_the_older_file_with_apt():
    output = scenario('guests/v100-driver-upgrade-waits.yaml')
    steps = by_step(output)
    assert steps[12]['step'] == 'attach'
    assert INSTALL in steps[12]['commands']
    assert steps[12]['status']['message'] == (
        'Reboot required: installed NVIDIA software nvidia-vgpu-ubuntu-550 '
        '550.54.16, driver 550.90.05 is still running')
    assert output['host']['packages']['nvidia-vgpu-ubuntu-550'] == \
        '550.54.16'
    assert output['application_version'] == '550.54.16'
    assert output['status']['workload'] == 'active'


def test_v100_force_installs_under_the_guest_and_says_so():
    output = scenario('guests/v100-driver-forced.yaml')
    forced, again = output['actions']
    assert forced['params'] == {'force': True} and forced['failed'] is None
    assert forced['results'] == {'message': (
        'Installed nvidia-vgpu-ubuntu-550 550.90.05; reboot the host when '
        'the unit asks, to load its driver')}
    assert again['results'] == {
        'message': 'nvidia-vgpu-ubuntu-550 550.90.05 is already installed'}
    assert INSTALL not in output['steps'][6]['commands']
    # What force means: the guest's vGPU was broken, as the operator chose.
    assert output['host']['guest_disruptions'] == [{
        'step': 5, 'guest': 'instance-0000002a',
        'cause': 'nvidia-vgpu-ubuntu-550 550.54.16 replaced by '
                 'nvidia-vgpu-ubuntu-550 550.90.05 (apt-get install)'}]
    assert output['status']['message'].startswith('Reboot required')


def test_v100_gazpacho_lists_two_per_guest_and_that_guest_holds_both_gpus():
    output = scenario('guests/v100-two-vgpus-one-guest.yaml')
    listed = output['actions'][0]['results']['output'].splitlines()
    assert [line.split(', two per guest: ')[1] for line in listed[:-1]] == [
        'resources1:VGPU=1 resources2:VGPU=1 group_policy=isolate'] * 4
    steps = by_step(output)
    waits = ('Change of vgpu-device-mappings waits for guests using vGPUs: '
             '0000:85:00.0 keeps nvidia-108 for instance-0000002a (wanted: '
             'nvidia-105); it applies once they are gone (migrate, resize, '
             'shelve-offload or delete them; a stopped guest keeps its '
             'vGPU)')
    for index in (7, 8):
        assert steps[index]['status'] == {'workload': 'waiting',
                                          'message': waits}, index
    # While the guest runs, Nova is told nothing: it keeps both GPUs
    # under nvidia-108, as published at the start.
    assert [steps[index]['relation_sets'] for index in (6, 7, 8)] == [
        0, 0, 0]
    # The guest is gone: the second GPU takes its new type.
    assert steps[10]['relation_sets'] == 1
    assert sections(output) == {
        'devices': [['enabled_mdev_types', 'nvidia-105, nvidia-108']],
        'mdev_nvidia-105': [['device_addresses', '0000:85:00.0']],
        'mdev_nvidia-108': [['device_addresses', '0000:84:00.0']]}
    assert output['host']['guest_disruptions'] == []


# ------------------------------------------------------------ A100

def test_a100_a_retype_keeps_every_vf_of_the_gpu_in_use():
    output = scenario('guests/a100-retype-waits.yaml')
    steps = by_step(output)
    assert steps[5]['status'] == {'workload': 'waiting', 'message': (
        'Change of vgpu-device-mappings waits for guests using vGPUs: '
        '0000:41:00.0 keeps nvidia-697 for instance-0000003a (wanted: '
        'nvidia-692); it applies once they are gone (migrate, resize, '
        'shelve-offload or delete them; a stopped guest keeps its vGPU)')}
    # The whole GPU waits: nothing changes for Nova.
    assert steps[5]['relation_sets'] == 0
    refused = output['actions'][0]
    assert refused['name'] == 'restart-services'
    assert refused['failed'].startswith(
        'Refusing to restart-services: 1 vGPU on 0000:41:00.5 in use by '
        'running guest (instance-0000003a)')
    # Driver and type both wait, and the status says both.
    assert steps[8]['status']['message'].startswith(
        'Attached vGPU software nvidia-vgpu-ubuntu-550 550.90.05 waits for '
        '1 guest using vGPUs (instance-0000003a)')
    assert '; Change of vgpu-device-mappings waits' in \
        steps[8]['status']['message']


def test_a100_once_the_guest_is_gone_one_update_status_applies_both():
    output = scenario('guests/a100-retype-waits.yaml')
    steps = by_step(output)
    assert steps[10]['step'] == 'update-status'
    assert INSTALL in steps[10]['commands']
    assert steps[10]['relation_sets'] == 1
    vfs = sections(output)['mdev_nvidia-692'][0][1].split(',')
    assert len(vfs) == 16 and '0000:41:00.5' in vfs
    assert output['status'] == {'workload': 'active', 'message': (
        'Unit is ready: 1 NVIDIA GPU (A100 PCIe 80GB); 16 SR-IOV VFs; '
        'nvidia-692: 16 vGPUs on 1 GPU')}
    assert output['host']['guest_disruptions'] == []


# ------------------------------------------------------------ L40S

def test_l40s_no_vf_is_retyped_under_the_guest(tmp_path):
    held = run_yaml(tmp_path, until('guests/l40s-retype-waits.yaml', 9))
    assert held['steps'][8]['status'] == {'workload': 'waiting', 'message': (
        'Change of vgpu-device-mappings waits for guests using vGPUs: '
        '0000:41:00.0 keeps nvidia-1148 for instance-0000004a (wanted: '
        'nvidia-1155); it applies once they are gone (migrate, resize, '
        'shelve-offload or delete them; a stopped guest keeps its vGPU)')}
    assert held['host']['vf_vgpu_types'] == {
        vf: '1148' for vf in ('0000:41:00.4', '0000:41:00.5',
                              '0000:41:00.6', '0000:41:00.7')}
    spec = [json.loads(value) for key, value in sections(held)['pci']
            if key == 'device_spec']
    assert {entry['resource_class'] for entry in spec} == {
        'CUSTOM_NVIDIA_1148'}
    assert held['actions'][0]['failed'].startswith(
        'Refusing to restart-services: 1 vGPU on 0000:41:00.4 in use by '
        'running guest (instance-0000004a)')
    assert held['host']['guest_disruptions'] == []


def test_l40s_driver_and_retype_apply_once_the_guest_is_gone():
    output = scenario('guests/l40s-retype-waits.yaml')
    steps = by_step(output)
    assert steps[10]['step'] == 'attach'
    assert steps[10]['status']['message'].startswith(
        'Attached vGPU software nvidia-vgpu-ubuntu-570 570.195.03 waits for '
        '1 guest using vGPUs (instance-0000004a)')
    assert not any(argv[0] == 'apt-get' for argv in steps[10]['commands'])
    assert steps[12]['step'] == 'update-status'
    assert INSTALL in steps[12]['commands']
    assert steps[12]['relation_sets'] == 1
    assert steps[12]['status']['message'].startswith('Reboot required')
    assert steps[13]['relation_sets'] == 0
    # After the reboot the boot unit gives every VF the new type again.
    assert steps[14]['step'] == 'reboot'
    assert output['status']['workload'] == 'active'
    assert set(output['host']['vf_vgpu_types'].values()) == {'1155'}
    spec = [json.loads(value) for key, value in sections(output)['pci']
            if key == 'device_spec']
    assert {entry['resource_class'] for entry in spec} == {
        'CUSTOM_NVIDIA_1155'}
    assert output['host']['guest_disruptions'] == []
