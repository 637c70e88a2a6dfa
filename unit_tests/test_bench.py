"""The benchmark's hosts, arithmetic and report (no timing asserted)."""
import json
import math
import os
import subprocess
import sys

from bench import hosts, report
from sim import scenario as scenarios
from simulation import REPO


def test_hosts_have_the_gpus_vfs_and_types_asked_and_map_them_all():
    host = scenarios.validate(hosts.gpu_host(3, vfs=8, types=5,
                                             sysfs_noise=1000))
    gpus = [function for function in host['host']['pci']
            if function['vendor'] == '10de']
    assert [gpu['address'] for gpu in gpus] == hosts.gpu_addresses(3)
    assert {gpu['sriov']['total_vfs'] for gpu in gpus} == {8}
    assert {len(gpu['sriov']['vf_mdev_types']) for gpu in gpus} == {5}
    assert host['host']['sysfs_noise'] == 1000
    mapping = host['config']['vgpu-device-mappings']
    assert all(address in mapping for address in hosts.gpu_addresses(3))


def test_a_host_without_gpus_still_has_the_applications_mapping():
    host = hosts.gpu_host(0)
    assert not [function for function in host['host']['pci']
                if function['vendor'] == '10de']
    assert hosts.gpu_addresses(1)[0] in host['config'][
        'vgpu-device-mappings']


def test_types_are_distinct_and_describe_their_capacity():
    types = hosts.vgpu_types(40)
    assert len(set(spec['name'] for spec in types.values())) == 40
    assert all('max_instance=' in spec['description']
               for spec in types.values())


def test_growth_exponent_tells_linear_from_quadratic():
    linear = [(size, 0.1 + 0.002 * size) for size in (10, 100, 1000)]
    quadratic = [(size, 0.1 + 1e-6 * size ** 2) for size in (10, 100, 1000)]
    assert math.isclose(report.growth_exponent(linear, 0.1), 1.0,
                        abs_tol=1e-6)
    assert math.isclose(report.growth_exponent(quadratic, 0.1), 2.0,
                        abs_tol=1e-6)
    assert report.growth_exponent([(0, 0.1), (10, 0.2)], 0.1) is None


def _figures(wall, cpu, sets=0, calls=()):
    return {'wall_s': wall, 'cpu_s': cpu, 'cpu_with_children_s': wall,
            'max_rss_kib': 40960, 'subprocesses': 3, 'tool_calls': 2,
            'juju_log_calls': 1, 'package_manager_calls': list(calls),
            'relation_sets': sets}


def test_verdicts_hold_each_target_to_its_floor():
    floor = _figures(0.2, 0.1, calls=['apt-config dump'])
    found = report.verdicts(
        update_status=_figures(0.25, 0.125, calls=['apt-config dump']),
        hook_floor=floor, action=_figures(0.3, 0.2),
        reads=_figures(0.1, 0.1), walk=_figures(3.0, 3.0),
        hook_growth=1.0, action_growth=1.3)
    assert [(verdict.measured, verdict.met) for verdict in found] == [
        ('1.25x', True), ('1.25x', True), ('0', True), ('0', True),
        ('3.00x', False), ('10.0x', True), ('k = 1.00', True),
        ('k = 1.30', False)]
    worse = report.verdicts(
        _figures(0.3, 0.2, sets=1, calls=['apt-config dump', 'dpkg -i']),
        floor, _figures(0.3, 0.2), _figures(0.25, 0.2), _figures(1, 1),
        None, None)
    assert [verdict.met for verdict in worse] == [
        False, False, False, False, True, False, False, False]


def test_a_monitored_hook_is_held_to_the_unmonitored_one():
    unmonitored = dict(_figures(1.0, 0.30), opened_sys=['f'] * 50)
    found = report.monitored_verdicts(
        dict(_figures(1.2, 0.36), opened_sys=['f'] * 60), unmonitored)
    assert [(verdict.measured, verdict.met) for verdict in found] == [
        ('1.20x', True), ('60 / 50 = 1.20x', True)]
    worse = report.monitored_verdicts(
        dict(_figures(1.5, 0.39), opened_sys=['f'] * 21841), unmonitored)
    assert [verdict.met for verdict in worse] == [False, False]


def test_table_rows_line_up_under_their_header():
    lines = report.table(['hook', 'wall ms'],
                         [['update-status', '612'], ['x', '1']]).splitlines()
    assert lines[0] == '| hook          | wall ms |'
    assert lines[1] == '| ------------- | ------- |'
    assert lines[2] == '| update-status | 612     |'


def test_a_small_run_prints_every_section_and_writes_the_figures(tmp_path):
    """End to end on tiny hosts: the real hooks, floors and walk run."""
    figures = tmp_path / 'figures.json'
    done = subprocess.run(
        [sys.executable, '-m', 'bench', '--gpus', '1', '--vfs', '2',
         '--types', '2', '--action-gpus', '1', '--noise', '500',
         '--repeat', '1', '--json', str(figures)],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    for heading in ('## Hooks', '## list-vgpu-types', '## Growth',
                    '## Targets'):
        assert heading in done.stdout
    verdicts = [line for line in done.stdout.splitlines()
                if line.startswith(('MET', 'MISSED'))]
    assert len(verdicts) == 10
    assert 'update-status, monitored' in done.stdout
    data = json.loads(figures.read_text())
    # The monitored host is the largest one, related to nrpe and an agent.
    assert data['monitored']['gpus'] == 1
    assert data['monitored']['hooks']['update-status']['relation_sets'] == 0
    assert [host['gpus'] for host in data['hosts']] == [1]
    hooks = data['hosts'][0]['hooks']
    assert set(hooks) == {'install', 'start (after reboot)',
                          'config-changed', 'start', 'update-status',
                          'upgrade-charm', 'list-vgpu-types'}
    assert hooks['update-status']['relation_sets'] == 0
    # The action's floor reads exactly the files the action opened.
    assert data['action']['files'] == len(
        data['action']['action']['opened_sys']) > 0
    assert not [path for path in data['action']['action']['opened_sys']
                if not os.path.isabs(path)]
