"""GPU instances wanted against those a GPU has, by profile name.

Standard library only: the boot program (driver/mig_boot.py) uses it
under the host's python3, as the plan and the health check do.
"""
from typing import List, Sequence, Tuple


def compare(wanted: Sequence[str],
            have: Sequence[str]) -> Tuple[List[str], List[str]]:
    """(missing, extra): the wanted profiles the GPU lacks, in the
    wanted order, and those it has beyond them, each counted as often as
    it occurs."""
    missing = list(wanted)
    extra = []
    for profile in have:
        if profile in missing:
            missing.remove(profile)
        else:
            extra.append(profile)
    return missing, extra
