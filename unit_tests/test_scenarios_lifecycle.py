"""Operator actions and the unit's status over its life
(scenarios/lifecycle/*.yaml)."""
import json

from simulation import changing, scenario

READY = 'Unit is ready: 2 NVIDIA GPUs (Tesla V100 PCIe 16GB)'
PAUSED = "Paused. Use 'resume' action to resume normal service."
SERVICES = ('nvidia-vgpu-mgr', 'nvidia-vgpud')


def steps_named(output, name):
    return [step for step in output['steps'] if step['step'] == name]


def action(output, index):
    return output['actions'][index]


def test_list_vgpu_types_gives_a_table_and_json():
    output = scenario('lifecycle/guests-using-vgpus.yaml')
    listed = action(output, 0)
    assert listed['failed'] is None
    *lines, migration = listed['results']['output'].splitlines()
    # Yoga on jammy's own kernel: below Nova's minimums (item 6).
    assert migration.startswith('Live migration: not ready (nova 25.2.1 < '
                                '29.0.0, libvirt not found')
    # The default vgpu-resource-class: every type in VGPU. Yoga gives a
    # guest one vGPU: no "two per guest".
    assert lines == [
        'nvidia-105, 0000:84:00.0, GRID V100-1Q, framebuffer=1024M, '
        'max_instance=16, num_heads=4, max_resolution=5120x2880, '
        'available=16, profile=V100-1Q, resource_class=VGPU, '
        'flavor=resources:VGPU=1',
        'nvidia-108, 0000:84:00.0, GRID V100-8Q, framebuffer=8192M, '
        'max_instance=2, num_heads=4, max_resolution=7680x4320, '
        'available=0, profile=V100-8Q, resource_class=VGPU, '
        'flavor=resources:VGPU=1',
        'nvidia-105, 0000:85:00.0, GRID V100-1Q, framebuffer=1024M, '
        'max_instance=16, num_heads=4, max_resolution=5120x2880, '
        'available=16, profile=V100-1Q, resource_class=VGPU, '
        'flavor=resources:VGPU=1',
        'nvidia-108, 0000:85:00.0, GRID V100-8Q, framebuffer=8192M, '
        'max_instance=2, num_heads=4, max_resolution=7680x4320, '
        'available=0, profile=V100-8Q, resource_class=VGPU, '
        'flavor=resources:VGPU=1']
    types = json.loads(listed['results']['types'])
    assert [(t['type'], t['address'], t['available_instances'])
            for t in types] == [
        ('nvidia-105', '0000:84:00.0', 16), ('nvidia-108', '0000:84:00.0', 0),
        ('nvidia-105', '0000:85:00.0', 16), ('nvidia-108', '0000:85:00.0', 0)]
    assert [(t['profile'], t['resource_class'], t['flavor_property'])
            for t in types[:2]] == [
        ('V100-1Q', 'VGPU', 'resources:VGPU=1'),
        ('V100-8Q', 'VGPU', 'resources:VGPU=1')]


def test_list_vgpu_types_for_one_gpu_and_for_a_wrong_address():
    output = scenario('lifecycle/guests-using-vgpus.yaml')
    one, wrong = action(output, 1), action(output, 2)
    assert {line.split(', ')[1]
            for line in one['results']['output'].splitlines()[:-1]} == {
        '0000:85:00.0'}
    assert wrong['failed'] == ('No NVIDIA GPU at 0000:99:00.0 on this host '
                               '(GPUs: 0000:84:00.0, 0000:85:00.0)')


def test_list_vgpu_types_reads_sysfs_without_running_anything():
    output = scenario('lifecycle/guests-using-vgpus.yaml')
    for step in steps_named(output, 'action list-vgpu-types'):
        # Not even charmhelpers.fetch's apt-config: the action reads the
        # host without the reactive framework or charms.openstack.
        assert [argv[0] for argv in step['commands']] == ['lspci']


def test_pause_is_refused_while_guests_use_vgpus():
    output = scenario('lifecycle/guests-using-vgpus.yaml')
    refused = action(output, 3)
    assert refused['params'] == {'force': False}
    assert refused['failed'] == (
        'Refusing to pause: 2 vGPUs on 0000:84:00.0 in use by 2 running '
        'guests (instance-0000002a, instance-0000002b); stopping the vGPU '
        'Manager would break them. Stop, migrate, resize, shelve-offload or '
        'delete those guests first, or run pause with force=true')
    step = steps_named(output, 'action pause')[0]
    assert changing(step['commands']) == []
    assert step['status'] == {'workload': 'active', 'message': READY}


