"""A series upgrade under running guests.

charms.openstack prepares a series upgrade (pre-series-upgrade) by
pausing the unit, which stops the vGPU Manager and breaks the vGPU of
every running guest. Where running guests use vGPUs here, the charm
stops nothing and says which guests to stop or move off first, and how.
A shut-off guest holds nothing here: the pause breaks no vGPU of its,
and it finds its vGPU again when it starts after the upgrade's reboot,
as after any reboot (nova/guest_safety.py says why).

Guests are best moved before the prepare: Juju runs nova-compute's
pre-series-upgrade at the same time as this charm's, and that pauses
nova-compute (everything but libvirtd), after which Nova moves nothing
off the host (live migration checks that the source's compute service
is up; resize and cold migration check the instance's host is up), and
a stop or shelve waits in nova-compute's queue. check_message says, before
the prepare, which guests would hold it; once held, the status gives
only ways out that work with nova-compute paused: shut the guest down on
the host through libvirt (which keeps running), or resume nova-compute
for the move (its resume action reports a failure while the machine is
prepared, but starts nova-compute: unit_tests/data/
charm_nova_compute_operations.json, resume-while-prepared) and pause it
again.

Juju names the target Ubuntu release in the pre-series-upgrade hook:
JUJU_TARGET_BASE (Juju 3, `ubuntu@24.04`) or JUJU_TARGET_SERIES (Juju
2.9, `noble`).

Pure functions.
"""
from typing import Mapping, Optional, Sequence, Tuple

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
    vGPUs: what works with nova-compute paused by its own prepare."""
    one = len(guests) == 1
    return (
        'Series upgrade{} prepared without stopping the vGPU Manager: {} '
        '{} vGPUs here ({}). nova-compute is paused for the upgrade, so '
        'Nova cannot move {}: shut {} down on this host (sudo virsh '
        'shutdown <name>), or resume nova-compute, move {}, and pause '
        'nova-compute again'.format(
            ' to ' + to if to else '', len(guests),
            'running guest uses' if one else 'running guests use',
            guest_words.named(guests), 'it' if one else 'them',
            'it' if one else 'them', 'it' if one else 'them'))


def check_message(running: Sequence[str], stopped: Sequence[str]
                  ) -> Tuple[bool, str]:
    """Before the prepare: whether it would stop the vGPU Manager at once
    (no running guest uses a vGPU here), and what to do first."""
    kept = (' {} shut-off {} {} vGPUs here and {} them after the '
            "upgrade's reboot, where the new release's driver offers "
            'the same types ({}).'.format(
                len(stopped), 'guest' if len(stopped) == 1 else 'guests',
                'keeps its' if len(stopped) == 1 else 'keep their',
                'gets' if len(stopped) == 1 else 'get',
                guest_words.named(stopped)) if stopped else '')
    if not running:
        return True, ('Ready to prepare: no running guest uses a vGPU '
                      'here.' + kept)
    one = len(running) == 1
    return False, (
        '{} {} vGPUs here ({}). Move {} while nova-compute runs: disable '
        'the compute service, then {} (or cold migration, shelve-offload, '
        'resize or delete), or stop {}; then prepare.{}'.format(
            len(running),
            'running guest uses' if one else 'running guests use',
            guest_words.named(running), 'it' if one else 'them',
            MOVE_COMMAND, 'it' if one else 'them', kept))
