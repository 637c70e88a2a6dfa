"""Record, as data, what charm-nova-compute does with a subordinate's
`services`: for each operation, whether it changes (stops, starts,
restarts, disables) or checks them, and which of its own services it
changes. CI cannot fetch charm-nova-compute; it reads this record.

    python -m sim.principal.record --repo PATH [--commit SHA]

runs each operation of a copy of its repository (nova_compute) with a
probe subordinate service and writes unit_tests/data/
charm_nova_compute_operations.json. The nova-compute-charm tox env runs
the same from $CHARM_NOVA_COMPUTE and compares it with the record.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional

import yaml

from sim.principal import nova_compute

RECORD = os.path.join(nova_compute.hook_tools.REPO, 'unit_tests', 'data',
                      'charm_nova_compute_operations.json')
SOURCE = 'https://opendev.org/openstack/charm-nova-compute'
PROBE = 'probe-subordinate-service'
# The principal's relations its status and resume require, with one
# remote unit each, as in any deployed cloud.
REQUIRED = {'amqp': 'rabbitmq-server/0', 'image-service': 'glance/0',
            'cloud-compute': 'nova-cloud-controller/0'}


def world(subordinate_data: Dict[str, str]) -> Dict[str, Any]:
    """A nova-compute unit related to what it needs and to this charm's
    unit, which has set subordinate_data."""
    relations: Dict[str, Any] = {
        name: {'{}:{}'.format(name, index): {unit: {}}}
        for index, (name, unit) in enumerate(sorted(REQUIRED.items()), 1)}
    relations['nova-vgpu'] = {'nova-vgpu:9': {
        'nova-compute-nvidia-vgpu/0': dict(subordinate_data)}}
    return {'config': {}, 'relations': relations}


def run(repo: str, operation: str, subordinate_data: Dict[str, str],
        python: str = sys.executable) -> Dict[str, Any]:
    """One operation of the copy, in its own process and world."""
    with tempfile.TemporaryDirectory(prefix='nova-compute-') as work:
        world_path = os.path.join(work, 'world.json')
        with open(world_path, 'w') as stream:
            json.dump(world(subordinate_data), stream)
        done = subprocess.run(
            [python, '-m', 'sim.principal.nova_compute', '--repo', repo,
             '--world', world_path, operation],
            cwd=nova_compute.hook_tools.REPO, capture_output=True,
            text=True, timeout=300,
            env=dict(os.environ, PYTHONPATH=nova_compute.hook_tools.REPO))
    if done.returncode:
        raise RuntimeError('{} failed: {}'.format(operation,
                                                  done.stderr[-2000:]))
    return json.loads(done.stdout.strip().splitlines()[-1])


def container_scoped(repo: str) -> List[str]:
    """The principal's relations a subordinate's services come from."""
    with open(os.path.join(repo, 'metadata.yaml')) as stream:
        metadata = yaml.safe_load(stream)
    return sorted(name for kind in ('provides', 'requires', 'peers')
                  for name, spec in (metadata.get(kind) or {}).items()
                  if spec.get('scope') == 'container')


def commit_of(repo: str, given: Optional[str]) -> str:
    """The copy's commit: as given, or git's answer."""
    if given:
        return given
    return subprocess.run(['git', '-C', repo, 'rev-parse', 'HEAD'],
                          capture_output=True, text=True,
                          check=True).stdout.strip()


def _sorted_names(message: Optional[str]) -> Optional[str]:
    """charmhelpers lists services in a set's order: sorted here, so that
    the record is the same at every run."""
    if not message or ': ' not in message:
        return message
    head, _, names = message.rpartition(': ')
    return '{}: {}'.format(head, ', '.join(sorted(names.split(', '))))


def record(repo: str, commit: str) -> Dict[str, Any]:
    """What each operation of the copy does with a subordinate's
    services."""
    probe = {'services': json.dumps([PROBE])}
    operations = {}
    for operation in sorted(nova_compute.OPERATIONS):
        result = run(repo, operation, probe)
        operations[operation] = {
            'changes_subordinate_services': PROBE in result['changed'],
            'checks_subordinate_services': PROBE in result['checked'],
            'lists_subordinate_services': PROBE in result['services'],
            'principal_services_changed': sorted(
                set(result['changed']) - {PROBE}),
            # what the action reports where it fails (None: it succeeds)
            'fails_with': _sorted_names(result.get('error')),
        }
    return {'source': SOURCE, 'commit': commit,
            'container_scoped_relations': container_scoped(repo),
            'operations': operations}


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--repo', required=True)
    parser.add_argument('--commit')
    parser.add_argument('--out', default=RECORD)
    args = parser.parse_args(argv)
    data = record(args.repo, commit_of(args.repo, args.commit))
    with open(args.out, 'w') as stream:
        json.dump(data, stream, indent=1, sort_keys=True)
        stream.write('\n')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
