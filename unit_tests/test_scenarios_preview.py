"""preview-config (scenarios/preview/*.yaml): the operator sees what a
value would do, on this host, before `juju config`; the preview changes
nothing, and a value the option would refuse fails it with the status'
message."""
import json
import os

import pytest

from simulation import SCENARIOS, run_yaml, scenario

NAME = 'preview/v100-retype-preview.yaml'
# What a preview may run: Juju's hook tools aside, commands that read.
READS = {'apt-config', 'lspci', 'dpkg-query', 'nvidia-smi'}


@pytest.fixture(scope='module')
def output():
    return scenario(NAME)


def _previews(output):
    return [step for step in output['steps']
            if step['step'] == 'action preview-config']


def test_the_preview_shows_what_nova_would_get_and_what_waits(output):
    results = output['actions'][0]['results']
    assert output['actions'][0]['failed'] is None
    assert json.loads(results['nova-config']) == {
        'devices': [['enabled_mdev_types', 'nvidia-105, nvidia-108']],
        'mdev_nvidia-105': [['device_addresses', '0000:85:00.0']],
        'mdev_nvidia-108': [['device_addresses', '0000:84:00.0']]}
    assert json.loads(results['changes']) == {
        '0000:85:00.0': {'types': [['nvidia-108'], ['nvidia-105']]}}
    assert json.loads(results['waits']) == [{
        'change': 'vgpu-device-mappings', 'gpu': '0000:84:00.0',
        'guests': ['instance-0000002a', 'instance-0000002b']}]
    assert results['status'].startswith(
        'waiting: Change of vgpu-device-mappings waits for guests')


def test_a_refused_value_fails_with_the_status_message(output):
    failed = output['actions'][1]['failed']
    assert failed.startswith('Invalid vgpu-device-mappings: not valid YAML')
    assert output['actions'][1]['results'] == {}


def test_the_preview_changes_nothing(output, tmp_path):
    for step in _previews(output):
        assert step['relation_sets'] == 0
        assert {command[0] for command in step['commands']} <= READS
        assert step['status']['message'].startswith('Unit is ready')
    # The files are those the scenario leaves without the previews.
    with open(os.path.join(SCENARIOS, NAME)) as stream:
        text = stream.read()
    head, steps = text.split('\nsteps:\n')
    kept = [line for line in steps.split('\n  - ')
            if not line.startswith('action: preview-config')]
    without = run_yaml(tmp_path, head + '\nsteps:\n' + '\n  - '.join(kept))
    assert without['files'] == output['files']
    assert without['relations'] == output['relations']


def test_the_hook_after_a_preview_sets_nothing(output):
    assert output['steps'][-1]['relation_sets'] == 0
