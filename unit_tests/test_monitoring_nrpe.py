"""NRPE on the host: the check program Nagios runs as the nagios user
(nvidia_vgpu.monitoring.nagios_check), the facts it reads, and the
check files the nrpe subordinate serves (nvidia_vgpu.monitoring.nrpe)."""
import json
import os
import subprocess
import sys
import time

import pytest

from nvidia_vgpu.monitoring import facts_file, nagios_check, nrpe

FACTS = facts_file.PATH
DOCUMENT = {'checks': [
    {'name': 'nvidia_vgpu_drift', 'description': 'drift u/0', 'state': 2,
     'text': 'SR-IOV GPU 0000:41:00.0 has no VFs | or so\nsecond line',
     'perfdata': ''},
    {'name': 'nvidia_vgpu_capacity', 'description': 'capacity u/0',
     'state': 0, 'text': 'vGPUs: nvidia-105 30 free of 32',
     'perfdata': "'nvidia-105_free'=30;;;0;32"}]}


@pytest.fixture
def host(tmp_path, monkeypatch):
    monkeypatch.setenv('NVIDIA_VGPU_HOST_ROOT', str(tmp_path))
    return tmp_path


def _write(document=DOCUMENT, age=0):
    facts_file.write(document)
    path = nagios_check._host_path(FACTS)
    then = time.time() - age
    os.utime(path, (then, then))


def test_the_check_answers_from_fresh_facts_in_one_line(host):
    _write()
    assert nagios_check.answer('nvidia_vgpu_drift', FACTS, 7200) == (
        2, 'CRITICAL: SR-IOV GPU 0000:41:00.0 has no VFs / or so second '
        'line')
    assert nagios_check.answer('nvidia_vgpu_capacity', FACTS, 7200) == (
        0, "OK: vGPUs: nvidia-105 30 free of 32 | "
        "'nvidia-105_free'=30;;;0;32")


def test_stale_facts_are_unknown_and_say_the_agent_runs_no_hooks(host):
    _write(age=3 * 3600)
    state, line = nagios_check.answer('nvidia_vgpu_drift', FACTS, 7200)
    assert state == nagios_check.UNKNOWN
    assert line.startswith('vGPU facts are 180 min old (at most 120): the '
                           'unit agent has run no hook since')


def test_missing_unreadable_and_unknown_checks_are_unknown(host):
    state, line = nagios_check.answer('nvidia_vgpu_drift', FACTS, 7200)
    assert state == 3 and line.startswith('No vGPU facts at ' + FACTS)
    path = nagios_check._host_path(FACTS)
    os.makedirs(os.path.dirname(path))
    with open(path, 'w') as stream:
        stream.write('{not json')
    state, line = nagios_check.answer('nvidia_vgpu_drift', FACTS, 7200)
    assert state == 3 and line.startswith('Cannot read the vGPU facts')
    _write()
    assert nagios_check.answer('nvidia_vgpu_host', FACTS, 7200) == (
        3, 'The vGPU facts have no check nvidia_vgpu_host: this host has '
        'nvidia_vgpu_drift, nvidia_vgpu_capacity (the charm rewrites the '
        'NRPE checks at its next hook)')


def test_the_program_runs_alone_under_this_python_with_nagios_exit_codes(
        host):
    """As NRPE runs it: a file of its own, no charm code on the path (the
    series' Python in the unit-<series> runs)."""
    _write()
    program = host / 'check_nvidia_vgpu'
    with open(nagios_check.__file__) as source:
        program.write_text(source.read())
    environment = {'NVIDIA_VGPU_HOST_ROOT': str(host), 'PATH': '/usr/bin'}
    done = subprocess.run(
        [sys.executable, '-I', str(program), 'nvidia_vgpu_drift', '--facts',
         FACTS, '--max-age', '60'], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, universal_newlines=True, env=environment)
    assert (done.returncode, done.stderr) == (2, '')
    assert done.stdout.startswith('CRITICAL: SR-IOV GPU 0000:41:00.0')


def test_facts_are_world_readable_and_touched_when_unchanged(host):
    assert facts_file.write(DOCUMENT) is True
    path = nagios_check._host_path(FACTS)
    assert oct(os.stat(path).st_mode & 0o777) == '0o644'
    os.utime(path, (1, 1))
    assert facts_file.write(DOCUMENT) is False
    assert os.stat(path).st_mtime > time.time() - 60
    facts_file.remove()
    assert not os.path.exists(path)


def _nrpe_dirs(host):
    for directory in (nrpe.CONF_DIR, nrpe.EXPORT_DIR):
        os.makedirs(str(host) + directory)


def test_checks_are_written_as_nrpe_and_nagios_read_them(host):
    _nrpe_dirs(host)
    wanted = nrpe.checks(DOCUMENT)
    assert wanted[0].command == (
        '/usr/local/lib/nagios/plugins/check_nvidia_vgpu nvidia_vgpu_drift '
        '--facts /var/lib/nova-compute-nvidia-vgpu/monitoring.json '
        '--max-age 7200')
    assert nrpe.write(wanted, 'juju-compute-7', 'vgpu') is True
    conf = (host / 'etc/nagios/nrpe.d/check_nvidia_vgpu_drift.cfg')
    assert conf.read_text().splitlines()[-2:] == [
        '# servicegroups: vgpu',
        'command[check_nvidia_vgpu_drift]=' + wanted[0].command]
    export = (host / 'var/lib/nagios/export/'
              'service__juju-compute-7_check_nvidia_vgpu_drift.cfg')
    assert ('service_description             juju-compute-7'
            '[nvidia_vgpu_drift] drift u/0') in export.read_text()
    assert 'check_command                   check_nrpe!check_nvidia_vgpu_' \
        'drift' in export.read_text()
    # Nothing changed: nagios-nrpe-server need not reload.
    assert nrpe.write(wanted, 'juju-compute-7', 'vgpu') is False


def test_checks_no_longer_answered_go_and_others_files_stay(host):
    _nrpe_dirs(host)
    theirs = host / 'etc/nagios/nrpe.d/check_nova-compute.cfg'
    theirs.write_text('command[check_nova-compute]=x\n')
    wanted = nrpe.checks(DOCUMENT)
    nrpe.write(wanted, 'h', 'g')
    assert nrpe.write(wanted[1:], 'h', 'g') is True
    assert sorted(os.listdir(str(host) + nrpe.CONF_DIR)) == [
        'check_nova-compute.cfg', 'check_nvidia_vgpu_capacity.cfg']
    assert os.listdir(str(host) + nrpe.EXPORT_DIR) == [
        'service__h_check_nvidia_vgpu_capacity.cfg']
    nrpe.install_plugin()
    assert os.access(str(host) + nrpe.PLUGIN, os.X_OK)
    assert nrpe.remove() is True
    assert os.listdir(str(host) + nrpe.CONF_DIR) == ['check_nova-compute.cfg']
    assert not os.path.exists(str(host) + nrpe.PLUGIN)


def test_the_monitors_say_what_charm_nrpe_reads():
    """charm-nrpe's Monitors.add_monitors takes monitors.remote.<type>
    and passes each check's details on (canonical/charm-nrpe e725eb4,
    hooks/nrpe_helpers.py)."""
    monitors = nrpe.monitors(nrpe.checks(DOCUMENT))
    assert json.loads(json.dumps(monitors)) == {'monitors': {'remote': {
        'nrpe': {
            'nvidia_vgpu_drift': {'command': 'check_nvidia_vgpu_drift'},
            'nvidia_vgpu_capacity': {
                'command': 'check_nvidia_vgpu_capacity'}}}}}
