"""vgpu-resource-class (scenarios/resource-class/*.yaml): one Placement
class per vGPU profile where the host's Nova honours it, refused naming
the release where it would not, and VGPU publishing what it always has."""
import json

from simulation import run_yaml, scenario, sections, shipped, until

A40_1_VFS = ['0000:51:0{}.{}'.format(d, f) for d in range(4)
             for f in range(8) if (d, f) >= (0, 4)]
L40S_VFS = ['0000:41:00.{}'.format(f) for f in range(4, 8)] + [
    '0000:41:01.{}'.format(f) for f in range(4)]
READY_A40 = 'Unit is ready: 2 NVIDIA GPUs (A40); 64 SR-IOV VFs; '


def step_named(output, name, nth=0):
    return [step for step in output['steps'] if step['step'] == name][nth]


# ------------------------------------------------------ A40s, caracal

def test_per_profile_on_caracal_while_a_guest_holds_one_type(tmp_path):
    output = run_yaml(tmp_path, until(
        shipped('resource-class/a40-caracal-two-types.yaml'),
        'action: list-vgpu-types'))
    changed = step_named(output, 'config')
    assert changed['relation_sets'] == 1
    # A40-2Q moves at once; A40-48Q keeps VGPU under the guest's vGPU.
    assert sections(output) == {
        'devices': [['enabled_mdev_types', 'nvidia-557, nvidia-566']],
        'mdev_nvidia-557': [['device_addresses', ','.join(A40_1_VFS[:24])],
                            ['mdev_class', 'CUSTOM_VGPU_A40_2Q']],
        'mdev_nvidia-566': [['device_addresses', '0000:52:00.4']]}
    assert changed['status'] == {
        'workload': 'waiting',
        'message': 'Change of vgpu-resource-class waits for guests using '
                   'vGPUs: nvidia-566 keeps VGPU for instance-0000002a '
                   '(wanted: CUSTOM_VGPU_A40_48Q); it applies once they '
                   'are gone (stop or migrate them)'}


def test_once_the_guest_is_gone_each_profile_has_its_class():
    output = scenario('resource-class/a40-caracal-two-types.yaml')
    gone, again = output['steps'][-2:]
    assert gone['step'] == again['step'] == 'update-status'
    assert gone['relation_sets'] == 1 and again['relation_sets'] == 0
    # No class change ever broke the guest's vGPU.
    assert output['host']['guest_disruptions'] == []
    assert sections(output)['mdev_nvidia-566'] == [
        ['device_addresses', '0000:52:00.4'],
        ['mdev_class', 'CUSTOM_VGPU_A40_48Q']]
    assert output['status'] == {'workload': 'active', 'message': (
        READY_A40 + 'nvidia-557: 24 vGPUs on 1 GPU; nvidia-566: 1 vGPU on '
        '1 GPU; A40-2Q is nvidia-557; nvidia-557 as CUSTOM_VGPU_A40_2Q; '
        'nvidia-566 as CUSTOM_VGPU_A40_48Q')}


def test_list_vgpu_types_shows_each_profiles_class_and_flavor():
    output = scenario('resource-class/a40-caracal-two-types.yaml')
    listed = output['actions'][0]
    lines = listed['results']['output'].splitlines()
    assert [line.split(', ')[-3:] for line in lines[:2]] == [
        ['profile=A40-2Q', 'resource_class=CUSTOM_VGPU_A40_2Q',
         'flavor=resources:CUSTOM_VGPU_A40_2Q=1'],
        ['profile=A40-48Q', 'resource_class=CUSTOM_VGPU_A40_48Q',
         'flavor=resources:CUSTOM_VGPU_A40_48Q=1']]
    types = json.loads(listed['results']['types'])
    assert {(t['type'], t['profile'], t['resource_class'],
             t['flavor_property']) for t in types} == {
        ('nvidia-557', 'A40-2Q', 'CUSTOM_VGPU_A40_2Q',
         'resources:CUSTOM_VGPU_A40_2Q=1'),
        ('nvidia-566', 'A40-48Q', 'CUSTOM_VGPU_A40_48Q',
         'resources:CUSTOM_VGPU_A40_48Q=1')}


def test_a_value_that_is_not_one_of_the_two_blocks_and_sets_nothing():
    output = scenario('resource-class/a40-caracal-two-types.yaml')
    wrong, fixed = output['steps'][7:9]
    assert wrong['status'] == {
        'workload': 'blocked',
        'message': "Invalid vgpu-resource-class: 'Per-Profile' is not one "
                   "of its values: VGPU (every vGPU in Placement's VGPU "
                   "class) or per-profile (one class per vGPU profile, e.g. "
                   'CUSTOM_VGPU_A40_2Q)'}
    assert wrong['relation_sets'] == 0
    assert fixed['relation_sets'] == 0
    assert fixed['status']['workload'] == 'waiting'


# ------------------------------------------------- A40s, yoga (nova 25)

