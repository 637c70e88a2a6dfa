"""GPU instances wanted against those a GPU has, by profile name, and
where each one to make starts.

A GPU instance occupies memory slices at one of the placements its
profile allows (`nvidia-smi mig -lgipp`: NVML's possible placements),
and creating one fails where it would overlap one that exists. NVIDIA
does not document where its driver puts an instance asked for without
a placement, so whether a layout asked for in some order comes up whole
would rest on the driver's choice (on an 80 GB A100 or H100, a 3g.40gb
put at 0 leaves room for three 1g.10gb, not four). place() computes a
start for each instance instead: an exact search, as a GPU has at most
8 memory slices and 7 instances.

Standard library only: the boot program (driver/mig_boot.py) uses it
under the host's python3, as the plan and the health check do.
"""
import itertools
import re
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from nvidia_vgpu import model

# (first memory slice, memory slices) of an instance
Span = Tuple[int, int]
# start:size, as mig -lgi prints a GPU instance's placement
SPAN = re.compile(r'([0-9]{1,2}):([0-9]{1,2})', re.ASCII)


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


def span(placement: str) -> Optional[Span]:
    """An instance's placement as `mig -lgi` prints it ('4:4': start and
    size in memory slices); None where it is not in that form."""
    found = SPAN.fullmatch(placement.strip())
    return (int(found.group(1)), int(found.group(2))) if found else None


def placeable(profiles: Sequence[model.GiProfile],
              wanted: Sequence[str]) -> bool:
    """Whether the GPU lists placements for every profile wanted (a
    driver without -lgipp lists none: the driver then places them)."""
    listed = {profile.name for profile in profiles
              if profile.starts and profile.size > 0}
    return all(name in listed for name in wanted)


def place(wanted: Sequence[str], profiles: Sequence[model.GiProfile],
          taken: Sequence[Span] = ()
          ) -> Optional[Tuple[model.GiPlacement, ...]]:
    """Where each of these GPU instances (profile names, all of them
    placeable) starts, in the order given, none overlapping another or
    those taken; None where no such choice exists. Of the choices, the
    one that puts the largest instances first at their lowest starts."""
    by_name = {profile.name: profile for profile in profiles}
    order = sorted(range(len(wanted)), key=lambda index: (
        -by_name[wanted[index]].size, len(by_name[wanted[index]].starts),
        wanted[index], index))
    used = 0
    for start, size in taken:
        used |= _mask(start, size)
    starts = _search([by_name[wanted[index]] for index in order], used, -1)
    if starts is None:
        return None
    chosen = dict(zip(order, starts))
    return tuple(model.GiPlacement(name, by_name[name].id, chosen[index])
                 for index, name in enumerate(wanted))


def _mask(start: int, size: int) -> int:
    return ((1 << size) - 1) << start


def _search(todo: Sequence[model.GiProfile], used: int,
            after: int) -> Optional[List[int]]:
    """Starts for todo's instances, in its order, beside the memory
    slices used; an instance of the same profile as the one before it
    starts after that one's start (`after`), so that no arrangement is
    tried twice."""
    if not todo:
        return []
    profile, rest = todo[0], todo[1:]
    for start in sorted(profile.starts):
        mask = _mask(start, profile.size)
        if start <= after or used & mask:
            continue
        follows = rest[0].name == profile.name if rest else False
        found = _search(rest, used | mask, start if follows else -1)
        if found is not None:
            return [start] + found
    return None


def to_make(wanted: Sequence[str], gpu: model.MigGpu, keep: bool = True
            ) -> Optional[Tuple[model.GiPlacement, ...]]:
    """The GPU instances to make so that this GPU has those wanted: the
    missing ones beside the GPU's own (keep), or all of them on the GPU
    emptied. Each starts where place() puts it where the GPU lists its
    placements; elsewhere where the driver chooses, as before -lgipp.
    None where they cannot all be placed, or, keeping, the GPU has
    instances the layout does not."""
    existing = gpu.instances if keep else ()
    missing, extra = compare(wanted, [gi.profile for gi in existing])
    if extra:
        return None
    spans = [span(gi.placement) for gi in existing]
    taken = [one for one in spans if one is not None]
    if not placeable(gpu.profiles, missing) or len(taken) != len(spans):
        ids = {profile.name: profile.id for profile in gpu.profiles}
        return tuple(model.GiPlacement(name, ids.get(name))
                     for name in missing)
    return place(missing, gpu.profiles, taken)


def largest_that_fit(counts: Mapping[str, int],
                     profiles: Sequence[model.GiProfile]
                     ) -> List[Dict[str, int]]:
    """What an empty GPU holds of these counts per profile (all of them
    placeable): each combination of no more of each than asked that
    can be placed, and to which no instance more of them can be added;
    the most compute slices first, then the most of the largest
    profile."""
    size = {profile.name: profile.size for profile in profiles}
    names = sorted(counts, key=lambda name: (
        -_compute_slices(name), -size.get(name, 0), name))
    fitting = []
    for numbers in itertools.product(*(range(counts[name] + 1)
                                       for name in names)):
        chosen = [name for name, number in zip(names, numbers)
                  for _ in range(number)]
        if chosen and place(chosen, profiles) is not None:
            fitting.append(numbers)
    largest = [numbers for numbers in fitting if not any(
        other != numbers and all(o >= n for o, n in zip(other, numbers))
        for other in fitting)]
    found = [{name: number for name, number in zip(names, numbers)
              if number} for numbers in largest]
    return sorted(found, key=lambda combination: (
        -sum(_compute_slices(name) * number
             for name, number in combination.items()),
        [-combination.get(name, 0) for name in names]))


def _compute_slices(profile: str) -> int:
    """1g.10gb: 1 (the leading count of a profile's name)."""
    return int(profile.split('g.', 1)[0])
