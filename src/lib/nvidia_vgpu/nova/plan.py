"""What nova-compute gets from this host: one pure function of the host
snapshot, the options, what was last published and the release's rules.

Any problem leaves `sections` None, so that what nova-compute already has
stays exactly as it is until the operator fixes the option. Each step
below is one of the rules an operator can read in the docs: profile names
resolve per host, a GPU whose vGPUs are in use keeps its type, an SR-IOV
GPU offers what it can host, per-profile classes only where Nova reads
them. No I/O, no Juju: tested with tables of snapshots.
"""
from typing import Dict, List, Mapping, Optional, Set, Tuple

from nvidia_vgpu import model, names, vgpu_types
from nvidia_vgpu.mig import fits
from nvidia_vgpu.nova import (
    capacity, guest_safety, mappings, mixed_sizes, nova_config, profiles,
    releases, resource_classes, vfio_migration)


class _Refused(Exception):
    """A rule refused the mappings: the plan is this problem."""

    def __init__(self, status: str, message: str,
                 absent: Optional[List[str]] = None,
                 class_refusal: Optional[str] = None) -> None:
        super().__init__(message)
        self.plan = model.NovaPlan(None, (status, message), absent or [],
                                   class_refusal=class_refusal)


def plan_nova(snapshot: model.HostSnapshot, mappings_text: Optional[str],
              class_text: Optional[str], rules: model.NovaRules,
              published: Optional[model.Mappings],
              published_classes: Optional[Dict[str, str]]
              ) -> model.NovaPlan:
    """This host's vGPU settings for nova.conf, checked every way."""
    try:
        wanted = mappings.parse(mappings_text)
        chosen = resource_classes.choice(class_text)
    except (mappings.MappingError,
            resource_classes.ResourceClassError) as error:
        return model.NovaPlan(None, ('blocked', str(error)), [])
    if snapshot.nova_version is None:
        return model.NovaPlan(None, (
            'waiting', 'Waiting for nova-compute to install {}'.format(
                releases.NOVA_PACKAGE)), [])
    try:
        return _plan(snapshot, wanted, chosen, rules, published,
                     published_classes)
    except _Refused as refused:
        return refused.plan


def needs_type_names(mappings_text: Optional[str],
                     class_text: Optional[str]) -> bool:
    """Whether the plan needs the driver's names of the mdev types:
    profile names in the mappings, or per-profile resource classes."""
    try:
        return (profiles.named(mappings.parse(mappings_text)) or
                resource_classes.choice(class_text) ==
                resource_classes.PER_PROFILE)
    except (mappings.MappingError, resource_classes.ResourceClassError):
        return False


def vgpus_in_use(snapshot: model.HostSnapshot) -> List[model.VgpuInUse]:
    """Every vGPU a guest uses on this host now, running or shut off:
    mdevs a guest's definition has, and VFs of the vendor-specific VFIO
    driver with a vGPU type that a guest has as a PCI device."""
    return guest_safety.vgpus_in_use(
        [(mdev.uuid, mdev.parent, mdev.type_id) for mdev in snapshot.mdevs],
        snapshot.mdev_users, snapshot.vf_types_in_use, snapshot.pci_users)


def vgpus_running(snapshot: model.HostSnapshot) -> List[model.VgpuInUse]:
    """The vGPUs running guests use, with only those guests: what waits
    for a vGPU Manager stop or a driver replacement (a retype waits for
    every guest defined with a vGPU: vgpus_in_use)."""
    return guest_safety.running(vgpus_in_use(snapshot),
                                snapshot.running_guests)


def gpu_of(snapshot: model.HostSnapshot) -> Dict[str, str]:
    """Device (a GPU or one of its VFs) -> its physical GPU."""
    return {device: gpu.address for gpu in snapshot.gpus
            for device in (gpu.address,) + gpu.virtual_functions}


