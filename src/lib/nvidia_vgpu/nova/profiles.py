"""vGPU profile names in vgpu-device-mappings, turned into each host's ids.

Operators choose vGPUs by NVIDIA's profile names (V100-8Q, A40-2Q,
A100D-1-10C); Nova and sysfs know only the driver's type ids
(nvidia-108), which differ from GPU model to GPU model. So a profile name
is resolved on each host, per device, from what its running driver
reports: the `name` of each mdev type, or on NVIDIA's vendor-specific
VFIO driver the names in each VF's creatable_vgpu_types. Nothing is
guessed: before the driver runs a name cannot be resolved, and nothing is
published for it.

One value serves hosts with different GPUs: an address may carry several
profile names (an A40 on some hosts, a V100 at the same address on
others) and each GPU takes the one it offers. A name that none of the
GPUs it names here offers, where each of them took another name, is only
reported; a GPU that offers none of the names it was given is a problem
whose message lists the names it has.

Pure functions: data in, data out.
"""
from typing import (Collection, Dict, Iterable, List, Mapping, Optional,
                    Set, Tuple)

from nvidia_vgpu.model import HostGpu
from nvidia_vgpu.names import (
    SELECTOR, frame_buffer_gb, gi_profile_of, is_profile, profile_of,
    type_order)
from nvidia_vgpu.nova.mappings import HostMappings, Mappings
from nvidia_vgpu import model

# device -> {type id: the driver's name for it, e.g. "GRID V100-8Q"}
Offered = Mapping[str, Mapping[str, str]]
# Why a GPU takes one time-sliced size (NVIDIA's default equal-size
# mode: once a vGPU of one size exists, every VF offers no other), and
# the way out; said where two sizes land on one GPU: by its address, its
# driver does not mix sizes; by a selector, sizes are never mixed.
ONE_SIZE = ('a GPU holds one vGPU size unless its driver mixes sizes '
            '(NVIDIA\'s mixed-size mode), which this GPU\'s does not say it '
            'does (list-vgpu-types): give it one size')
ONE_SIZE_BY_SELECTOR = ('sizes are mixed only on a GPU named by its address '
                        'or its VFs, not by a selector (one value for a '
                        'fleet): give the selector one size, or name the '
                        'GPUs by address')


def named(wanted: Mappings) -> bool:
    """Whether the mappings use profile names (their names must be read)."""
    return any(is_profile(key) for key in wanted)


def _names(target: str, gpus: Mapping[str, HostGpu],
           offered: Optional[Offered]) -> Optional[Dict[str, str]]:
    """{type id: driver name} of the device(s) a mapping entry names:
    a GPU, or for an SR-IOV GPU its VFs, or one VF. None while they
    cannot be read (no driver, or no VFs yet)."""
    if offered is None:
        return None
    gpu = gpus.get(target)
    devices: Tuple[str, ...] = (target,)
    if gpu is not None and gpu.sriov:
        if not gpu.virtual_functions:
            return None
        # Each VF of the vendor-specific VFIO driver lists only what it
        # can still take; together they name every type of the GPU.
        devices = (target,) + gpu.virtual_functions
    table: Dict[str, str] = {}
    for device in devices:
        table.update(offered.get(device, {}))
    return table


def _offered_profiles(table: Mapping[str, str]) -> Dict[str, Set[str]]:
    ids: Dict[str, Set[str]] = {}
    for type_id, name in table.items():
        profile = profile_of(name)
        if profile:
            ids.setdefault(profile, set()).add(type_id)
    return ids


def _choices(ids: Mapping[str, Collection[str]]) -> str:
    """A GPU's profile names in the driver's order (that of list-vgpu-
    types), for a message."""
    order = sorted(ids, key=lambda name: min(
        type_order(type_id) for type_id in ids[name]))
    return ', '.join(order) or 'none'


