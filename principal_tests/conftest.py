"""The nova-compute-charm tier: charm-nova-compute's own code, from a
copy of its repository that $CHARM_NOVA_COMPUTE names (not on PyPI, and
nothing of it is kept in this repository)."""
import json
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [REPO, os.path.join(REPO, 'unit_tests')]
RECORD = os.path.join(REPO, 'unit_tests', 'data',
                      'charm_nova_compute_operations.json')


def pinned_commit() -> str:
    with open(RECORD) as stream:
        return json.load(stream)['commit']


def pytest_configure(config):
    path = os.environ.get('CHARM_NOVA_COMPUTE', '')
    if not os.path.isfile(os.path.join(path, 'hooks',
                                       'nova_compute_utils.py')):
        raise pytest.UsageError(
            'CHARM_NOVA_COMPUTE={!r} is no copy of charm-nova-compute. This '
            'tier runs its code and cannot run without it: git clone '
            'https://opendev.org/openstack/charm-nova-compute; git -C '
            'charm-nova-compute checkout {}; CHARM_NOVA_COMPUTE=$PWD/'
            'charm-nova-compute tox -e nova-compute-charm. (CI checks the '
            'same with charmhelpers and the record instead: '
            'unit_tests/test_scenarios_nova_compute.py.)'.format(
                path, pinned_commit()))


@pytest.fixture(scope='session')
def copy():
    return os.environ['CHARM_NOVA_COMPUTE']