def _plan(snapshot: model.HostSnapshot, wanted: model.Mappings, chosen: str,
          rules: model.NovaRules, published: Optional[model.Mappings],
          published_classes: Optional[Dict[str, str]]) -> model.NovaPlan:
    """The rules in the order they apply: names resolve, the host's GPUs
    take their part (refused where wrong here), the release's limits,
    SR-IOV capacity and the guests' holds, the resource classes; a
    refusal raises _Refused."""
    in_use = vgpus_in_use(snapshot)
    resolution, host, mixed = _host_mappings(snapshot, wanted, in_use,
                                             published)
    _check_type_count(host, rules, snapshot.nova_version)
    vfio_devices = {vf for gpu in snapshot.gpus if gpu.vendor_vfio
                    for vf in gpu.virtual_functions}
    mdev_mappings, vfio_mappings = _by_path(host.mappings, vfio_devices)
    _check_vendor_vfio(vfio_mappings, snapshot, rules, host.absent)
    _check_one_type_per_vfio_gpu(vfio_mappings, snapshot, host.absent)
    effective, held, whole_host = _held_for_guests(
        snapshot, host, rules, mdev_mappings, vfio_mappings, in_use,
        published)
    found = _classes(snapshot, chosen, rules, host.absent,
                     *_by_path(effective, vfio_devices))
    # What the driver has not named yet is not published (never
    # guessed), as for profile names.
    effective = {vgpu_type: devices
                 for vgpu_type, devices in effective.items()
                 if vgpu_type not in found.unnamed}
    mdev_mappings, vfio_mappings = _by_path(effective, vfio_devices)
    classes, class_held = resource_classes.hold_for_guests(
        found.classes, published_classes, in_use, vfio_mappings)
    shortfall = _migration_shortfall(snapshot, vfio_mappings)
    live = bool(vfio_mappings) and not shortfall
    resolution, gaps = _unnamed_without_instances(snapshot, wanted,
                                                  resolution)
    return model.NovaPlan(
        _sections(snapshot, rules, mdev_mappings, vfio_mappings, classes,
                  live),
        None, host.absent, waiting=host.waiting,
        host_mappings=effective, vf_types=vfio_mappings,
        selected=host.selected, unmatched=host.unmatched,
        vf_count=sum(len(gpu.virtual_functions) for gpu in snapshot.gpus),
        sriov_capacity=capacity.per_gpu(effective, snapshot.gpus),
        mixed=mixed, mixed_work=mixed_sizes.work(snapshot, mixed),
        held=_wanting_unnamed(held, gaps), held_whole_host=whole_host,
        resolution=resolution, resource_class=chosen, classes={
            vgpu_type: classes[vgpu_type] for vgpu_type in effective},
        unnamed=found.unnamed, class_held=class_held,
        offered=snapshot.offered,
        nova_adds=_nova_adds(snapshot, rules, mdev_mappings),
        live_migratable=live, migration_shortfall=shortfall,
        without_instances=_without_instances(snapshot, host) + gaps)


def _held_for_guests(snapshot: model.HostSnapshot,
                     host: mappings.HostMappings, rules: model.NovaRules,
                     mdev_mappings: model.Mappings,
                     vfio_mappings: model.Mappings,
                     in_use: List[model.VgpuInUse],
                     published: Optional[model.Mappings]
                     ) -> Tuple[model.Mappings, List[model.HeldGpu], bool]:
    """What Nova gets once SR-IOV capacity and guests are respected; the
    GPUs that wait for guests; whether the whole host waits (one type
    per host on this release)."""
    # Each SR-IOV GPU gets only as many VFs as it can host of the type,
    # on every release; no max_instances (capacity.py: why).
    if host.sriov_gpus:   # only they have VFs to choose among
        capacities = _sriov_capacities(host, snapshot)
        occupied = _occupants(snapshot)
        mdev_mappings = capacity.limit_to_capacity(
            capacity.share_mig_gpus(mdev_mappings, list(snapshot.gpus),
                                    capacities, occupied,
                                    mig_mode_gpus(snapshot)),
            list(snapshot.gpus), capacities, occupied)
        typed = {vf: names.type_id(number)
                 for vf, number in snapshot.vf_current_types.items()
                 if number}
        vfio_mappings = capacity.limit_vfio_to_capacity(
            capacity.share_mig_vfio_gpus(
                vfio_mappings, list(snapshot.gpus), capacities, typed,
                mig_mode_gpus(snapshot)),
            list(snapshot.gpus), capacities, typed, mig_mode_gpus(snapshot))
    effective, held = guest_safety.hold_for_guests(
        dict(mdev_mappings, **vfio_mappings), published, in_use,
        gpu_of(snapshot))
    whole_host = bool(held and rules.type_limit is not None and
                      len(effective) > rules.type_limit)
    if whole_host:
        effective = dict(published or {})
    return effective, held, whole_host


