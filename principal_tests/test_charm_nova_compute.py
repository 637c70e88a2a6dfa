"""charm-nova-compute's own pause, resume, openstack-upgrade, series
upgrade and status, from a copy of its repository, on the relation data
this charm leaves at every step of scenarios/nova-compute/
operations-under-guests.yaml: none stops, restarts or checks the vGPU
Manager. And the record CI reads is what the copy does."""
import json
import os
import subprocess

import pytest

from conftest import RECORD, REPO, pinned_commit
from sim.principal import nova_compute, record, steps

SCENARIO = os.path.join(REPO, 'scenarios', 'nova-compute',
                        'operations-under-guests.yaml')
VGPU_SERVICES = {'nvidia-vgpu-mgr', 'nvidia-vgpud'}
EARLIER_REVISION = {'services': json.dumps(sorted(VGPU_SERVICES))}


@pytest.fixture(scope='module')
def distinct_published():
    """Each distinct value this unit's data takes over the steps."""
    seen = []
    for data in steps.published_at_each_step(REPO, SCENARIO,
                                             EARLIER_REVISION):
        if data not in seen:
            seen.append(data)
    return seen


def test_the_copy_is_the_pinned_commit(copy):
    if not os.path.isdir(os.path.join(copy, '.git')):
        pytest.skip('{} is no git checkout: its commit is unknown'.format(
            copy))
    head = subprocess.run(['git', '-C', copy, 'rev-parse', 'HEAD'],
                          capture_output=True, text=True).stdout.strip()
    assert head == pinned_commit(), (
        'the record is of {}; re-record with python -m sim.principal.record '
        '--repo {}'.format(pinned_commit(), copy))


def test_the_record_is_what_the_copy_does(copy):
    with open(RECORD) as stream:
        recorded = json.load(stream)
    assert record.record(copy, recorded['commit']) == recorded


def test_an_earlier_revision_had_the_vgpu_manager_paused(copy):
    result = record.run(copy, 'pause', EARLIER_REVISION)
    assert VGPU_SERVICES <= set(result['changed'])


@pytest.mark.parametrize('operation', sorted(nova_compute.OPERATIONS))
def test_no_operation_touches_the_vgpu_manager(copy, distinct_published,
                                               operation):
    for data in distinct_published:
        result = record.run(copy, operation, data)
        assert not VGPU_SERVICES & set(result['services']), data
        assert not VGPU_SERVICES & set(result['changed'])
        assert not VGPU_SERVICES & set(result['checked'])
