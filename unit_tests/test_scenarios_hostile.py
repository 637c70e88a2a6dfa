"""Hostile vgpu-device-mappings through the real hooks, on a V100 host
before and after the NVIDIA driver runs and on a host without a GPU: the
values hold real control characters once parsed (JSON/YAML escapes, a
block scalar's final newline), each is refused naming the character, and
nothing nova-compute has changes."""
import os

import pytest
import yaml

from simulation import SCENARIOS, scenario

V100 = 'nova-config/hostile-values-v100.yaml'
NO_GPU = 'nova-config/hostile-values-no-gpu.yaml'


def hostile_steps(name):
    """(index, the first character outside printable ASCII in a type or
    entry) for each config step of the scenario that holds one."""
    with open(os.path.join(SCENARIOS, name)) as stream:
        steps = yaml.safe_load(stream)['steps']
    found = []
    for index, step in enumerate(steps):
        if not isinstance(step, dict) or 'config' not in step:
            continue
        value = yaml.load(step['config']['vgpu-device-mappings'] or '{}',
                          Loader=yaml.BaseLoader)
        texts = [text for key, entries in value.items()
                 for text in [key] + list(entries)]
        odd = [c for text in texts for c in text if not ' ' <= c <= '~']
        if odd:
            found.append((index, odd[0]))
    return found


@pytest.mark.parametrize('name, count', [(V100, 20), (NO_GPU, 6)])
def test_each_hostile_value_is_refused_by_its_character(name, count):
    output = scenario(name)
    hostile = hostile_steps(name)
    assert len(hostile) == count
    for index, character in hostile:
        step = output['steps'][index]
        assert step['status']['workload'] == 'blocked', index
        message = step['status']['message']
        assert message.startswith('Invalid vgpu-device-mappings: the ')
        assert ' holds {} (U+{:04X}'.format(
            ascii(character), ord(character)) in message, message
        assert all(' ' <= c <= '~' for c in message)


@pytest.mark.parametrize('name', [V100, NO_GPU])
def test_nothing_nova_compute_has_changes_until_the_value_is_fixed(name):
    output = scenario(name)
    names = [step['step'] for step in output['steps']]
    sets = [step['relation_sets'] for step in output['steps']]
    last = len(sets) - 1
    # The first publication, the joined hook (layer:openstack's package
    # map), and on the GPU host the final fix; no hostile step, no
    # reboot, no update-status sets anything.
    expected = {0, 2} | ({last} if name == V100 else set())
    assert {i for i, count in enumerate(sets) if count} == expected, \
        list(zip(names, sets))


def test_the_v100_host_is_checked_before_and_after_its_driver_runs():
    output = scenario(V100)
    steps = output['steps']
    hostile = [index for index, _ in hostile_steps(V100)]
    reboot = [step['step'] for step in steps].index('reboot')
    before = [i for i in hostile if i < reboot]
    after = [i for i in hostile if i > reboot]
    assert len(before) == len(after) == 10
    assert steps[before[0] - 1]['status']['message'].startswith(
        'Reboot required')
    assert steps[reboot]['status']['message'].startswith('Unit is ready')


def test_a_value_only_this_host_refuses_changes_nothing_either():
    steps = scenario(V100)['steps']
    refused_here = steps[31]
    assert refused_here['status'] == {'workload': 'blocked', 'message': (
        'Invalid vgpu-device-mappings: nvidia-234 is not offered by the GPU '
        'at 0000:84:00.0 (it offers: nvidia-105, nvidia-108); see the '
        'list-vgpu-types action')}
    assert refused_here['relation_sets'] == steps[32]['relation_sets'] == 0
    assert steps[33]['status']['workload'] == 'active'
    assert steps[33]['relation_sets'] == 1
