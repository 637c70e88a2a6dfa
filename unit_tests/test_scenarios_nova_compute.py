"""nova-compute's own operations never stop or restart the vGPU Manager.

charm-nova-compute pauses, resumes, restarts after an OpenStack upgrade,
and checks every service a subordinate lists in `services`, read with
charmhelpers' get_subordinate_services. Here the relation data this
charm leaves at each step of scenarios/nova-compute/operations-under-
guests.yaml goes through charmhelpers' real function, and what each
nova-compute operation does with its answer is read from the record of
charm-nova-compute at its pinned commit (unit_tests/data/
charm_nova_compute_operations.json, made by `python -m
sim.principal.record`; the nova-compute-charm tox env checks the record,
and runs the same steps, against a copy of charm-nova-compute itself).
"""
import json
import os
from typing import Dict, Set

import pytest
import yaml

from charmhelpers.contrib.openstack import utils as os_utils
from charmhelpers.core import hookenv
from simulation import REPO, SCENARIOS

from sim.principal import hook_tools, steps

SCENARIO = 'nova-compute/operations-under-guests.yaml'
RECORD = os.path.join(REPO, 'unit_tests', 'data',
                      'charm_nova_compute_operations.json')
# What the package declares, and an earlier revision of this charm listed.
VGPU_SERVICES = ['nvidia-vgpu-mgr', 'nvidia-vgpud']
EARLIER_REVISION = {'services': json.dumps(VGPU_SERVICES)}
# nova-compute's operations that stop, start or restart services.
OPERATIONS = ('pause', 'resume', 'openstack-upgrade', 'pre-series-upgrade',
              'post-series-upgrade')


def nova_compute_record() -> dict:
    with open(RECORD) as stream:
        return json.load(stream)


@pytest.fixture(scope='module')
def published():
    """This unit's nova-vgpu data after each step, from a run that starts
    with what an earlier revision of the charm left there."""
    return steps.published_at_each_step(
        REPO, os.path.join(SCENARIOS, SCENARIO), EARLIER_REVISION)


@pytest.fixture
def nova_compute_unit(tmp_path, monkeypatch):
    """Read relation data as the nova-compute unit does: charmhelpers'
    hook tools answered from a world file, its metadata's container-scoped
    relations."""
    metadata = {'name': 'nova-compute', 'provides': {
        name: {'interface': name, 'scope': 'container'}
        for name in nova_compute_record()['container_scoped_relations']}}
    (tmp_path / 'metadata.yaml').write_text(yaml.safe_dump(metadata))
    world = str(tmp_path / 'world.json')
    bin_dir = hook_tools.install(str(tmp_path), world)
    monkeypatch.setenv('PATH', bin_dir + os.pathsep + os.environ['PATH'])
    monkeypatch.setenv('CHARM_DIR', str(tmp_path))
    monkeypatch.setenv('JUJU_UNIT_NAME', 'nova-compute/0')

    def subordinate_services(data: Dict[str, str]) -> Set[str]:
        with open(world, 'w') as stream:
            json.dump({'relations': {'nova-vgpu': {'nova-vgpu:9': {
                'nova-compute-nvidia-vgpu/0': data}}}}, stream)
        hookenv.cache.clear()
        return os_utils.get_subordinate_services()
    return subordinate_services


def services_changed(operation: str, subordinate: Set[str]) -> Set[str]:
    """What nova-compute's operation stops, starts or restarts."""
    facts = nova_compute_record()['operations'][operation]
    changed = set(facts['principal_services_changed'])
    if facts['changes_subordinate_services']:
        changed |= subordinate
    return changed


def test_the_record_says_every_operation_acts_on_subordinate_services():
    operations = nova_compute_record()['operations']
    assert all(operations[name]['changes_subordinate_services']
               for name in OPERATIONS)
    assert operations['status']['checks_subordinate_services']
    assert 'nova-vgpu' in nova_compute_record()['container_scoped_relations']


def test_an_earlier_revision_left_the_vgpu_manager_to_nova_compute(
        nova_compute_unit):
    """What this change repairs (and proof the check below can fail)."""
    listed = nova_compute_unit(EARLIER_REVISION)
    for operation in OPERATIONS:
        assert set(VGPU_SERVICES) <= services_changed(operation, listed)


@pytest.mark.parametrize('operation', OPERATIONS)
def test_no_nova_compute_operation_touches_the_vgpu_manager_at_any_step(
        published, nova_compute_unit, operation):
    for index, data in enumerate(published):
        listed = nova_compute_unit(data)
        assert listed == set(), (index, data)
        assert not set(VGPU_SERVICES) & services_changed(operation, listed)


def test_the_first_hook_clears_what_an_earlier_revision_listed(published):
    assert [json.loads(data['services']) for data in published] == \
        [[]] * len(published)


def test_guests_keep_their_vgpus_and_nothing_restarts():
    from simulation import scenario
    output = scenario(SCENARIO)
    assert output['host']['guest_disruptions'] == []
    for step in output['steps']:
        assert not [argv for argv in step['commands']
                    if argv[0] in ('systemctl', 'service') and
                    set(argv) & set(VGPU_SERVICES) and
                    'is-active' not in argv], step['step']
    assert output['status']['message'].startswith('Unit is ready')


def test_a_held_prepare_can_resume_nova_compute_for_the_move():
    """What the held status advises, as charm-nova-compute does it: after
    its own pre-series-upgrade, its resume action starts nova-compute
    again (Nova can move guests) though the action reports a failure,
    and its pause action stops it again without one."""
    operations = nova_compute_record()['operations']
    resumed = operations['resume-while-prepared']
    assert 'nova-compute' in resumed['principal_services_changed']
    assert resumed['fails_with'].startswith(
        "Couldn't resume: Services should be paused but these services "
        "running: nova-compute")
    paused = operations['pause-while-prepared']
    assert 'nova-compute' in paused['principal_services_changed']
    assert paused['fails_with'] is None
    # The prepare spares libvirtd: virsh can shut a guest down meanwhile.
    assert 'libvirtd' not in operations['pre-series-upgrade'][
        'principal_services_changed']
