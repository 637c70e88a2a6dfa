"""Running the hook simulator from tests, as an operator would run it."""
import contextlib
import fcntl
import functools
import hashlib
import io
import json
import os
import subprocess
import sys
from typing import Any, Callable, Dict, Iterator, Optional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIOS = os.path.join(REPO, 'scenarios')
# What a shipped scenario's output depends on: it is simulated once per
# test run, whichever worker and test file asks first.
# (sim/ holds the charms.openstack stand-in too.)
SIMULATED_TREES = ('src', 'sim', 'interfaces', 'scenarios')
OUTPUT_CACHE = os.path.join(REPO, '.tox', 'scenario-outputs')
# Commands that change a host.
HOST_CHANGING = {'apt-get', 'dpkg', 'systemctl', 'service',
                 'update-initramfs', 'modprobe', 'rmmod', 'mdevctl', 'dkms'}
# Commands that read only.
READ_ONLY = {'apt-config', 'dpkg-query', 'dpkg-deb', 'lspci', 'lsmod'}


def simulate_text(path: str) -> str:
    """The simulator's stdout for a scenario file; it must exit 0."""
    done = subprocess.run([sys.executable, '-m', 'sim', path], cwd=REPO,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@functools.lru_cache(maxsize=1)
def _inputs_digest() -> str:
    """A digest of every file a simulation reads from this tree, and of
    the Python running it."""
    digest = hashlib.sha256(sys.version.encode())
    for tree in SIMULATED_TREES:
        for folder, folders, files in os.walk(os.path.join(REPO, tree)):
            folders[:] = sorted(d for d in folders if d != '__pycache__')
            for name in sorted(files):
                path = os.path.join(folder, name)
                digest.update(os.path.relpath(path, REPO).encode() + b'\0')
                with open(path, 'rb') as stream:
                    digest.update(stream.read() + b'\0')
    return digest.hexdigest()[:20]


@functools.lru_cache(maxsize=None)
def scenario_text(name: str) -> str:
    """Output of a shipped scenario (scenarios/<name>), simulated once per
    state of the tree: test workers share it through a file, and wait
    for the one that runs it."""
    cached = os.path.join(OUTPUT_CACHE, _inputs_digest(),
                          name.replace(os.sep, '__') + '.json')
    os.makedirs(os.path.dirname(cached), exist_ok=True)
    with open(cached + '.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(cached):
            with open(cached) as stream:
                return stream.read()
        text = simulate_text(os.path.join(SCENARIOS, name))
        with open(cached + '.tmp', 'w') as stream:
            stream.write(text)
        os.replace(cached + '.tmp', cached)
        return text


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


@contextlib.contextmanager
def simulations(tmp_path) -> Iterator[Callable[[Dict[str, Any]], Any]]:
    """make(scenario data): a set-up simulation of its host (no hook run
    yet), in its own sandbox under tmp_path; all cleaned up after."""
    from sim import runner, scenario
    made = []

    def make(data: Dict[str, Any]) -> Any:
        simulation = runner.Simulation(
            scenario.validate(data), REPO,
            work_dir=str(tmp_path / 'sandbox{}'.format(len(made))))
        with contextlib.redirect_stderr(io.StringIO()):
            simulation.setup()
        made.append(simulation)
        return simulation
    try:
        yield make
    finally:
        for simulation in made:
            simulation.cleanup()
