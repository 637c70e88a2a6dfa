"""The hook simulator end to end: the real handlers on the real
charms.reactive bus, fake Juju, a generated host; the contract's JSON out."""
import contextlib
import io
import json
import os
import subprocess
import sys

import pytest

from simulation import (
    REPO, SCENARIOS, changing, run_yaml, scenario, scenario_text,
    simulate_text)

CONTRACT_KEYS = {'status', 'application_version', 'relations', 'steps',
                 'actions', 'commands', 'files', 'flags'}


def result(name):
    return scenario(name)


def simulate(name):
    return scenario_text(name)


def test_output_has_the_contract_shape():
    output = result('no-gpu.yaml')
    assert CONTRACT_KEYS <= set(output)
    for step in output['steps']:
        assert {'step', 'exit_code', 'status', 'commands',
                'relation_sets'} <= set(step)
        assert all(isinstance(argv, list) for argv in step['commands'])


def test_no_gpu_host_reaches_ready_through_the_real_handlers():
    output = result('no-gpu.yaml')
    assert [step['step'] for step in output['steps']] == [
        'install', 'nova-vgpu-relation-created', 'nova-vgpu-relation-joined',
        'nova-vgpu-relation-changed', 'config-changed', 'start',
        'update-status']
    assert all(step['exit_code'] == 0 for step in output['steps'])
    assert output['status']['workload'] == 'active'
    assert output['status']['message'] == \
        'Unit is ready: no NVIDIA GPU on this host'
    assert 'charm.installed' in output['flags']
    assert 'nova-vgpu.connected' in output['flags']


def test_no_gpu_host_is_left_untouched():
    output = result('no-gpu.yaml')
    assert not changing(output['commands'])
    assert output['files'] == {}
    assert output['host']['packages'] == {
        'nova-common': '3:25.2.1-0ubuntu2'}


def test_same_scenario_gives_byte_identical_output():
    assert simulate_text(os.path.join(SCENARIOS, 'no-gpu.yaml')) == \
        simulate('no-gpu.yaml')


def test_output_holds_no_sandbox_paths():
    text = simulate('two-v100-yoga.yaml')
    assert '/tmp/' not in text and 'vgpu-sim-' not in text


def test_resource_is_a_real_deb_where_juju_keeps_it():
    output = result('two-v100-yoga.yaml')
    sha = output['host']['resources_sha256']['nvidia-vgpu-software']
    assert len(sha) == 64


def test_relation_data_is_set_once_and_reruns_are_quiet():
    output = result('no-gpu.yaml')
    sets = {step['step']: step['relation_sets'] for step in output['steps']}
    assert sets['nova-vgpu-relation-joined'] == 1
    assert sets['nova-vgpu-relation-changed'] == 0
    assert sets['update-status'] == 0
    published = output['relations']['nova-vgpu:1']
    for value in published.values():
        assert value == json.dumps(json.loads(value), sort_keys=True,
                                   separators=(',', ':'))


def test_update_status_runs_no_host_changing_command():
    output = result('no-gpu.yaml')
    update = output['steps'][-1]
    assert update['step'] == 'update-status'
    assert not changing(update['commands'])


def test_config_flags_exist_only_while_a_hook_runs():
    flags = result('no-gpu.yaml')['flags']
    assert not [flag for flag in flags if flag.startswith('config.')]


def test_relation_departure_runs_departed_then_broken(tmp_path):
    output = run_yaml(tmp_path, """
relations:
  nova-vgpu: [{remote_unit: nova-compute/0, data: {}}]
steps:
  - install
  - nova-vgpu-relation-joined
  - relation-departed: nova-vgpu
""")
    departed = output['steps'][-1]
    assert [run['hook'] for run in departed['hooks']] == [
        'nova-vgpu-relation-departed', 'nova-vgpu-relation-broken']
    assert departed['exit_code'] == 0
    assert output['relations'] == {}
    assert 'nova-vgpu.connected' not in output['flags']


def test_a_failing_hook_is_a_result_not_a_crash(tmp_path):
    output = run_yaml(tmp_path, """
steps:
  - install
  - action: list-vgpu-types
    params: {pci-address: "84:00.0"}
  - action: no-such-action
""")
    assert output['steps'][0]['exit_code'] == 0
    assert [action['name'] for action in output['actions']] == [
        'list-vgpu-types', 'no-such-action']
    assert all(action['failed'] for action in output['actions'])


@pytest.mark.parametrize('action', ['pause', 'resume'])
def test_layer_openstack_actions_run_on_a_host_without_gpu(tmp_path,
                                                           action):
    output = run_yaml(tmp_path, """
host:
  packages: {{nova-common: "3:25.2.1-0ubuntu2"}}
relations:
  nova-vgpu: [{{remote_unit: nova-compute/0, data: {{}}}}]
steps:
  - install
  - action: {}
""".format(action))
    assert output['actions'][0]['failed'] is None
    expected = 'maintenance' if action == 'pause' else 'active'
    assert output['status']['workload'] == expected


