"""Hostile vgpu-device-mappings through the real hooks, on a V100 host
before and after the NVIDIA driver runs: the values hold real control
characters once parsed (JSON/YAML escapes, a block scalar's final
newline), each blocks the unit, and nothing nova-compute has changes
until the value is fixed. Which message each value gets, on which host,
is test_plan.py's table (test_hostile_values_are_refused_by_name_...)."""
import os

import yaml

from simulation import SCENARIOS, scenario

V100 = 'nova-config/hostile-values-v100.yaml'


def hostile_steps(name):
    """The index of each config step of the scenario whose value holds a
    character outside printable ASCII in a type or entry."""
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
        if any(not ' ' <= c <= '~' for text in texts for c in text):
            found.append(index)
    return found


def test_each_hostile_value_blocks_and_nothing_nova_has_changes():
    output = scenario(V100)
    steps = output['steps']
    hostile = hostile_steps(V100)
    assert len(hostile) == 20
    for index in hostile:
        assert steps[index]['status']['workload'] == 'blocked', index
        assert steps[index]['status']['message'].startswith(
            'Invalid vgpu-device-mappings: the '), index
    sets = [step['relation_sets'] for step in steps]
    # The first publication, the joined hook (layer:openstack's package
    # map), and the final fix; no hostile step, no reboot, no
    # update-status sets anything.
    assert {i for i, count in enumerate(sets) if count} == {
        0, 2, len(steps) - 1}, list(zip([s['step'] for s in steps], sets))
    assert steps[-1]['status'] == {
        'workload': 'active',
        'message': 'Unit is ready: 1 NVIDIA GPU (Tesla V100 PCIe 16GB)'}