def resolve(wanted: Mappings, gpus: Iterable[HostGpu],
            offered: Optional[Offered],
            mig_gpus: Collection[str] = (),
            vfio_mig: Mapping[str, model.MigGpu] = {},
            mixed_gpus: Collection[str] = ()) -> model.Resolution:
    """Profile-name keys rewritten into this host's type ids, per device.

    wanted: the parsed option (type ids and profile names as keys).
    offered: what each device offers, with the driver's names; None while
    the driver does not run. Type-id keys pass through unchanged.
    mig_gpus: the GPUs in MIG mode, where every MIG-backed name they
    offer is taken, each on VFs of its own (capacity.share_mig_gpus);
    vfio_mig: those on the vendor-specific VFIO driver, as nvidia-smi
    reports them (their VFs list a size's names only while it has a free
    GPU instance); mixed_gpus: GPUs whose driver mixes time-sliced sizes,
    where each size named is taken (nova/mixed_sizes.py splits the VFs).
    """
    profiles = [key for key in wanted if is_profile(key)]
    if not profiles:
        return model.Resolution(dict(wanted))
    by_address = {gpu.address: gpu for gpu in gpus}
    given, absent, unmatched = _targets(wanted, profiles, by_address)
    chosen, unresolved, waiting, problems = _choose(
        given, by_address, offered, mig_gpus, vfio_mig, mixed_gpus)
    out, resolved = _rewritten(wanted, profiles, by_address, chosen)
    unoffered = [profile for profile in profiles
                 if profile not in resolved and profile not in unresolved
                 and any(profile in names for names in given.values())]
    return model.Resolution(
        {type_id: sorted(out[type_id])
         for type_id in sorted(out, key=type_order)},
        {profile: sorted(ids, key=type_order)
         for profile, ids in sorted(resolved.items())},
        sorted(unresolved), unoffered, problems, sorted(absent),
        sorted(unmatched), waiting)


def _targets(wanted: Mappings, profiles: List[str],
             by_address: Mapping[str, HostGpu]
             ) -> Tuple[Dict[str, Dict[str, List[str]]], Set[str], Set[str]]:
    """Device an entry names -> {profile: the entries that name it
    there}; the addresses that are no GPU here; the selectors matching
    none."""
    parents = {vf for gpu in by_address.values()
               for vf in gpu.virtual_functions}
    given: Dict[str, Dict[str, List[str]]] = {}
    absent: Set[str] = set()
    unmatched: Set[str] = set()
    for profile in profiles:
        for entry in wanted[profile]:
            if SELECTOR.fullmatch(entry):
                targets = [gpu.address for gpu in by_address.values()
                           if gpu.matches(entry)]
                if not targets:
                    unmatched.add(entry)
            elif entry in by_address or entry in parents:
                targets = [entry]
            else:
                absent.add(entry)
                targets = []
            for target in targets:
                given.setdefault(target, {}).setdefault(
                    profile, []).append(entry)
    return given, absent, unmatched


def _choose(given: Dict[str, Dict[str, List[str]]],
            by_address: Mapping[str, HostGpu], offered: Optional[Offered],
            mig_gpus: Collection[str], vfio_mig: Mapping[str, model.MigGpu],
            mixed_gpus: Collection[str] = ()
            ) -> Tuple[Dict[str, Dict[str, str]], Set[str], List[str],
                       List[str]]:
    """Each named device's {profile: type id} (one, but on a GPU in MIG
    mode every MIG-backed one it offers, and on a GPU that mixes sizes
    every size named); the profiles waiting for the
    driver; the SR-IOV GPUs whose VFs are not there yet; problems."""
    chosen: Dict[str, Dict[str, str]] = {}
    unresolved: Set[str] = set()
    waiting: List[str] = []
    problems: List[str] = []
    for target in sorted(given):
        names = given[target]
        table = _names(target, by_address, offered)
        if table is None:
            unresolved.update(names)
            if offered is not None:
                waiting.append(target)
            continue
        ids = _offered_profiles(table)
        hits = sorted(profile for profile in names if profile in ids)
        if not hits and _sizes_without_instances(
                vfio_mig.get(target), names):
            continue
        together = (target in mig_gpus and _mig_backed(hits)) or (
            target in mixed_gpus and _sizes_differ(hits))
        problem = _problem(target, names, ids, hits, together,
                           by_address.get(target))
        if problem:
            problems.append(problem)
        else:
            chosen[target] = {hit: next(iter(ids[hit])) for hit in hits}
    return chosen, unresolved, waiting, problems


def _sizes_without_instances(gpu: Optional[model.MigGpu],
                             names: Iterable[str]) -> bool:
    """Whether these are MIG-backed names whose sizes have no GPU
    instance on this GPU in MIG mode on the vendor-specific VFIO driver:
    there a VF lists a MIG-backed type only while an instance of its
    size is free, so the driver names none of them, which is no wrong
    name (the plan says why: nova/plan.py, _unnamed_without_instances).
    Elsewhere a name not listed is refused."""
    if gpu is None:
        return False
    sizes = [gi_profile_of(name) for name in names]
    return all(size is not None and gpu.instances_of(size) == 0
               for size in sizes)


