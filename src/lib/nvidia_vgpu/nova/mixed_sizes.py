"""Several time-sliced sizes on one GPU: NVIDIA's mixed-size mode.

In the default equal-size mode a GPU holds vGPUs of one frame buffer
size. In mixed-size mode (where the driver reports "Heterogeneous
Time-Slice Sizes: Supported") vGPUs of several sizes share it, each at a
placement: a start in the GPU's placement region, one of the type's
supported placement IDs, taking its placement size (NVIDIA's vGPU User
Guide, "Mixed-Size Mode"; docs/facts/mixed-size.md).

The vGPU Manager chooses a vGPU's placement when its VM starts, unless
`vgpu-placement-id` was written to the vGPU's nvidia/vgpu_params first,
and its choice can leave no room for a size Nova was promised. So the
charm fixes one placement for every VF it gives Nova, and makes the vGPU
there itself before Nova asks (apply/mixed_sizes.py): Nova takes a vGPU
that exists, unassigned, on the VF Placement allocated
(LibvirtDriver._allocate_mdevs), and never removes one.

Pure: which VF takes which type at which placement, from the GPU's VFs,
the types asked, their placements, and the placements of the vGPUs that
exist already (guests come first: those never move).
"""
from typing import (Collection, Dict, Iterable, List, Mapping, Optional,
                    Sequence, Tuple)

from nvidia_vgpu import model, names
from nvidia_vgpu.model import Mappings, MixedGpu, Placed, Placements

# Placements tried before a request is called one that does not fit:
# NVIDIA's tables have at most 48 IDs per type, and a plan is searched
# once per hook.
SEARCH_BUDGET = 5000


def region(table: Mapping[str, Placements]) -> int:
    """The GPU's placement region: as far as any placement reaches."""
    return max((start + found.size for found in table.values()
                for start in found.ids), default=0)


def _largest_first(types: Sequence[str],
                   table: Mapping[str, Placements]) -> List[str]:
    return sorted(types, key=lambda vgpu_type: (
        -table[vgpu_type].size, names.type_order(vgpu_type)))


def _span(table: Mapping[str, Placements], vgpu_type: str,
          start: int) -> range:
    return range(start, start + table[vgpu_type].size)


def _occupied(kept: Placed, table: Mapping[str, Placements]) -> set:
    return {slot for vgpu_type, start in kept.values()
            for slot in _span(table, vgpu_type, start)}


def even_split(vfs: Sequence[str], types: Sequence[str],
               table: Mapping[str, Placements], kept: Placed) -> Placed:
    """Each VF's type and placement where the GPU's own address names
    several sizes: each size an even share of the placement region (the
    largest the first share), with as many vGPUs as its placements that
    lie wholly inside its share. VFs whose vGPUs exist keep theirs; the
    other placements go to the other VFs in address order."""
    shares = _largest_first(types, table)
    whole = region(table)
    slots: List[Tuple[str, int]] = []
    for index, vgpu_type in enumerate(shares):
        low = whole * index // len(shares)
        high = whole * (index + 1) // len(shares)
        slots += [(vgpu_type, start) for start in table[vgpu_type].ids
                  if low <= start and start + table[vgpu_type].size <= high]
    taken = _occupied(kept, table)
    placed = dict(kept)
    free_vfs = [vf for vf in sorted(vfs) if vf not in kept]
    for vgpu_type, start in slots:
        if not free_vfs:
            break
        if taken.intersection(_span(table, vgpu_type, start)):
            continue
        taken.update(_span(table, vgpu_type, start))
        placed[free_vfs.pop(0)] = (vgpu_type, start)
    return placed


def place(wanted: Mapping[str, Sequence[str]],
          table: Mapping[str, Placements], kept: Placed
          ) -> Optional[Placed]:
    """Each VF's placement where the operator gave each size its own VFs
    (type -> VFs): those of vGPUs that exist kept, the rest searched,
    largest size first; None where they cannot all fit."""
    requests = [(vf, vgpu_type)
                for vgpu_type in _largest_first(list(wanted), table)
                for vf in sorted(wanted[vgpu_type]) if vf not in kept]
    budget = [SEARCH_BUDGET]
    found = _search(requests, table, _occupied(kept, table), budget)
    if found is None:
        return None
    placed = dict(kept)
    placed.update(found)
    return placed


def _search(requests: List[Tuple[str, str]],
            table: Mapping[str, Placements], taken: set,
            budget: List[int]) -> Optional[Placed]:
    """A placement for each (VF, type), none overlapping another or
    `taken`; depth first, lowest IDs first, within the budget."""
    if not requests:
        return {}
    (vf, vgpu_type), rest = requests[0], requests[1:]
    for start in table[vgpu_type].ids:
        span = set(_span(table, vgpu_type, start))
        if span & taken:
            continue
        budget[0] -= 1
        if budget[0] < 0:
            return None
        found = _search(rest, table, taken | span, budget)
        if found is not None:
            found[vf] = (vgpu_type, start)
            return found
    return None


