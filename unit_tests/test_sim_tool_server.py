"""A fake tool answers through the simulation's tool server exactly as
through its own Python process (the launcher): the same output, exit
status, input, working directory and user, so every recorded scenario
stays what it was while a scenario costs about half the CPU."""
import os
import subprocess

import pytest

from sim import exec_step, tool_server
from simulation import simulations

# A V100 (10de:1db4, "GV100GL [Tesla V100 PCIe 16GB]" in the PCI ID
# database) for lspci to list.
RELATED = {'host': {'series': 'jammy',
                    'pci': [{'address': '0000:84:00.0', 'vendor': '10de',
                             'device': '1db4', 'class': '030200',
                             'subsystem_vendor': '10de',
                             'subsystem_device': '1214'}]},
           'relations': {'nova-vgpu': [{'remote_unit': 'nova-compute/0',
                                        'data': {'probe': 'remote'}}]},
           'steps': []}


def _launcher_dir(simulation, tmp_path):
    """Every tool name linked to the Python launcher, as without a C
    compiler."""
    directory = tmp_path / 'launcher-bin'
    directory.mkdir()
    for name in os.listdir(simulation.bin_dir):
        target = os.path.join(simulation.bin_dir, name)
        if os.path.islink(target):
            os.symlink(os.path.join(simulation.meta, 'fakebin'),
                       str(directory / name))
    return str(directory)


def _call(simulation, bin_dir, command, stdin='', cwd=None, **privileges):
    environment = simulation._environment({})
    environment['PATH'] = bin_dir + os.pathsep + '/usr/bin:/bin'
    done = subprocess.run(['/bin/sh', '-c', command], input=stdin,
                          capture_output=True, text=True, env=environment,
                          cwd=cwd or simulation.charm_dir, **privileges)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def host(tmp_path):
    if not tool_server.compiled_client(str(tmp_path / 'client')):
        pytest.skip('no C compiler: every tool is the launcher here')
    with simulations(tmp_path) as make:
        simulation = make(RELATED)
        assert simulation._tool_server, 'no server where a client builds'
        yield simulation, _launcher_dir(simulation, tmp_path)


@pytest.mark.parametrize('command', [
    'config-get --format=json',
    # An exit status other than 0 or 1, and stdout with it.
    'systemctl is-active nvidia-vgpu-mgr',
    # A pass-through: the real lspci, run as the tool's child.
    'lspci -Dmmnn',
    'relation-get --format=json -r nova-vgpu:1 - nova-compute/0',
    'resource-get no-such-resource',
])
def test_a_call_answers_as_its_own_process_would(host, command):
    simulation, launcher = host
    assert (_call(simulation, simulation.bin_dir, command) ==
            _call(simulation, launcher, command))


def test_input_and_state_reach_the_tool(host):
    """relation-set --file - reads the caller's stdin; what it set is in
    the shared state for the next call, whichever way that call runs."""
    simulation, launcher = host
    code, _, stderr = _call(
        simulation, simulation.bin_dir,
        'relation-set -r nova-vgpu:1 --file -', stdin='probe: served\n')
    assert (code, stderr) == (0, '')
    data = simulation._load()['relations']
    assert any(relation['local'].get('probe') == 'served'
               for relation in data.values())


def test_a_tool_runs_in_the_callers_directory(host, tmp_path):
    """A relative --file is the caller's, as the tool's own process
    would open it."""
    simulation, _ = host
    (tmp_path / 'settings.yaml').write_text('where: caller\n')
    code, _, stderr = _call(
        simulation, simulation.bin_dir,
        'relation-set -r nova-vgpu:1 --file settings.yaml',
        cwd=str(tmp_path))
    assert (code, stderr) == (0, '')
    assert any(relation['local'].get('where') == 'caller'
               for relation in simulation._load()['relations'].values())


@pytest.mark.skipif(os.geteuid() != 0, reason='switching users needs root')
def test_an_unprivileged_caller_gets_no_root_through_the_server(host):
    """The server's fork takes the caller's user: nobody cannot lock the
    unit's state, through the server as through its own process."""
    simulation, launcher = host
    exec_step.open_to_others([simulation.work, simulation.meta,
                              simulation.bin_dir])
    privileges, _ = exec_step.as_user('nagios')
    served = _call(simulation, simulation.bin_dir, 'config-get', cwd='/',
                   **privileges)
    own = _call(simulation, launcher, 'config-get', cwd='/', **privileges)
    assert served[0] == own[0] != 0
    assert 'Permission denied' in served[2]