def test_forced_pause_stops_and_masks_the_vgpu_manager():
    output = scenario('lifecycle/guests-using-vgpus.yaml')
    assert action(output, 4)['failed'] is None
    step = steps_named(output, 'action pause')[1]
    assert changing(step['commands']) == [
        ['systemctl', verb, service] for service in SERVICES
        for verb in ('stop', 'disable', 'mask')]
    assert step['status'] == {'workload': 'maintenance', 'message': PAUSED}
    assert steps_named(output, 'update-status')[1]['status'][
        'message'] == PAUSED


def test_resume_starts_it_again_and_returns_to_ready():
    output = scenario('lifecycle/guests-using-vgpus.yaml')
    assert action(output, 5)['failed'] is None
    step = steps_named(output, 'action resume')[0]
    assert changing(step['commands']) == [
        ['systemctl', verb, service] for service in SERVICES
        for verb in ('unmask', 'enable', 'start')]
    assert step['status'] == {'workload': 'active', 'message': READY}


def test_update_status_and_a_plain_upgrade_do_nothing_needless():
    output = scenario('lifecycle/guests-using-vgpus.yaml')
    # apt-config: charmhelpers.fetch's import, in every hook. No package
    # tool of the charm's own: nova's version (the release) is only asked
    # of dpkg again once dpkg's database has changed.
    common = [['apt-config', 'dump']]
    checks = [['systemctl', 'is-active', service] for service in SERVICES]
    # One lspci (the GPUs, for the status and the vGPU inventory kept for
    # the next boot), then the service checks; paused or not.
    for step in steps_named(output, 'update-status')[:3]:
        assert step['commands'] == common + [['lspci', '-Dmmnn']] + checks
        assert step['relation_sets'] == 0
    # The charm's own code; a built charm's layer:basic also reinstalls
    # its packages and venv on upgrade-charm (sim/README.md).
    upgrade = steps_named(output, 'upgrade-charm')[0]
    assert upgrade['relation_sets'] == 0
    assert changing(upgrade['commands']) == []
    assert upgrade['status'] == {'workload': 'active', 'message': READY}


def test_a_stopped_vgpu_manager_blocks():
    output = scenario('lifecycle/guests-using-vgpus.yaml')
    assert output['steps'][-1]['status'] == {
        'workload': 'blocked',
        'message': 'Services not running that should be: nvidia-vgpu-mgr'}


def test_without_gpu_every_action_succeeds_and_changes_nothing():
    output = scenario('lifecycle/no-gpu-actions.yaml')
    assert [(a['name'], a['failed']) for a in output['actions']] == [
        ('list-vgpu-types', None), ('pause', None), ('resume', None),
        ('restart-services', None)]
    assert output['actions'][0]['results'] == {
        'output': 'No NVIDIA GPU on this host.', 'types': '[]'}
    assert changing(output['commands']) == []


def test_a_missing_relation_waits_naming_the_command():
    output = scenario('lifecycle/no-gpu-actions.yaml')
    assert output['status'] == {
        'workload': 'waiting',
        'message': 'Waiting for the nova-vgpu relation: juju integrate '
                   'nova-compute-nvidia-vgpu:nova-vgpu nova-compute:nova-vgpu'}


def test_restart_services_is_refused_like_pause_while_guests_use_vgpus():
    output = scenario('lifecycle/restart-services.yaml')
    refused, forced = output['actions']
    assert refused['params'] == {'force': False}
    assert refused['failed'] == (
        'Refusing to restart-services: 2 vGPUs on 0000:84:00.0 in use by 2 '
        'running guests (instance-0000002a, instance-0000002b); stopping the '
        'vGPU Manager would break them. Stop, migrate, resize, '
        'shelve-offload or delete those guests first, or run '
        'restart-services with force=true')
    first, second = steps_named(output, 'action restart-services')
    assert changing(first['commands']) == []
    assert forced['failed'] is None
    assert changing(second['commands']) == [
        ['systemctl', verb, service] for verb in ('stop', 'start')
        for service in SERVICES]
    # Only the forced restart broke the guests' vGPUs (step 6).
    assert [(d['step'], d['guest']) for d in
            output['host']['guest_disruptions']] == [
        (6, 'instance-0000002a'), (6, 'instance-0000002b')]
    assert output['status'] == {'workload': 'active', 'message':
                                'Unit is ready: 1 NVIDIA GPU (Tesla V100 '
                                'PCIe 16GB)'}


def test_restart_services_without_guests_needs_no_force():
    output = scenario('lifecycle/restart-services-idle.yaml')
    assert [(a['params'], a['failed']) for a in output['actions']] == [
        ({'force': False}, None)]
    step = steps_named(output, 'action restart-services')[0]
    assert changing(step['commands']) == [
        ['systemctl', verb, service] for verb in ('stop', 'start')
        for service in SERVICES]