def most_beside(wanted: Mapping[str, Sequence[str]],
                table: Mapping[str, Placements], kept: Placed
                ) -> Dict[str, int]:
    """How many of each type fit on the GPU in mixed-size mode beside all
    the others asked (what a refusal names): for each type, the most of
    it that place() fits with every other type's VFs as asked."""
    most: Dict[str, int] = {}
    for vgpu_type, vfs in wanted.items():
        count = len(vfs)
        while count > 0:
            fewer = dict(wanted)
            fewer[vgpu_type] = list(vfs)[:count]
            if place(fewer, table, kept) is not None:
                break
            count -= 1
        most[vgpu_type] = count
    return most


# ---- the GPUs of a hook's snapshot ---------------------------------------

def named_twice(snapshot: model.HostSnapshot, wanted: Mappings,
                mig_gpus: Collection[str]) -> List[str]:
    """The GPUs (mdev path, VFs enabled, not in MIG mode) that the
    mappings name by their own address or their VFs under two or more
    types: only these may be mixed, and only for these is nvidia-smi
    asked what mixed-size mode allows. A selector names GPUs of a model
    fleet-wide, and stays one type per GPU."""
    found = []
    for gpu in snapshot.gpus:
        if gpu.vendor_vfio or not gpu.virtual_functions or \
                gpu.address in mig_gpus:
            continue
        own = {gpu.address, *gpu.virtual_functions}
        if sum(1 for entries in wanted.values() if own & set(entries)) > 1:
            found.append(gpu.address)
    return found


def mixable(snapshot: model.HostSnapshot, gpus: Iterable[str]
            ) -> List[str]:
    """Of these GPUs, those whose driver supports mixed sizes and lists
    placements."""
    return [address for address in gpus
            if address in snapshot.mixed_size and
            snapshot.mixed_size[address].supported and
            snapshot.mixed_size[address].placements]


def _kept(snapshot: model.HostSnapshot, gpu: model.HostGpu) -> Placed:
    """The placements the charm gave the GPU's vGPUs that exist now (of
    the type it gave them)."""
    recorded = snapshot.recorded_placements.get(gpu.address, {})
    on_vfs = {(mdev.parent, mdev.type_id) for mdev in snapshot.mdevs
              if mdev.parent in gpu.virtual_functions}
    return {vf: place for vf, place in recorded.items()
            if (vf, place[0]) in on_vfs}


def split_addresses(snapshot: model.HostSnapshot, wanted: Mappings,
                    gpus: Collection[str]
                    ) -> Tuple[Mappings, Dict[str, MixedGpu]]:
    """The mappings with each of these GPUs' own address, named under
    several types, replaced by its VFs as even_split gives them out."""
    out = {vgpu_type: list(entries) for vgpu_type, entries in wanted.items()}
    planned: Dict[str, MixedGpu] = {}
    for gpu in snapshot.gpus:
        types = [t for t, entries in wanted.items() if gpu.address in entries]
        table = snapshot.mixed_size[gpu.address].placements \
            if gpu.address in gpus else {}
        if len(types) < 2 or not all(t in table for t in types):
            continue
        placed = even_split(gpu.virtual_functions, types, table,
                            _kept(snapshot, gpu))
        planned[gpu.address] = MixedGpu(gpu.address, placed)
        for vgpu_type in types:
            out[vgpu_type].remove(gpu.address)
            out[vgpu_type] += sorted(vf for vf, (given, _) in placed.items()
                                     if given == vgpu_type)
    return {t: entries for t, entries in out.items() if entries}, planned


def plan_vfs(snapshot: model.HostSnapshot, host_mappings: Mappings,
             address: str) -> Tuple[Optional[MixedGpu], Optional[str]]:
    """A mixable GPU whose sizes the mappings give VFs of their own: its
    plan, or why they do not fit (with how many of each would)."""
    gpu = next(gpu for gpu in snapshot.gpus if gpu.address == address)
    table = snapshot.mixed_size[address].placements
    wanted = {vgpu_type: [vf for vf in devices
                          if vf in gpu.virtual_functions]
              for vgpu_type, devices in host_mappings.items()}
    wanted = {vgpu_type: vfs for vgpu_type, vfs in wanted.items() if vfs}
    missing = sorted(t for t in wanted if t not in table)
    if missing:
        return None, ('the driver lists no mixed-size placements for {} '
                      'on {}; give the GPU one size'.format(', '.join(
                          _shown(snapshot, gpu, t) for t in missing),
                          address))
    kept = {vf: place for vf, place in _kept(snapshot, gpu).items()
            if vf in wanted.get(place[0], ())}
    placed = place(wanted, table, kept)
    if placed is not None:
        return MixedGpu(address, placed), None
    most = most_beside(wanted, table, kept)
    return None, ('{} in mixed-size mode cannot hold {}, their placements '
                  'overlap: with the other sizes as given it holds at most '
                  '{}; list fewer VFs, or name the GPU by its address under '
                  'each size for an even share'.format(
                      address, _counted(snapshot, gpu, {
                          t: len(vfs) for t, vfs in wanted.items()}),
                      _counted(snapshot, gpu, most)))