def _host_mappings(snapshot: model.HostSnapshot, wanted: model.Mappings,
                   in_use: List[model.VgpuInUse],
                   published: Optional[model.Mappings]
                   ) -> Tuple[model.Resolution, mappings.HostMappings,
                              Dict[str, model.MixedGpu]]:
    """The profile names resolved, the mappings this host can use, and
    the GPUs that mix sizes; refused where they are wrong here, or where
    a GPU's mixed-size mode must change under guests.

    What a GPU whose change waits for guests offers is not judged now:
    its vGPUs' type hides the others until they are gone.
    """
    gpus = list(snapshot.gpus)
    offered = snapshot.offered
    shared = mig_mode_gpus(snapshot)
    named = mixed_sizes.named_twice(snapshot, wanted, shared)
    mixing = mixed_sizes.mixable(snapshot, named)
    resolution = profiles.resolve(wanted, gpus, offered, shared, {
        gpu.address: snapshot.mig[gpu.address] for gpu in gpus
        if gpu.vendor_vfio and gpu.address in shared}, mixing)
    split, mixed = mixed_sizes.split_addresses(
        snapshot, resolution.mappings, mixing)
    resolution = resolution._replace(mappings=split)
    _, held = guest_safety.hold_for_guests(
        mappings.for_host(resolution.mappings, gpus, None, shared).mappings,
        published, in_use, gpu_of(snapshot))
    checked: Optional[Mapping[str, Optional[Mapping[str, str]]]] = offered
    if held and offered is not None:
        waiting_gpus = {gpu.gpu for gpu in held}
        device_gpu = gpu_of(snapshot)
        checked = {device: None if device_gpu.get(device) in waiting_gpus
                   else types for device, types in offered.items()}
    host = profiles.merged(resolution, mappings.for_host(
        resolution.mappings, gpus, checked, shared))
    host = host._replace(problems=_one_size_per_gpu(
        snapshot, host, named, mixing, mixed) + host.problems +
        _one_type_per_size(snapshot, host))
    if host.problems:
        more = len(host.problems) - 1
        raise _Refused('blocked', 'Invalid {}: {}{}'.format(
            mappings.OPTION, host.problems[0],
            ' (and {} more)'.format(more) if more else ''), host.absent)
    _mixed_mode_waits(snapshot, mixed, in_use)
    return resolution, host, mixed


def _mixed_mode_waits(snapshot: model.HostSnapshot,
                      mixed: Mapping[str, model.MixedGpu],
                      in_use: List[model.VgpuInUse]) -> None:
    """Refuse, for now, a GPU whose mixed-size mode must change (sizes
    mixed on a GPU in equal-size mode, or one size again on a GPU the
    charm put in mixed-size mode) while guests' vGPUs are on it: the
    mode cannot change while a vGPU exists there (nvidia-smi says "In
    use by another client"), and guests come first. Those no guest uses
    are removed when the mode changes (apply/mixed_sizes.py). Nova keeps
    what it has until then."""
    changing = [(gpu, 'enters')
                for gpu in mixed_sizes.pending(snapshot, mixed)]
    changing += [(gpu, 'leaves')
                 for gpu in mixed_sizes.leaving(snapshot, mixed)]
    device_gpu = gpu_of(snapshot)
    for address, what in sorted(changing):
        guests = sorted({guest for vgpu in in_use
                         if device_gpu.get(vgpu.device) == address
                         for guest in vgpu.guests})
        if guests:
            raise _Refused('waiting', (
                'Change of {} waits for guests using vGPUs: {} {} NVIDIA\'s '
                'mixed-size mode, which cannot change while a vGPU exists on '
                'it ({}): move them to another host (openstack server '
                'migrate), and the next hook changes it').format(
                    mappings.OPTION, address, what, ', '.join(guests)), [])


