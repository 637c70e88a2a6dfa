"""How the charm names guests to an operator, and what frees their vGPUs.

Every room that waits for guests says so in the same words: Nova's
retypes (nova/), MIG changes (mig/), a series upgrade (driver/), the
vGPU Manager's stops (nova/guest_safety.py). Those rooms are layered
(nova above mig and driver), so the words live below them all, here,
rather than in one of them. Pure; imports nothing of the charm.
"""
from typing import Sequence

# How many guest names a status line spells out before "and N more".
NAMED_GUESTS = 3
# What frees a guest's vGPU for a vGPU Manager stop or a driver
# replacement (status lines and action failures name them).
STOP_FREES = 'stop, migrate, resize, shelve-offload or delete'
# What frees it for a retype: a stopped guest keeps its vGPU.
RETYPE_FREES = ('migrate, resize, shelve-offload or delete them; a stopped '
                'guest keeps its vGPU')


def named(guests: Sequence[str]) -> str:
    """'instance-1, instance-2 and 3 more': short enough for a status."""
    shown = ', '.join(guests[:NAMED_GUESTS])
    more = len(guests) - NAMED_GUESTS
    return shown + (' and {} more'.format(more) if more > 0 else '')
