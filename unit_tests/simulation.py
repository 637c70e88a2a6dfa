"""Running the hook simulator from tests, as an operator would run it."""
import functools
import json
import os
import subprocess
import sys
from typing import Optional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIOS = os.path.join(REPO, 'scenarios')
# Commands that change a host.
HOST_CHANGING = {'apt-get', 'dpkg', 'systemctl', 'service',
                 'update-initramfs', 'modprobe', 'rmmod', 'mdevctl'}
# Commands that read only.
READ_ONLY = {'apt-config', 'dpkg-query', 'dpkg-deb', 'lspci', 'lsmod'}


def simulate_text(path: str) -> str:
    """The simulator's stdout for a scenario file; it must exit 0."""
    done = subprocess.run([sys.executable, '-m', 'sim', path], cwd=REPO,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@functools.lru_cache(maxsize=None)
def scenario_text(name: str) -> str:
    """Output of a shipped scenario (scenarios/<name>), run once."""
    return simulate_text(os.path.join(SCENARIOS, name))


def scenario(name: str) -> dict:
    return json.loads(scenario_text(name))


def shipped(name: str) -> str:
    """The text of a shipped scenario (scenarios/<name>), for a test to
    cut or change before it runs it."""
    with open(os.path.join(SCENARIOS, name)) as stream:
        return stream.read()


def until(text: str, last_step: str) -> str:
    """The scenario with its steps cut after the first step written
    exactly as last_step (e.g. 'start')."""
    head, steps = text.split('steps:\n')
    kept = steps[:steps.index('  - ' + last_step + '\n')]
    return '{}steps:\n{}  - {}\n'.format(head, kept, last_step)


def sections(output_or_data: dict) -> Optional[dict]:
    """The nova.conf sections a unit published over nova-vgpu, read as
    nova-compute reads them: from a simulator output (its one relation)
    or from a relation's data; None where nothing was published."""
    relations = output_or_data.get('relations')
    data = next(iter(relations.values())) if relations else output_or_data
    blob = data.get('subordinate_configuration')
    if blob is None:
        return None
    return json.loads(blob)['nova']['/etc/nova/nova.conf']['sections']


def run_yaml(tmp_path, text: str) -> dict:
    """Run a scenario written inline by a test."""
    path = tmp_path / 'scenario.yaml'
    path.write_text(text)
    return json.loads(simulate_text(str(path)))


SYSTEMCTL_QUERIES = {'is-active', 'is-enabled', 'is-failed', 'status',
                     'show'}


def changing(commands) -> list:
    """The host-changing commands among these argv lists."""
    return [argv for argv in commands if argv[0] in HOST_CHANGING and
            not (argv[0] == 'systemctl' and
                 SYSTEMCTL_QUERIES & set(argv[1:]))]


def step(output: dict, index: int) -> dict:
    return output['steps'][index]