def _check_type_count(host: mappings.HostMappings, rules: model.NovaRules,
                      nova_version: str) -> None:
    """Refuse more types than this Nova honours."""
    limit = rules.type_limit
    if limit is not None and len(host.mappings) > limit:
        raise _Refused('blocked', (
            'Invalid {}: {} vGPU types on this host, but {} (nova {}); '
            'keep one type, or upgrade to Victoria (nova 22.2.1) or '
            'later').format(mappings.OPTION, len(host.mappings),
                            rules.single_type_reason,
                            releases.upstream_version(nova_version)),
            host.absent)


def _check_vendor_vfio(vfio_mappings: model.Mappings,
                       snapshot: model.HostSnapshot,
                       rules: model.NovaRules, absent: List[str]) -> None:
    """Refuse typed VFs where this Nova cannot take them."""
    if vfio_mappings and not rules.options.managed_no_vfs:
        gpus_named = sorted(gpu.address for gpu in snapshot.gpus
                            if gpu.vendor_vfio)
        raise _Refused('blocked', (
            'GPUs at {} run NVIDIA\'s vendor-specific VFIO driver (no '
            'mdev), which Nova supports from 2025.1 Epoxy; this host has '
            'nova {}: upgrade OpenStack, or use a vGPU driver with mdev'
            ).format(', '.join(gpus_named), releases.upstream_version(
                snapshot.nova_version)), absent)


def _check_one_type_per_vfio_gpu(vfio_mappings: model.Mappings,
                                 snapshot: model.HostSnapshot,
                                 absent: List[str]) -> None:
    """Refuse two types on VFs of one GPU on the vendor-specific VFIO
    driver: Nova reports a GPU's VFs to Placement as one provider in one
    resource class, and refuses VFs of one GPU in two (nova/compute/
    pci_placement_translator.py, PlacementPciMixedResourceClassException:
    nova-compute then stops updating the host in Placement). Each type
    has a class of its own, so two types there are two classes."""
    device_gpu = gpu_of(snapshot)
    types_on: Dict[str, Set[str]] = {}
    for vgpu_type, devices in vfio_mappings.items():
        for device in devices:
            types_on.setdefault(device_gpu.get(device, device),
                                set()).add(vgpu_type)
    for gpu, types in sorted(types_on.items()):
        if len(types) > 1:
            raise _Refused('blocked', (
                'Invalid {}: {} both on {}, which runs NVIDIA\'s '
                'vendor-specific VFIO driver: Nova puts a GPU\'s VFs in '
                'Placement under one resource class and refuses two (it '
                'would stop updating this host in Placement); give the GPU '
                'one type').format(
                    mappings.OPTION, ' and '.join(
                        sorted(types, key=names.type_order)), gpu), absent)


def _classes(snapshot: model.HostSnapshot, chosen: str,
             rules: model.NovaRules, absent: List[str],
             mdev_mappings: model.Mappings, vfio_mappings: model.Mappings
             ) -> resource_classes.HostClasses:
    """Each type's resource class; refused where Nova would ignore the
    choice or the driver's names cannot name a class."""
    refused = resource_classes.refusal(
        chosen, rules.options, snapshot.nova_version, len(mdev_mappings))
    if refused:
        raise _Refused('blocked', refused, absent, class_refusal=refused)
    found = resource_classes.for_host(chosen, mdev_mappings, vfio_mappings,
                                      snapshot.offered)
    if found.problems:
        raise _Refused('blocked', 'Invalid {}: {}'.format(
            resource_classes.OPTION, found.problems[0]), absent)
    return found


