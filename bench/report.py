"""Benchmark figures into tables, ratios and verdicts (data in, text out).

Each cost is set against its floor: what any hook of a charms.openstack
charm pays before doing anything (for hooks), or what reading exactly the
reported files costs (for list-vgpu-types).
"""
import math
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

HOOK_TARGET = 1.3           # update-status within 1.3x of the hook floor
ACTION_TARGET = 1.5         # list-vgpu-types within 1.5x of its reads
WALK_TARGET = 10.0          # ... and at least 10x faster than a walk
GROWTH_TARGET = 1.15        # cost ~ (GPUs x VFs x types)^k with k <= this
# a monitored update-status within 1.2x of the unmonitored, in CPU and
# in sysfs files opened
MONITORED_TARGET = 1.2


class Verdict(NamedTuple):
    target: str
    measured: str
    met: bool


def ratio(cost: float, floor: float) -> float:
    return cost / floor if floor else math.inf


def milliseconds(seconds: Optional[float]) -> str:
    return '-' if seconds is None else '{:.0f}'.format(seconds * 1000)


def hook_row(name: str, gpus: int, figures: Dict[str, Any],
             floor: Dict[str, Any]) -> List[str]:
    """One table row: a hook's cost on one host, with its ratios."""
    return [
        name, str(gpus), milliseconds(figures['wall_s']),
        milliseconds(figures['cpu_s']),
        milliseconds(figures['cpu_with_children_s']),
        '{:.1f}'.format(figures['max_rss_kib'] / 1024),
        '{} ({}+{})'.format(figures['subprocesses'], figures['tool_calls'],
                            figures['juju_log_calls']),
        str(len(figures['package_manager_calls'])),
        str(figures['relation_sets']),
        '{:.2f}'.format(ratio(figures['wall_s'], floor['wall_s'])),
        '{:.2f}'.format(ratio(figures['cpu_s'], floor['cpu_s'])),
    ]


HOOK_HEADER = ['hook', 'GPUs', 'wall ms', 'CPU ms', '+children ms',
               'peak MiB', 'subprocs (tools+logs)', 'pkg', 'rel-sets',
               'wall/floor', 'CPU/floor']


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table, columns padded for the terminal."""
    widths = [max(len(str(row[i])) for row in [header] + list(rows))
              for i in range(len(header))]

    def line(cells):
        return '| ' + ' | '.join(str(cell).ljust(width) for cell, width in
                                 zip(cells, widths)) + ' |'
    return '\n'.join([line(header),
                      line(['-' * width for width in widths])] +
                     [line(row) for row in rows])


def growth_exponent(points: Sequence[Tuple[int, float]],
                    fixed: float) -> Optional[float]:
    """k in cost - fixed ~ size^k, fitted (least squares on logs) over the
    points (size, cost) with size > 0; 1.0 is linear."""
    usable = [(math.log(size), math.log(cost - fixed))
              for size, cost in points if size > 0 and cost > fixed]
    if len(usable) < 2:
        return None
    mean_x = sum(x for x, _ in usable) / len(usable)
    mean_y = sum(y for _, y in usable) / len(usable)
    spread = sum((x - mean_x) ** 2 for x, _ in usable)
    if not spread:
        return None
    return sum((x - mean_x) * (y - mean_y) for x, y in usable) / spread


def verdicts(update_status: Dict[str, Any], hook_floor: Dict[str, Any],
             action: Dict[str, Any], reads: Dict[str, Any],
             walk: Dict[str, Any], hook_growth: Optional[float],
             action_growth: Optional[float]) -> List[Verdict]:
    """The issue's targets against the largest host's figures."""
    floor_calls = len(hook_floor['package_manager_calls'])
    own_calls = len(update_status['package_manager_calls']) - floor_calls
    found = [
        Verdict('update-status CPU within {}x of the hook floor'.format(
            HOOK_TARGET), '{:.2f}x'.format(ratio(
                update_status['cpu_s'], hook_floor['cpu_s'])),
            ratio(update_status['cpu_s'], hook_floor['cpu_s']) <=
            HOOK_TARGET),
        Verdict('update-status wall within {}x of the hook floor'.format(
            HOOK_TARGET), '{:.2f}x'.format(ratio(
                update_status['wall_s'], hook_floor['wall_s'])),
            ratio(update_status['wall_s'], hook_floor['wall_s']) <=
            HOOK_TARGET),
        Verdict('update-status: no relation-set',
                str(update_status['relation_sets']),
                update_status['relation_sets'] == 0),
        Verdict('update-status: no package-manager call beyond the '
                "floor's", str(own_calls), own_calls <= 0),
        Verdict('list-vgpu-types within {}x of reading its files'.format(
            ACTION_TARGET), '{:.2f}x'.format(ratio(
                action['wall_s'], reads['wall_s'])),
            ratio(action['wall_s'], reads['wall_s']) <= ACTION_TARGET),
        Verdict('list-vgpu-types at least {:.0f}x faster than walking '
                '/sys/devices'.format(WALK_TARGET), '{:.1f}x'.format(ratio(
                    walk['wall_s'], action['wall_s'])),
                ratio(walk['wall_s'], action['wall_s']) >= WALK_TARGET),
    ]
    for name, exponent in (('hooks (update-status CPU)', hook_growth),
                           ('list-vgpu-types CPU', action_growth)):
        found.append(Verdict(
            '{} grows at most linearly in GPUs x VFs x types (k <= {})'
            .format(name, GROWTH_TARGET),
            'k = {:.2f}'.format(exponent) if exponent is not None else 'n/a',
            exponent is not None and exponent <= GROWTH_TARGET))
    return found


def monitored_verdicts(monitored: Dict[str, Any],
                       unmonitored: Dict[str, Any]) -> List[Verdict]:
    """A monitored update-status (nrpe and a COS agent related) against
    the same host's unmonitored one, in CPU and sysfs files opened."""
    files = (len(monitored['opened_sys']),
             len(unmonitored['opened_sys']))
    return [
        Verdict('monitored update-status CPU within {}x of the '
                'unmonitored'.format(MONITORED_TARGET), '{:.2f}x'.format(
                    ratio(monitored['cpu_s'], unmonitored['cpu_s'])),
                ratio(monitored['cpu_s'], unmonitored['cpu_s']) <=
                MONITORED_TARGET),
        Verdict('monitored update-status sysfs files within {}x of the '
                'unmonitored'.format(MONITORED_TARGET),
                '{} / {} = {:.2f}x'.format(files[0], files[1],
                                           ratio(*files)),
                ratio(*files) <= MONITORED_TARGET)]


def verdict_lines(found: Sequence[Verdict]) -> str:
    return '\n'.join('{} {}: {}'.format('MET   ' if verdict.met else
                                        'MISSED', verdict.target,
                                        verdict.measured)
                     for verdict in found)
