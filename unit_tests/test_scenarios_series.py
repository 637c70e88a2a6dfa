"""Every series the charm claims, in the simulator: each scenario's hooks
run under its series' Python, and each scenario's series is one that
ships its OpenStack release."""
import glob
import os
import subprocess
import sys

import pytest
import yaml
from nvidia_vgpu.nova import releases
from sim import pythons
from simulation import REPO, SCENARIOS, run_yaml, scenario, sections

# Ubuntu series -> OpenStack releases it ships (its own first, then the
# Ubuntu Cloud Archive), from ../shared/reference/nova-vgpu-config.md.
SHIPPED = {
    'bionic': ['queens', 'rocky', 'stein', 'train', 'ussuri'],
    'focal': ['ussuri', 'victoria', 'wallaby', 'xena', 'yoga'],
    'jammy': ['yoga', 'zed', 'antelope', 'bobcat', 'caracal'],
    'noble': ['caracal', 'dalmatian', 'epoxy', 'flamingo', 'gazpacho'],
}
# Releases the suite must run on each series (issue 19).
REQUIRED = {'bionic': {'queens', 'rocky'}, 'focal': {'ussuri', 'victoria'},
            'jammy': {'yoga', 'caracal'}, 'noble': {'caracal', 'epoxy'}}


def shipped_scenarios():
    """(path, series, release or None) of every scenario in scenarios/."""
    found = []
    for path in sorted(glob.glob(os.path.join(SCENARIOS, '**', '*.yaml'),
                                 recursive=True)):
        with open(path) as stream:
            data = yaml.safe_load(stream)
        host = data.get('host', {})
        nova = host.get('packages', {}).get('nova-common')
        found.append((os.path.relpath(path, SCENARIOS),
                      host.get('series', pythons.DEFAULT_SERIES),
                      releases.release_for_nova_version(nova)
                      if nova else None))
    return found


def test_each_scenario_runs_on_a_series_that_ships_its_release():
    for name, series, release in shipped_scenarios():
        if release is not None:
            assert release in SHIPPED[series], (name, series, release)


def test_the_suite_covers_every_series_with_its_releases():
    covered = {}
    for _, series, release in shipped_scenarios():
        covered.setdefault(series, set()).add(release)
    for series, wanted in REQUIRED.items():
        assert wanted <= covered.get(series, set()), series


@pytest.mark.parametrize('name, python, expected', [
    ('series/rocky-bionic.yaml', '3.6',
     {'devices': [['enabled_vgpu_types', 'nvidia-108']]}),
    ('series/ussuri-focal.yaml', '3.8',
     {'devices': [['enabled_vgpu_types', 'nvidia-108']],
      'vgpu_nvidia-108': [['device_addresses',
                           '0000:84:00.0,0000:85:00.0']]}),
    ('series/victoria-focal.yaml', '3.8',
     {'devices': [['enabled_vgpu_types', 'nvidia-105, nvidia-108']],
      'vgpu_nvidia-105': [['device_addresses', '0000:85:00.0']],
      'vgpu_nvidia-108': [['device_addresses', '0000:84:00.0']]}),
    ('series/caracal-jammy.yaml', '3.10',
     {'devices': [['enabled_mdev_types', 'nvidia-105, nvidia-108']],
      'mdev_nvidia-105': [['device_addresses', '0000:85:00.0']],
      'mdev_nvidia-108': [['device_addresses', '0000:84:00.0']]}),
])
def test_each_series_runs_its_release_under_its_python(name, python,
                                                       expected):
    output = scenario(name)
    assert [(s['exit_code'], s['python']) for s in output['steps']] == [
        (0, python)] * 3
    assert output['status'] == {
        'workload': 'active',
        'message': 'Unit is ready: 2 NVIDIA GPUs (Tesla V100 PCIe 16GB)'}
    assert sections(output) == expected


def test_every_shipped_scenario_reports_its_series_python():
    for name, series, _ in shipped_scenarios():
        if name.startswith('series/') or name == 'no-gpu.yaml':
            output = scenario(name)
            assert {step['python'] for step in output['steps']} == {
                pythons.SERIES_PYTHON[series]}, name


def _without_python(output):
    for step in output['steps']:
        step.pop('python')
    return output


def test_the_default_scenario_does_the_same_on_every_series(tmp_path):
    with open(os.path.join(SCENARIOS, 'no-gpu.yaml')) as stream:
        base = yaml.safe_load(stream)
    outputs = {}
    for series, python in pythons.SERIES_PYTHON.items():
        base['host']['series'] = series
        output = run_yaml(tmp_path, yaml.safe_dump(base))
        assert {step['python'] for step in output['steps']} == {python}
        assert all(step['exit_code'] == 0 for step in output['steps'])
        outputs[series] = _without_python(output)
    assert outputs['bionic']['status'] == {
        'workload': 'active',
        'message': 'Unit is ready: no NVIDIA GPU on this host'}
    for series in ('focal', 'jammy', 'noble'):
        assert outputs[series] == outputs['bionic'], series


def _simulate(path, **environment):
    return subprocess.run(
        [sys.executable, '-m', 'sim', str(path)], cwd=REPO,
        env=dict(os.environ, **environment), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, universal_newlines=True, timeout=300)


def test_a_series_without_its_python_here_exits_2_naming_it(tmp_path):
    (tmp_path / 'pyenv' / 'versions').mkdir(parents=True)
    path = tmp_path / 'scenario.yaml'
    path.write_text('host: {series: bionic}\n')
    done = _simulate(path, PYENV_ROOT=str(tmp_path / 'pyenv'),
                     PATH='/usr/bin:/bin')
    assert done.returncode == 2
    assert done.stdout == ''
    assert done.stderr.count('\n') == 1
    assert done.stderr.startswith('sim: host.series bionic: Python 3.6 is '
                                  'not on this machine')


def test_an_unknown_series_exits_2(tmp_path):
    path = tmp_path / 'scenario.yaml'
    path.write_text('host: {series: xenial}\n')
    done = _simulate(path)
    assert done.returncode == 2
    assert done.stderr == ("sim: host.series: 'xenial' is not a series "
                           "this charm supports (bionic, focal, jammy, "
                           "noble)\n")


@pytest.mark.parametrize('juju_version, command', [
    ('2.9.49', 'juju relate'),
    ('3.6.1', 'juju integrate'),
])
def test_the_missing_relation_names_the_running_juju_s_command(
        tmp_path, juju_version, command):
    output = run_yaml(tmp_path, """
juju_version: "{}"
host:
  series: focal
  packages: {{nova-common: "2:21.2.4-0ubuntu2"}}
steps: [install, config-changed, start]
""".format(juju_version))
    assert output['status'] == {
        'workload': 'waiting',
        'message': 'Waiting for the nova-vgpu relation: {} '
                   'nova-compute-nvidia-vgpu:nova-vgpu '
                   'nova-compute:nova-vgpu'.format(command)}