def _shown(snapshot: model.HostSnapshot, gpu: model.HostGpu,
           vgpu_type: str) -> str:
    """A type as the operator wrote it: its profile name where the
    driver names it on the GPU's VFs, else its id."""
    for vf in gpu.virtual_functions:
        name = (snapshot.offered or {}).get(vf, {}).get(vgpu_type)
        if name:
            return names.profile_of(name) or vgpu_type
    return vgpu_type


def _counted(snapshot: model.HostSnapshot, gpu: model.HostGpu,
             counts: Mapping[str, int]) -> str:
    return ' and '.join('{} {}'.format(count, _shown(snapshot, gpu, t))
                        for t, count in sorted(
                            counts.items(),
                            key=lambda item: names.type_order(item[0])))


def work(snapshot: model.HostSnapshot,
         mixed: Mapping[str, model.MixedGpu]) -> model.MixedWork:
    """What the hook does so the GPUs that mix sizes hold what Nova is
    given, and those that no longer do go back to equal-size mode (a GPU
    whose mode changes holds no guest's vGPU: nova/plan.py waits
    otherwise). vGPUs no guest uses go where they are in the way: all of
    them on a GPU whose mode changes, else those not of their VF's
    planned type; then each planned VF without a vGPU gets one at its
    placement, and an unused one whose placement changed is placed."""
    to_set, to_unset = pending(snapshot, mixed), leaving(snapshot, mixed)
    remove: List[str] = []
    create: List[Tuple[str, str, int]] = []
    place: List[Tuple[str, int]] = []
    for gpu in snapshot.gpus:
        if gpu.address not in mixed and gpu.address not in to_unset:
            continue
        changing = gpu.address in to_set or gpu.address in to_unset
        planned = mixed[gpu.address].placed if gpu.address in mixed else {}
        recorded = snapshot.recorded_placements.get(gpu.address, {})
        on_vf = {mdev.parent: mdev for mdev in snapshot.mdevs
                 if mdev.parent in gpu.virtual_functions}
        for vf, mdev in sorted(on_vf.items()):
            wanted = planned.get(vf)
            if mdev.uuid in snapshot.mdev_users:
                continue
            if changing or wanted is None or wanted[0] != mdev.type_id:
                remove.append(mdev.uuid)
            elif recorded.get(vf) != wanted:
                place.append((mdev.uuid, wanted[1]))
        create += [(vf, vgpu_type, start)
                   for vf, (vgpu_type, start) in sorted(planned.items())
                   if vf not in on_vf or on_vf[vf].uuid in remove]
    return model.MixedWork(tuple(sorted(remove)), tuple(to_set),
                           tuple(to_unset), tuple(create), tuple(place))


def leaving(snapshot: model.HostSnapshot,
            mixed: Mapping[str, model.MixedGpu]) -> List[str]:
    """The GPUs the charm put in mixed-size mode that no longer mix sizes
    and are still in it (until a reboot): there a size holds fewer vGPUs
    than in equal-size mode, so the mode goes once no guest's vGPU is on
    the GPU (nova/plan.py waits for them)."""
    return [gpu for gpu in sorted(snapshot.recorded_placements)
            if gpu not in mixed and gpu in snapshot.mixed_size and
            snapshot.mixed_size[gpu].enabled]


def pending(snapshot: model.HostSnapshot,
            mixed: Mapping[str, model.MixedGpu]) -> List[str]:
    """The GPUs that mix sizes but are not in mixed-size mode now: Nova
    is not given their sizes until they are."""
    return [gpu for gpu in sorted(mixed)
            if not snapshot.mixed_size[gpu].enabled]


def unsettled(snapshot: model.HostSnapshot,
              mixed: Mapping[str, model.MixedGpu]) -> List[str]:
    """The GPUs whose mode is not yet what the plan needs (pending, or
    leaving): Nova is given nothing new until it is."""
    return sorted(pending(snapshot, mixed) + leaving(snapshot, mixed))


def boot_record(snapshot: model.HostSnapshot,
                mixed: Mapping[str, model.MixedGpu]
                ) -> Dict[str, Dict[str, List[object]]]:
    """What the restore unit reads: each GPU that mixes sizes with its
    VFs' types and placements; one leaving mixed-size mode with none,
    so that the next hook still knows to take it out (a reboot does)."""
    record: Dict[str, Dict[str, List[object]]] = {
        gpu: {vf: list(place) for vf, place in planned.placed.items()}
        for gpu, planned in mixed.items()}
    record.update({gpu: {} for gpu in leaving(snapshot, mixed)})
    return record
