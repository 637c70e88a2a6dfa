"""Running guests come first.

Stopping the NVIDIA vGPU Manager (pause, restart-services) breaks every
vGPU a running guest has: such actions are refused while guests use
vGPUs on the host, naming them, unless the operator says force=true.
"""
from typing import Iterable, List, Optional, Sequence, Tuple

# One entry per vGPU in use: (the GPU or VF it lives on, its guests).
InUse = Sequence[Tuple[str, Sequence[str]]]


def refusal(action: str, in_use: InUse) -> Optional[str]:
    """Why this action must not stop the vGPU Manager now, or None."""
    if not in_use:
        return None
    gpus = sorted({parent for parent, _ in in_use})
    guests = sorted({name for _, names in in_use for name in names})
    return (
        'Refusing to {action}: {count} vGPU{s} on {gpus} in use by {who} '
        '({guests}); stopping the vGPU Manager would break them. Stop or '
        'migrate those guests, or run {action} with force=true').format(
            action=action, count=len(in_use),
            s='' if len(in_use) == 1 else 's', gpus=', '.join(gpus),
            who=_guests(guests), guests=', '.join(guests))


def _guests(names: List[str]) -> str:
    return 'guest' if len(names) == 1 else '{} guests'.format(len(names))


def in_use(mdevs: Iterable[Tuple[str, str]],
           users: dict) -> List[Tuple[str, List[str]]]:
    """(parent, guests) of each existing vGPU (uuid, parent) a guest's
    definition uses; users maps an mdev uuid to the guests using it."""
    return [(parent, users[uuid]) for uuid, parent in mdevs if uuid in users]