def test_on_yoga_one_type_refuses_per_profile_and_nova_keeps_vgpu():
    output = scenario('resource-class/a40-yoga-one-type.yaml')
    refused = output['steps'][4]
    assert refused['step'] == 'config'
    assert refused['status'] == {
        'workload': 'blocked',
        'message': 'Invalid vgpu-resource-class: OpenStack Yoga (nova '
                   '25.2.1) ignores [mdev_<type>] mdev_class on a host with '
                   'only 1 vGPU type (its vGPUs would stay VGPU; Nova fixed '
                   "it in Caracal, nova 29); use VGPU, give this host's GPUs "
                   'at least 2 types, or upgrade to Caracal or later'}
    assert refused['relation_sets'] == 0   # Nova keeps its VGPU settings


def test_on_yoga_two_types_get_their_classes():
    output = scenario('resource-class/a40-yoga-one-type.yaml')
    two = output['steps'][5]
    assert two['relation_sets'] == 1
    assert sections(output) == {
        'devices': [['enabled_mdev_types', 'nvidia-557, nvidia-566']],
        'mdev_nvidia-557': [['device_addresses', ','.join(A40_1_VFS[:24])],
                            ['mdev_class', 'CUSTOM_VGPU_A40_2Q']],
        'mdev_nvidia-566': [['device_addresses', '0000:52:00.4'],
                            ['mdev_class', 'CUSTOM_VGPU_A40_48Q']]}
    assert output['status']['workload'] == 'active'
    assert output['status']['message'].endswith(
        '; nvidia-557 as CUSTOM_VGPU_A40_2Q; '
        'nvidia-566 as CUSTOM_VGPU_A40_48Q')
    assert output['steps'][-1]['relation_sets'] == 0


# -------------------------------------- L40S, vendor-specific VFIO, epoxy

def pci(output):
    entries = sections(output).get('pci', [])
    return ([json.loads(value) for key, value in entries
             if key == 'device_spec'],
            [json.loads(value) for key, value in entries if key == 'alias'])


def test_before_the_driver_names_the_type_nothing_is_published(tmp_path):
    output = run_yaml(tmp_path, until(
        shipped('resource-class/l40s-epoxy.yaml'), 'start'))
    assert pci(output) == ([], [])


def test_vfio_vfs_go_to_nova_under_the_profiles_class():
    output = scenario('resource-class/l40s-epoxy.yaml')
    reboot = step_named(output, 'reboot')
    assert reboot['status'] == {
        'workload': 'active',
        'message': 'Unit is ready: 1 NVIDIA GPU (device 10de:26b9); 8 SR-IOV '
                   'VFs; nvidia-1148 as CUSTOM_VGPU_L40S_2Q'}
    listed = output['actions'][0]['results']['output'].splitlines()
    assert listed[1].split(', ')[-3:] == [
        'profile=L40S-2Q', 'resource_class=CUSTOM_VGPU_L40S_2Q',
        'flavor=pci_passthrough:alias=CUSTOM_VGPU_L40S_2Q:1']


def test_vfio_vfs_and_their_alias_under_the_profiles_class():
    output = scenario('resource-class/l40s-epoxy.yaml')
    specs, aliases = pci(output)
    assert specs == [{'address': vf, 'managed': 'no', 'product_id': '26b9',
                      'resource_class': 'CUSTOM_VGPU_L40S_2Q',
                      'vendor_id': '10de'} for vf in L40S_VFS]
    assert aliases == [{'device_type': 'type-VF',
                        'name': 'CUSTOM_VGPU_L40S_2Q', 'product_id': '26b9',
                        'resource_class': 'CUSTOM_VGPU_L40S_2Q',
                        'vendor_id': '10de'}]


# ------------------------------------------------------ V100s, wallaby

def test_wallaby_has_no_mdev_class_so_per_profile_is_refused():
    output = scenario('resource-class/wallaby-refused.yaml')
    refused, listed, back = output['steps'][4:7]
    assert refused['status'] == {
        'workload': 'blocked',
        'message': "Invalid vgpu-resource-class: per-profile needs Nova's "
                   '[mdev_<type>] mdev_class, which OpenStack Wallaby (nova '
                   '23.2.2) does not have; use VGPU, or upgrade to Caracal '
                   '(nova 29) or later'}
    assert refused['relation_sets'] == 0   # Nova keeps what it has
    # The action says why no class is shown, and shows none.
    results = output['actions'][0]['results']
    assert results['output'].splitlines()[0] == (
        refused['status']['message'] + ' (no resource classes shown until '
        'it is fixed)')
    assert {(t['resource_class'], t['flavor_property'])
            for t in json.loads(results['types'])} == {(None, None)}
    assert back['status'] == {
        'workload': 'active',
        'message': 'Unit is ready: 2 NVIDIA GPUs (Tesla V100 PCIe 16GB)'}
    assert back['relation_sets'] == 0