def _sections(snapshot: model.HostSnapshot, rules: model.NovaRules,
              mdev_mappings: model.Mappings, vfio_mappings: model.Mappings,
              classes: Dict[str, str],
              live_migratable: bool) -> nova_config.Sections:
    """nova.conf's sections: mdev groups, and [pci] for typed VFs
    (live_migratable only where this host's libvirt and QEMU let Nova
    start with it: vfio_migration.py)."""
    sections = nova_config.nova_sections(mdev_mappings, rules.options,
                                         classes)
    pci_entries = nova_config.pci_passthrough_section({
        vgpu_type: [(vf, snapshot.vf_device_ids.get(vf, '')) for vf in vfs]
        for vgpu_type, vfs in vfio_mappings.items()}, {
        vgpu_type: (classes[vgpu_type], resource_classes.alias_name(
            vgpu_type, classes[vgpu_type]))
        for vgpu_type in vfio_mappings}, live_migratable)
    if pci_entries:
        sections['pci'] = pci_entries
    return sections


def _migration_shortfall(snapshot: model.HostSnapshot,
                         vfio_mappings: model.Mappings) -> List[str]:
    """What keeps the typed VFs Nova gets from being live_migratable
    (libvirt, QEMU); nothing where none are published."""
    if not vfio_mappings:
        return []
    return vfio_migration.shortfall(snapshot.libvirt_version,
                                    snapshot.qemu_version)


def _nova_adds(snapshot: model.HostSnapshot, rules: model.NovaRules,
               mdev_mappings: model.Mappings) -> Dict[str, List[str]]:
    """Devices Nova gives a type beyond the mappings (one type, < 29)."""
    vfio_gpus = {gpu.address for gpu in snapshot.gpus if gpu.vendor_vfio}
    device_gpu = gpu_of(snapshot)
    return nova_config.devices_nova_adds(mdev_mappings, rules.options, {
        device: types for device, types in (snapshot.offered or {}).items()
        if device_gpu.get(device) not in vfio_gpus})


def _sriov_capacities(host: mappings.HostMappings,
                      snapshot: model.HostSnapshot
                      ) -> Dict[Tuple[str, str], Optional[int]]:
    """(GPU, type) -> the type's vGPUs on each SR-IOV GPU it is mapped
    to (_capacity); None where it cannot be read."""
    return {(address, vgpu_type): _capacity(snapshot, address, vgpu_type)
            for vgpu_type, gpu_addresses in host.sriov_gpus.items()
            for address in gpu_addresses}


def _capacity(snapshot: model.HostSnapshot, address: str,
              vgpu_type: str) -> Optional[int]:
    """One type's vGPUs on one SR-IOV GPU: its GPU instances in MIG
    mode; else its description's max_instance (mdev); else, on the
    vendor-specific VFIO driver, nvidia-smi's maximum (asked only here,
    and never for a GPU in MIG mode, whose instances say it)."""
    instances = _mig_instances(snapshot, address, vgpu_type)
    if instances is not None:
        return instances
    description = snapshot.type_descriptions.get(address, {}).get(vgpu_type)
    if description is not None:
        return vgpu_types.max_instance(description)
    if address in mig_mode_gpus(snapshot):
        return None
    return snapshot.max_instances.get((address, vgpu_type))


def _mig_instances(snapshot: model.HostSnapshot, address: str,
                   vgpu_type: str) -> Optional[int]:
    """On a GPU in MIG mode, a MIG-backed type has one vGPU per GPU
    instance of its profile, or as many per instance as the driver says
    (Blackwell's time-sliced-on-MIG types: DC-1-3Q, eight to a
    1g.24gb+gfx); each VF offers it while there is room, so Nova would
    count every VF: how many in all; None for any other type or GPU, or
    where the driver's name of the type is not read."""
    if address not in mig_mode_gpus(snapshot):
        return None
    return fits.capacity(*_fit_facts(snapshot, address, vgpu_type))


def _mig_profile(snapshot: model.HostSnapshot, address: str,
                 vgpu_type: str) -> Optional[str]:
    """The GPU instance profile a MIG-backed type takes on a GPU in MIG
    mode: the one nvidia-smi names by its id on this board (the
    vendor-specific VFIO driver: "GPU Instance Profile ID"), else the
    one its name gives; None elsewhere."""
    if address not in mig_mode_gpus(snapshot):
        return None
    return fits.gi_profile(*_fit_facts(snapshot, address, vgpu_type))