def _sizes_differ(hits: List[str]) -> bool:
    """Whether time-sliced profile names ask for different frame buffer
    sizes (L40S-1Q, L40S-2Q)."""
    sizes = {frame_buffer_gb(hit) for hit in hits}
    return None not in sizes and len(sizes) > 1


def _mig_backed(hits: List[str]) -> bool:
    """Whether all the names are MIG-backed (they may share a GPU in MIG
    mode, each on VFs of its own)."""
    return all(gi_profile_of(hit) for hit in hits)


def _problem(target: str, names: Dict[str, List[str]],
             ids: Dict[str, Set[str]], hits: List[str],
             together: bool, gpu: Optional[HostGpu] = None) -> Optional[str]:
    """Why the profile names given a device do not name one type there
    (together: MIG-backed names on a GPU in MIG mode, or sizes on a GPU
    that mixes them, one type each; gpu: the GPU at that address, where
    one is)."""
    through = sorted({entry for entries in names.values()
                      for entry in entries if entry != target})
    via = ' (through {})'.format(', '.join(through)) if through else ''
    if len(hits) > 1 and not together:
        if gpu is not None and gpu.sriov and _sizes_differ(hits):
            return 'the GPU at {}{} offers both {}, two sizes; {}'.format(
                target, via, ' and '.join(hits),
                ONE_SIZE_BY_SELECTOR if through else ONE_SIZE)
        return ('the GPU at {}{} offers both {}; a device offers one '
                'type: give it one of them{}'.format(
                    target, via, ' and '.join(hits),
                    ', or cut the GPU into GPU instances with mig-layout '
                    '(MIG-backed types share a GPU in MIG mode)'
                    if _mig_backed(hits) else ''))
    if not hits:
        return ('{} {} offered by the GPU at {}{} (it offers: {}); see the '
                'list-vgpu-types action'.format(
                    ', '.join(sorted(names)),
                    'is not' if len(names) == 1 else 'are not',
                    target, via, _choices(ids)))
    for hit in hits:
        if len(ids[hit]) > 1:
            return ('{} names {} on the GPU at {}; give the type id '
                    'instead'.format(hit, ' and '.join(
                        sorted(ids[hit], key=type_order)), target))
    return None


def _rewritten(wanted: Mappings, profiles: List[str],
               by_address: Mapping[str, HostGpu],
               chosen: Dict[str, Dict[str, str]]
               ) -> Tuple[Dict[str, Set[str]], Dict[str, Set[str]]]:
    """The mappings with type ids for profile names, and the ids each
    profile names here."""
    out: Dict[str, Set[str]] = {key: set(entries)
                                for key, entries in wanted.items()
                                if not is_profile(key)}
    resolved: Dict[str, Set[str]] = {}
    for profile in profiles:
        for entry in wanted[profile]:
            targets = ([address for address, gpu in by_address.items()
                        if gpu.matches(entry)]
                       if SELECTOR.fullmatch(entry) else [entry])
            here = {target: chosen[target][profile] for target in targets
                    if profile in chosen.get(target, {})}
            if not here:
                continue
            resolved.setdefault(profile, set()).update(here.values())
            if len(here) == len(targets) and len(set(here.values())) == 1:
                # The selector stays: the status names what it matched.
                out.setdefault(next(iter(here.values())), set()).add(entry)
            else:
                for target, type_id in here.items():
                    out.setdefault(type_id, set()).add(target)
    return out, resolved


def merged(resolution: model.Resolution, host: HostMappings) -> HostMappings:
    """for_host's account of the resolved mappings, with what the profile
    names' entries found (or did not find) on this host added."""
    return host._replace(
        problems=resolution.problems + host.problems,
        absent=sorted(set(host.absent) | set(resolution.absent)),
        waiting=sorted(set(host.waiting) | set(resolution.waiting)),
        unmatched=sorted(set(host.unmatched) | set(resolution.unmatched)))


def summary(resolution: Optional[model.Resolution]) -> List[str]:
    """Status phrases: what each profile name is on this host, and the
    names no GPU here offers."""
    if resolution is None:
        return []
    phrases = ['{} is {}'.format(profile, ', '.join(ids))
               for profile, ids in resolution.resolved.items()]
    if resolution.unoffered:
        phrases.append('no GPU here offers ' +
                       ', '.join(resolution.unoffered))
    return phrases
