"""Every shipped scenario prints exactly what was recorded for it
(unit_tests/data/scenario_outputs, written by `python -m sim.outputs`).

A change of the code that must not change behaviour keeps every record;
a deliberate change records the scenarios again, and the records' diff in
the commit shows what an operator would see change: statuses, relation
data, commands, files.
"""
import pytest

from sim import outputs
from simulation import scenario_text


@pytest.mark.parametrize('name', outputs.shipped())
def test_the_output_is_the_recorded_one(name):
    expected = outputs.recorded(name)
    actual = scenario_text(name)
    assert actual == expected, outputs.difference(name, expected, actual)


def test_every_record_has_its_scenario():
    """A record whose scenario was removed or renamed goes with it."""
    assert outputs.orphaned_records() == []