def _fit_facts(snapshot: model.HostSnapshot, address: str, vgpu_type: str
               ) -> Tuple[model.MigGpu, Optional[model.GiFit],
                          Optional[str]]:
    """What mig/fits.py decides from for a type on a GPU in MIG mode: the
    GPU, the driver's word on where the type goes, the driver's name."""
    return (snapshot.mig[address], snapshot.gi_fits.get((address, vgpu_type)),
            _driver_name(snapshot, address, vgpu_type))


def _driver_name(snapshot: model.HostSnapshot, address: str,
                 vgpu_type: str) -> Optional[str]:
    """The driver's name of a type, from the first of the GPU's VFs that
    lists it; None where none does (or it was not read)."""
    vfs = next((host_gpu.virtual_functions for host_gpu in snapshot.gpus
                if host_gpu.address == address), ())
    return next((name for name in (
        (snapshot.offered or {}).get(vf, {}).get(vgpu_type) for vf in vfs)
        if name), None)


def _one_type_per_size(snapshot: model.HostSnapshot,
                       host: mappings.HostMappings) -> List[str]:
    """Why two types mapped to a GPU in MIG mode cannot share its GPU
    instances: both take the same size (6000D-1-42C, 6000D-1-42Q), and
    nothing says how many of those instances each should have."""
    sizes: Dict[Tuple[str, str], List[str]] = {}
    for vgpu_type, addresses in sorted(host.sriov_gpus.items()):
        for address in addresses:
            profile = _mig_profile(snapshot, address, vgpu_type)
            if profile:
                sizes.setdefault((address, profile), []).append(vgpu_type)
    return ['{} both take the {} GPU instances of {}; give it one of '
            'them'.format(' and '.join(sorted(types, key=names.type_order)),
                          profile, address)
            for (address, profile), types in sorted(sizes.items())
            if len(types) > 1]


def _one_size_per_gpu(snapshot: model.HostSnapshot,
                      host: mappings.HostMappings, named: List[str],
                      mixing: List[str],
                      mixed: Dict[str, model.MixedGpu]) -> List[str]:
    """Why time-sliced types of different sizes cannot share an SR-IOV
    GPU: a GPU in NVIDIA's default equal-size mode holds vGPUs of one
    frame buffer size, and once one exists every other size reads 0
    available on every VF, so Nova would offer vGPUs it can never
    create. A GPU whose driver mixes sizes (mixing) takes them where
    their placements fit (planned into `mixed` here, or by its address
    already); one named by a selector (not in `named`) does not. GPUs in
    MIG mode share by GPU instance instead."""
    shared = mig_mode_gpus(snapshot)
    sizes: Dict[str, Dict[str, str]] = {}
    for vgpu_type, addresses in sorted(host.sriov_gpus.items()):
        for address in addresses:
            framebuffer = vgpu_types.parse_description(
                snapshot.type_descriptions.get(address, {}).get(
                    vgpu_type) or '').get('framebuffer')
            if address not in shared and framebuffer:
                sizes.setdefault(address, {})[vgpu_type] = framebuffer
    problems = []
    for address, found in sorted(sizes.items()):
        if len(set(found.values())) < 2 or address in mixed:
            continue
        if address in mixing:
            planned, problem = mixed_sizes.plan_vfs(
                snapshot, host.mappings, address)
            if planned is not None:
                mixed[address] = planned
                continue
            problems.append(problem)
            continue
        problems.append('{} on {} are different sizes; {}'.format(
            ' and '.join('{} ({})'.format(
                _shown_type(snapshot, address, vgpu_type), found[vgpu_type])
                for vgpu_type in sorted(found, key=names.type_order)),
            address, profiles.ONE_SIZE if address in named
            else profiles.ONE_SIZE_BY_SELECTOR))
    return problems


def _shown_type(snapshot: model.HostSnapshot, address: str,
                vgpu_type: str) -> str:
    """A type as the operator wrote it: its profile name where the
    driver names it on the GPU's VFs, else its id."""
    return names.profile_of(
        _driver_name(snapshot, address, vgpu_type) or '') or vgpu_type