def test_a_profiled_run_measures_each_hook_process(tmp_path):
    """What benchmarks read: per hook, its own CPU and memory, what it
    started, the tools and commands among that, sysfs files it opened."""
    from sim import runner, scenario as scenarios
    loaded = scenarios.load(os.path.join(SCENARIOS, 'no-gpu.yaml'))
    simulation = runner.Simulation(loaded, REPO, profile=True,
                                   work_dir=str(tmp_path / 'sandbox'))
    with contextlib.redirect_stderr(io.StringIO()):
        output = simulation.run()
    hooks = simulation.measurements
    assert [run['label'] for run in hooks] == [
        'hook ' + hook for hook in scenarios.default_steps(loaded)]
    for run in hooks:
        assert run['exit_code'] == 0
        assert 0 < run['cpu_s'] <= run['cpu_with_children_s'] + 0.05
        assert run['max_rss_kib'] > 1024
        assert run['spawned'].count('lspci') == 1
        assert len(run['spawned']) >= len(run['tool_calls']) + len(
            run['host_commands'])
        assert all(path.startswith(simulation.host_root + '/sys/')
                   for path in run['opened_sys'])
    assert [run['relation_sets'] for run in hooks] == [
        step['relation_sets'] for step in output['steps']]


def test_charmhelpers_is_patched_on_import_and_not_in_bare_programs(
        tmp_path):
    """Hooks get the simulated host's answers from charmhelpers without
    importing it up front; benchmark floors get no patch at all."""
    from sim import runner, scenario as scenarios
    simulation = runner.Simulation(
        scenarios.load(os.path.join(SCENARIOS, 'no-gpu.yaml')), REPO,
        work_dir=str(tmp_path / 'sandbox'))
    simulation.setup()
    probe = [sys.executable, '-c', 'import sys\n'
             'early = "charmhelpers" in sys.modules\n'
             'import charmhelpers.osplatform as platform\n'
             'patched = platform.get_platform.__name__ == "<lambda>"\n'
             'sys.exit(2 if early else 0 if patched else 1)\n']
    with contextlib.redirect_stderr(io.StringIO()):
        assert simulation.run_program(probe) == 0
        assert simulation.run_program(probe, bare=True) == 1


def test_every_endpoint_has_its_interface_layer():
    """charms.reactive logs 'ERROR Unable to find implementation for
    relation' in every hook for an endpoint without one."""
    done = subprocess.run(
        [sys.executable, '-m', 'sim',
         os.path.join(SCENARIOS, 'two-v100-yoga.yaml')],
        cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0
    assert 'Reactive main running for hook install' in done.stderr
    assert 'Unable to find implementation' not in done.stderr
    assert 'Hook error' not in done.stderr


def test_virtualenv_for_a_built_charms_upgrade_stays_in_the_sandbox(
        tmp_path):
    """layer:basic rebuilds its venv with the host's virtualenv on
    upgrade-charm; the simulator's makes it inside the sandbox only."""
    from sim import runner, scenario as scenarios
    simulation = runner.Simulation(
        scenarios.load(os.path.join(SCENARIOS, 'no-gpu.yaml')), REPO,
        work_dir=str(tmp_path / 'sandbox'))
    simulation.setup()
    tool = os.path.join(simulation.bin_dir, 'virtualenv')
    outside = str(tmp_path / 'outside-venv')
    inside = simulation.host_root + runner.AGENT_DIR + '/.venv'
    with contextlib.redirect_stderr(io.StringIO()):
        assert simulation.run_program(
            [tool, '-ppython3', '--never-download', outside]) == 1
        assert simulation.run_program(
            [tool, '-ppython3', '--never-download', inside]) == 0
    assert not os.path.exists(outside)
    assert os.path.isfile(os.path.join(inside, 'bin', 'python'))


def test_guests_step_and_disruptions_in_the_output(tmp_path):
    """Nova deletes a guest between hooks; the output says so and that
    no guest lost its vGPU."""
    output = run_yaml(tmp_path, """
host:
  kernel_modules: [nvidia]
  pci:
    - {address: "0000:84:00.0", vendor: "10de", device: "1db4",
       class: "030200", driver: nvidia}
  mdevs: [{uuid: 4b20d080-1b54-4048-85b3-a6a62d165c01,
           parent: "0000:84:00.0", type: nvidia-108}]
  libvirt_domains:
    - {name: instance-0000002a, mdevs: [4b20d080-1b54-4048-85b3-a6a62d165c01]}
steps:
  - install
  - guests: {libvirt_domains: [], mdevs: []}
  - update-status
""")
    guests = output['steps'][1]
    assert {key: guests[key] for key in (
        'step', 'hooks', 'python', 'relation_sets', 'commands',
        'exit_code')} == {
        'step': 'guests', 'hooks': [], 'python': None, 'relation_sets': 0,
        'commands': [], 'exit_code': 0}
    assert output['host']['mdevs'] == []
    assert output['host']['guest_disruptions'] == []
    assert not [path for path in output['files']
                if path.startswith('/etc/libvirt/')]


def test_relations_other_than_nova_vgpu_run_their_hooks(tmp_path):
    """Any relation of metadata.yaml a scenario holds gets its hooks,
    once per remote unit for -joined and -changed (juju-info here; the
    charm has no nrpe-external-master endpoint yet)."""
    output = run_yaml(tmp_path, """
relations:
  juju-info: [{remote_unit: nova-compute/0, data: {}},
              {remote_unit: nova-compute/1, data: {}}]
steps: [install, juju-info-relation-joined, juju-info-relation-changed]
""")
    assert [(step['step'], [hook['hook'] for hook in step['hooks']],
             step['exit_code']) for step in output['steps'][1:]] == [
        ('juju-info-relation-joined', ['juju-info-relation-joined'] * 2, 0),
        ('juju-info-relation-changed', ['juju-info-relation-changed'] * 2,
         0)]
