"""vgpu-device-mappings end to end (scenarios/nova-config/*.yaml): what
nova-compute receives, what it keeps when the operator errs, and when it
is set. What each value gives on each host and release, and each
refusal, is test_plan.py's."""
import json

from simulation import scenario, sections

RID = 'nova-vgpu:1'
READY = 'Unit is ready: 2 NVIDIA GPUs (Tesla V100 PCIe 16GB)'


def published_after_each_step(output):
    """Relation data is only in the final output; replay it per step by
    checking which steps set anything."""
    return [s['relation_sets'] for s in output['steps']]


def test_valid_mapping_reaches_nova_in_xena_form():
    output = scenario('nova-config/valid-then-invalid-then-fixed.yaml')
    first = output['steps'][6]
    assert first['step'] == 'update-status'
    assert first['status'] == {'workload': 'active', 'message': READY}
    assert sections(output) == {
        'devices': [['enabled_mdev_types', 'nvidia-108']],
        'mdev_nvidia-108': [['device_addresses',
                             '0000:84:00.0,0000:85:00.0']]}


def test_fixing_the_value_clears_the_block_and_publishes_once():
    output = scenario('nova-config/valid-then-invalid-then-fixed.yaml')
    fixed, rerun = output['steps'][10:12]
    assert fixed['status'] == {'workload': 'active', 'message': READY}
    assert fixed['relation_sets'] == 1
    assert rerun['relation_sets'] == 0


def test_reruns_with_nothing_changed_set_nothing():
    output = scenario('nova-config/valid-then-invalid-then-fixed.yaml')
    sets = published_after_each_step(output)
    names = [s['step'] for s in output['steps']]
    # Only the first publication, the joined hook (layer:openstack's
    # package map) and the fix set anything.
    assert [name for name, count in zip(names, sets) if count] == [
        'install', 'nova-vgpu-relation-joined', 'config']


def test_restart_trigger_from_nova_compute_disrupts_nothing():
    output = scenario('nova-config/valid-then-invalid-then-fixed.yaml')
    remote = output['steps'][-1]
    assert remote['step'] == 'remote'
    assert remote['relation_sets'] == 0
    assert not [argv for argv in remote['commands']
                if argv[0] == 'systemctl' and argv[1] != 'is-active']
    assert remote['status']['workload'] == 'active'


def test_no_service_of_ours_is_left_to_nova_compute_but_the_package_map_is():
    """nova-compute pauses, resumes and restarts whatever a subordinate
    lists in `services` (test_nova_compute_operations): the vGPU Manager
    the package declares is not listed."""
    output = scenario('nova-config/valid-then-invalid-then-fixed.yaml')
    data = output['relations'][RID]
    assert output['host']['services']['nvidia-vgpu-mgr']['active']
    assert json.loads(data['services']) == []
    assert sorted(json.loads(data['releases-packages-map'])) == [
        'caracal', 'dalmatian', 'epoxy', 'queens', 'ussuri', 'victoria',
        'xena']
    for value in data.values():
        assert value == json.dumps(json.loads(value), sort_keys=True,
                                   separators=(',', ':'))


def test_nothing_is_published_until_nova_is_installed():
    output = scenario('nova-config/waiting-for-nova.yaml')
    for step in output['steps'][:6]:
        assert step['status'] == {
            'workload': 'waiting',
            'message': 'Waiting for nova-compute to install nova-common'}
    # nova appears (another charm's hook): the next update-status hands
    # nova-compute the settings and only then says ready; the principal's
    # relation-changed after that sets nothing.
    assert [s['relation_sets'] for s in output['steps']] == [
        1, 1, 0, 0, 0, 0, 1, 0]
    assert output['steps'][6]['step'] == 'update-status'
    assert output['steps'][6]['status'] == {'workload': 'active',
                                            'message': READY}
    assert output['status'] == {'workload': 'active', 'message': READY}
    assert sections(output) == {
        'devices': [['enabled_mdev_types', 'nvidia-108']],
        'mdev_nvidia-108': [['device_addresses', '0000:84:00.0']]}


def test_before_caracal_one_type_reaching_another_gpu_is_named():
    output = scenario('nova-config/yoga-one-type-every-gpu.yaml')
    steps = {step['step']: step for step in output['steps']}
    first_ready = output['steps'][4]
    assert first_ready['step'] == 'update-status'
    # Published as asked: Nova's behaviour is told, not worked around.
    assert first_ready['status'] == {'workload': 'active', 'message': (
        READY + '; Nova also gives nvidia-108 to 0000:84:00.0 (before '
        'Caracal, Nova gives a host\'s only vGPU type to every device '
        'offering it: give another GPU here a second type, or upgrade)')}
    noted, cleared = output['actions']
    assert noted['failed'] is None
    assert [(finding['code'], finding['broken']) for finding in json.loads(
        noted['results']['health'])['findings']] == [
        ('nova-takes-more', False)]
    assert 'note: Nova also gives nvidia-108 to 0000:84:00.0' in \
        noted['results']['output']
    # A second type on the first GPU: Nova keeps each to its addresses.
    assert steps['config']['status'] == {'workload': 'active',
                                         'message': READY}
    assert sections(output) == {
        'devices': [['enabled_mdev_types', 'nvidia-105, nvidia-108']],
        'mdev_nvidia-105': [['device_addresses', '0000:84:00.0']],
        'mdev_nvidia-108': [['device_addresses', '0000:85:00.0']]}
    assert json.loads(cleared['results']['health'])['findings'] == []


def test_the_hooks_after_a_deeply_nested_value_all_run():
    output = scenario('nova-config/deeply-nested-values-refused.yaml')
    assert all(step['exit_code'] == 0 for step in output['steps'])
    refused = [step['status'] for step in output['steps'][5:11]]
    assert all(status['workload'] == 'blocked' and
               'nested deeper than its form' in status['message']
               for status in refused)
    # Nova kept what it had all along: nothing was set while refused.
    assert all(step['relation_sets'] == 0 for step in output['steps'][5:])
    assert output['status']['workload'] == 'active'