def _without_instances(snapshot: model.HostSnapshot,
                       host: mappings.HostMappings
                       ) -> List[Tuple[str, str, str]]:
    """(type, profile, GPU) of each MIG-backed type mapped to a GPU in
    MIG mode that has no GPU instance of its profile: the mappings ask
    for it there, mig-layout gives it nothing."""
    return [(vgpu_type, _mig_profile(snapshot, address, vgpu_type) or '',
             address)
            for vgpu_type, addresses in sorted(host.sriov_gpus.items())
            for address in addresses
            if _mig_instances(snapshot, address, vgpu_type) == 0]


def _unnamed_without_instances(snapshot: model.HostSnapshot,
                               wanted: model.Mappings,
                               resolution: model.Resolution
                               ) -> Tuple[model.Resolution,
                                          List[Tuple[str, str, str]]]:
    """(profile name, GI profile, GPU) of each MIG-backed profile name
    mapped to a GPU in MIG mode on the vendor-specific VFIO driver that
    has no GPU instance of its size: there the driver lists a type only
    while an instance of its profile is free, so the name is offered
    nowhere, and its own size says why (the resolution no longer counts
    it among the names no GPU offers)."""
    vfio_mig = {gpu.address: gpu for gpu in snapshot.gpus
                if gpu.vendor_vfio and gpu.address in mig_mode_gpus(snapshot)}
    gaps = []
    for profile in resolution.unoffered:
        for address, gpu in sorted(vfio_mig.items()):
            if not any(entry == address or entry in gpu.virtual_functions
                       or gpu.matches(entry) for entry in wanted[profile]):
                continue
            size = fits.gi_profile(snapshot.mig[address], snapshot.gi_fits.get(
                (address, profile)), profile)
            if size and snapshot.mig[address].instances_of(size) == 0:
                gaps.append((profile, size, address))
    explained = {gap[0] for gap in gaps}
    return resolution._replace(unoffered=[
        profile for profile in resolution.unoffered
        if profile not in explained]), gaps


def _wanting_unnamed(held: List[model.HeldGpu],
                     gaps: List[Tuple[str, str, str]]) -> List[model.HeldGpu]:
    """The GPUs that wait for guests, each wanting the profile names
    mapped to it that its driver cannot name yet (a size without an
    instance, on the vendor-specific VFIO driver) where no type id is
    known: what the operator asked for, not 'out of the mapping'."""
    return [gpu._replace(wants=tuple(sorted(
        profile for profile, _, address in gaps if address == gpu.gpu)))
        if not gpu.wants else gpu for gpu in held]


def _occupants(snapshot: model.HostSnapshot) -> Dict[str, str]:
    """Device -> the type of the vGPU it hosts now, or of a guest's
    vGPU the boot unit will put back (where the charm last saw it)."""
    return capacity.occupants(
        [(mdev.uuid, mdev.parent, mdev.type_id) for mdev in snapshot.mdevs],
        snapshot.mdev_users, snapshot.recorded_mdevs)


def mig_mode_gpus(snapshot: model.HostSnapshot) -> Set[str]:
    """The GPUs in MIG mode now, read where mig-layout asks: several
    MIG-backed types may share each of them, on VFs of their own."""
    return {address for address, gpu in (snapshot.mig or {}).items()
            if gpu.enabled}


def _by_path(host_mappings: model.Mappings, vfio_devices: Set[str]
             ) -> Tuple[model.Mappings, model.Mappings]:
    """The mappings on the mdev path, and on VFs of NVIDIA's
    vendor-specific VFIO driver."""
    return (_split(host_mappings, vfio_devices, False),
            _split(host_mappings, vfio_devices, True))


def _split(host_mappings: model.Mappings, devices: Set[str],
           inside: bool) -> model.Mappings:
    """The part of the mappings on (or off) these devices."""
    split = {vgpu_type: [d for d in listed if (d in devices) == inside]
             for vgpu_type, listed in host_mappings.items()}
    return {vgpu_type: listed for vgpu_type, listed in split.items()
            if listed}
