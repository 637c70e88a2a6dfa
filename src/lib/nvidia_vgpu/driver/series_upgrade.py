"""A series upgrade under running guests.

charms.openstack prepares a series upgrade (pre-series-upgrade) by
pausing the unit, which stops the vGPU Manager and breaks the vGPU of
every running guest. Where running guests use vGPUs here, the charm
stops nothing and says which guests to stop or move off first, and how.
A shut-off guest holds nothing here: the pause breaks no vGPU of its,
and it finds its vGPU again when it starts after the upgrade's reboot,
as after any reboot (nova/guest_safety.py says why).

Juju names the target Ubuntu release in the pre-series-upgrade hook:
JUJU_TARGET_BASE (Juju 3, `ubuntu@24.04`) or JUJU_TARGET_SERIES (Juju
2.9, `noble`).

Pure functions.
"""
from typing import Mapping, Optional, Sequence

from nvidia_vgpu import guest_words

# The series this charm runs on and their Juju bases, oldest first.
SERIES_BASES = (
    ('bionic', 'ubuntu@18.04'),
    ('focal', 'ubuntu@20.04'),
    ('jammy', 'ubuntu@22.04'),
    ('noble', 'ubuntu@24.04'),
)
TARGET_BASE = 'JUJU_TARGET_BASE'
TARGET_SERIES = 'JUJU_TARGET_SERIES'
MOVE_COMMAND = 'openstack server migrate --live-migration <server>'


def base_of(series: str) -> Optional[str]:
    """'noble' -> 'ubuntu@24.04'; None for a series not listed."""
    return dict(SERIES_BASES).get(series.strip().lower())


def series_of(base: str) -> Optional[str]:
    """'ubuntu@24.04' (or 'ubuntu@24.04/stable') -> 'noble'; None for a
    base not listed."""
    wanted = base.strip().lower().split('/')[0]
    return {b: s for s, b in SERIES_BASES}.get(wanted)


def target(environ: Mapping[str, str]) -> Optional[str]:
    """The release the machine is being upgraded to, as 'noble
    (ubuntu@24.04)', from the hook's environment; the value as Juju gave
    it where it is not a series this charm knows; None without one."""
    base = (environ.get(TARGET_BASE) or '').strip()
    series = (environ.get(TARGET_SERIES) or '').strip()
    if base:
        series = series_of(base) or ''
        return '{} ({})'.format(series, base) if series else base
    if series:
        base = base_of(series) or ''
        return '{} ({})'.format(series, base) if base else series
    return None


def holds_for_guests(running: Sequence[object]) -> bool:
    """Whether the prepare must leave the vGPU Manager running: any vGPU
    a running guest uses here."""
    return bool(running)


def held_message(guests: Sequence[str], to: Optional[str]) -> str:
    """The status while a series upgrade waits for running guests using
    vGPUs."""
    one = len(guests) == 1
    return (
        'Series upgrade{} prepared without stopping the vGPU Manager: {} '
        '{} vGPUs here ({}). Stop {}, or move {} to other hosts, before '
        'upgrading: {} (or cold migration, shelve-offload, resize or '
        'delete)'.format(
            ' to ' + to if to else '', len(guests),
            'running guest uses' if one else 'running guests use',
            guest_words.named(guests), 'it' if one else 'them',
            'it' if one else 'them', MOVE_COMMAND))
