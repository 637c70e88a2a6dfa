"""The relation data this charm leaves for nova-compute after each step
of a scenario, as the principal would read it between hooks."""
from typing import Dict, List, Optional

from sim import scenario as scenarios
from sim.runner import Simulation

RELATION = 'nova-vgpu:1'


def published_at_each_step(repo: str, path: str,
                           left_before: Optional[Dict[str, str]] = None
                           ) -> List[Dict[str, str]]:
    """Run the scenario step by step; left_before: what an earlier
    revision of the charm had set on the relation before the first
    step."""
    story = scenarios.load(path)
    simulation = Simulation(story, repo)
    try:
        simulation.setup()
        if left_before:
            state = simulation._load()
            state['relations'][RELATION]['local'] = dict(left_before)
            simulation._save(state)
        published = []
        for step in story['steps']:
            record = simulation.run_step(step)
            if record['exit_code']:
                raise RuntimeError('step {} failed'.format(record['step']))
            published.append(dict(
                simulation._load()['relations'][RELATION]['local']))
        return published
    finally:
        simulation.cleanup()
