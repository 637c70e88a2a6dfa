"""vgpu-resource-class (scenarios/resource-class/*.yaml), end to end: a
class change waits for the guest and applies at the first update-status
after it, list-vgpu-types shows each profile's class and flavor, and
says why none is shown where Nova would ignore them. Which class each
type gets on which release, and what is refused, is test_plan.py's."""
import json

from simulation import scenario, sections

READY_A40 = 'Unit is ready: 2 NVIDIA GPUs (A40); 64 SR-IOV VFs; '


def step_named(output, name, nth=0):
    return [step for step in output['steps'] if step['step'] == name][nth]


# ------------------------------------------------------ A40s, caracal

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


# -------------------------------------- L40S, vendor-specific VFIO, epoxy

def test_vfio_vfs_go_to_nova_under_the_profiles_class():
    output = scenario('resource-class/l40s-epoxy.yaml')
    reboot = step_named(output, 'reboot')
    assert reboot['status'] == {
        'workload': 'active',
        'message': 'Unit is ready: 1 NVIDIA GPU (device 10de:26b9); 8 SR-IOV '
                   'VFs; typed VFs live-migratable; nvidia-1148: 8 vGPUs on '
                   '1 GPU; nvidia-1148 as CUSTOM_VGPU_L40S_2Q'}
    listed = output['actions'][0]['results']['output'].splitlines()
    assert listed[1].split(', ')[-4:] == [
        'profile=L40S-2Q', 'resource_class=CUSTOM_VGPU_L40S_2Q',
        'flavor=pci_passthrough:alias=CUSTOM_VGPU_L40S_2Q:1',
        'two per guest: pci_passthrough:alias=CUSTOM_VGPU_L40S_2Q:2']


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
