"""The recorded output of every shipped scenario, byte for byte.

A redesign that must not change behaviour proves it here: record the JSON
each scenario under scenarios/ prints, change the code, and the test
(unit_tests/test_scenario_outputs.py) compares every scenario's output
with its record. A deliberate change of behaviour is recorded again, and
the diff of the records shows exactly what an operator would see change.

    python -m sim.outputs              # record every scenario
    python -m sim.outputs NAME...      # record these (scenarios/NAME)
    python -m sim.outputs --check      # compare, print what differs
"""
import argparse
import concurrent.futures
import difflib
import glob
import os
import subprocess
import sys
from typing import List, Optional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIOS = os.path.join(REPO, 'scenarios')
RECORDS = os.path.join(REPO, 'unit_tests', 'data', 'scenario_outputs')


def shipped() -> List[str]:
    """Every scenario under scenarios/, as a path relative to it."""
    return sorted(os.path.relpath(path, SCENARIOS) for path in glob.glob(
        os.path.join(SCENARIOS, '**', '*.yaml'), recursive=True))


def record_path(name: str) -> str:
    return os.path.join(RECORDS, name[:-len('.yaml')] + '.json')


def recorded(name: str) -> Optional[str]:
    try:
        with open(record_path(name)) as stream:
            return stream.read()
    except FileNotFoundError:
        return None


def orphaned_records() -> List[str]:
    """Records whose scenario no longer exists."""
    names = set(shipped())
    return sorted(
        os.path.relpath(path, RECORDS) for path in glob.glob(
            os.path.join(RECORDS, '**', '*.json'), recursive=True)
        if os.path.relpath(path, RECORDS)[:-len('.json')] + '.yaml'
        not in names)


def simulate(name: str) -> str:
    """What the simulator prints for scenarios/NAME; it must exit 0."""
    done = subprocess.run(
        [sys.executable, '-m', 'sim', os.path.join(SCENARIOS, name)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        universal_newlines=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError('{}: exit {}: {}'.format(
            name, done.returncode, done.stderr[-2000:]))
    return done.stdout


def difference(name: str, expected: Optional[str], actual: str) -> str:
    """A unified diff of a scenario's record and its output now."""
    if expected is None:
        return '{}: no record (python -m sim.outputs {})'.format(name, name)
    return ''.join(difflib.unified_diff(
        expected.splitlines(True), actual.splitlines(True),
        'recorded/' + name, 'now/' + name, n=2))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog='sim.outputs')
    parser.add_argument('names', nargs='*', help='scenarios/NAME (default: '
                        'every scenario)')
    parser.add_argument('--check', action='store_true',
                        help='compare with the records; write nothing')
    parser.add_argument('--jobs', type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    names = args.names or shipped()
    differing = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, output in zip(names, pool.map(simulate, names)):
            if args.check:
                diff = difference(name, recorded(name), output) \
                    if output != recorded(name) else ''
                differing += bool(diff)
                sys.stdout.write(diff or '{}: same\n'.format(name))
                continue
            os.makedirs(os.path.dirname(record_path(name)), exist_ok=True)
            with open(record_path(name), 'w') as stream:
                stream.write(output)
            sys.stdout.write('{}: recorded\n'.format(name))
    return 1 if differing else 0


if __name__ == '__main__':
    sys.exit(main())
