"""The exec step runs a program on the simulated host as NRPE, cron or an
operator would: no hook, the host as hooks see it, and for a user other
than root no root privileges (libvirt's files are root's alone)."""
import contextlib
import io
import json
import os
import stat

import pytest

from sim import exec_step, runner, scenario
from simulation import simulate_text

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = '/usr/local/lib/nagios/plugins/check_probe'
# Prints who it runs as and what it can see, then reads a guest's
# definition, which only root can.
SCRIPT = """#!/bin/sh
/usr/bin/id -u
echo "root=$NVIDIA_VGPU_HOST_ROOT/ unit=${JUJU_UNIT_NAME:-none}"
exec /bin/cat "$NVIDIA_VGPU_HOST_ROOT/etc/libvirt/qemu/instance-1.xml"
"""


@pytest.fixture
def host():
    """A set-up simulation with one running guest and the probe
    installed; its sandbox is a fresh temporary directory, as the
    simulator makes it (pytest's own are closed to other users)."""
    data = scenario.validate({
        'host': {'libvirt_domains': [{'name': 'instance-1'}]},
        'steps': []})
    simulation = runner.Simulation(data, REPO)
    with contextlib.redirect_stderr(io.StringIO()):
        simulation.setup()
    path = simulation.host_root + PROGRAM
    os.makedirs(os.path.dirname(path))
    with open(path, 'w') as stream:
        stream.write(SCRIPT)
    os.chmod(path, 0o755)
    yield simulation
    simulation.cleanup()


def _run(simulation, **spec):
    with contextlib.redirect_stderr(io.StringIO()):
        return simulation.run_step({'exec': spec})


def test_root_sees_the_host_without_the_hook_context(host):
    step = _run(host, argv=[PROGRAM])
    assert step['step'] == 'exec ' + PROGRAM
    assert step['hooks'] == [] and step['exit_code'] == 0
    assert step['exec']['exit_code'] == 0
    lines = step['exec']['stdout'].splitlines()
    assert lines[:2] == ['0', 'root={}/ unit=none'.format(host.host_root)]
    assert "<name>instance-1</name>" in step['exec']['stdout']


@pytest.mark.skipif(os.geteuid() != 0, reason='switching users needs root')
def test_another_user_cannot_read_libvirts_files(host):
    step = _run(host, argv=[PROGRAM], user='nagios')
    assert step['exec']['exit_code'] == 1
    assert step['exec']['stdout'].splitlines()[0] == str(
        exec_step.UNPRIVILEGED)
    assert 'Permission denied' in step['exec']['stderr']
    for where in (runner.simhost.LIBVIRT_DOMAINS + '/instance-1.xml',
                  runner.simhost.LIBVIRT_LIVE_STATE + '/instance-1.xml'):
        mode = os.stat(os.path.join(host.host_root, where)).st_mode
        assert stat.S_IMODE(mode) == 0o600


def test_without_root_the_step_says_it_ran_as_the_current_user(
        host, monkeypatch):
    monkeypatch.setattr(exec_step.os, 'geteuid', lambda: 1000)
    step = _run(host, argv=[PROGRAM], user='nagios')
    assert step['exec']['stderr'].startswith(
        'sim: exec: the simulator is not root, so it cannot switch to '
        'nagios; ran as the current user\n')


def test_a_missing_program_exits_127_and_one_that_cannot_run_126(host):
    missing = _run(host, argv=['/usr/local/bin/nothing-here', '-v'])
    assert missing['exec'] == {
        'exit_code': 127, 'stdout': '',
        'stderr': 'sh: 1: /usr/local/bin/nothing-here: not found\n'}
    os.chmod(host.host_root + PROGRAM, 0o644)
    assert _run(host, argv=[PROGRAM])['exec']['exit_code'] == 126


def test_the_report_scrubs_sandbox_paths(host):
    _run(host, argv=[PROGRAM])
    record = host.report()['steps'][0]['exec']
    assert record['stdout'].splitlines()[1] == 'root=/ unit=none'
    assert host.work not in json.dumps(host.report())


def test_the_command_line_runs_an_exec_step(tmp_path):
    path = tmp_path / 'exec.yaml'
    path.write_text('steps:\n- exec: {argv: [%s], user: nagios}\n' % PROGRAM)
    step, = json.loads(simulate_text(str(path)))['steps']
    assert step['step'] == 'exec ' + PROGRAM
    assert step['exec']['exit_code'] == 127
    assert step['hooks'] == []
