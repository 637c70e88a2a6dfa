"""The list-vgpu-types action: which GPUs to list, and each type with
its profile, resource class and the flavor property that asks for it."""
from typing import Dict, List, Mapping, Optional, Tuple

from nvidia_vgpu import model, names, vgpu_types
from nvidia_vgpu.driver import software
from nvidia_vgpu.mig import fits
from nvidia_vgpu.mig import layout as mig_layout
from nvidia_vgpu.nova import families, live_migration, resource_classes

Results = Dict[str, object]
# (GPU, type id) -> where the driver puts the type's vGPUs (mig/fits.py).
GiFits = Mapping[Tuple[str, str], model.GiFit]


def choose(gpus: List[model.PciFunction],
           installed: Optional[model.Installed], driver: Optional[str],
           pci_address: Optional[str] = None
           ) -> Tuple[List[model.PciFunction], Optional[Results]]:
    """The GPUs to list, or the results that say why there is nothing to
    list yet. A wrong pci-address is a ValueError whose text the action
    fails with."""
    chosen_gpus = gpus
    if pci_address:
        wanted = pci_address.strip().lower()
        if not names.PCI_ADDRESS.fullmatch(wanted):
            raise ValueError(
                'pci-address {!r} is not a full PCI address such as '
                '0000:84:00.0'.format(pci_address))
        chosen_gpus = [gpu for gpu in gpus if gpu.address == wanted]
        if not chosen_gpus:
            raise ValueError('No NVIDIA GPU at {} on this host (GPUs: {})'
                             .format(wanted, ', '.join(
                                 gpu.address for gpu in gpus) or 'none'))
    if not chosen_gpus:
        return [], {'output': 'No NVIDIA GPU on this host.', 'types': []}
    if installed is None:
        return [], {'output': 'The NVIDIA vGPU host software is not '
                    'installed: ' + software.ATTACH_COMMAND, 'types': []}
    if driver is None:
        return [], {'output': 'The NVIDIA driver is not loaded yet: reboot '
                    'the host to load {} {}.'.format(
                        installed.package, installed.version), 'types': []}
    return chosen_gpus, None


def offered_types(host: model.HostSnapshot) -> List[model.GpuTypes]:
    """Each GPU's types, device by device, from a snapshot read at the
    listing's level (host/snapshot.read_listing): on an mdev GPU each VF
    lists the first VF's types with its own free instances; on NVIDIA's
    vendor-specific VFIO driver each VF its own table of what it can
    still take, and a typed VF its own type, one each: a vGPU Nova can
    give a guest (the listing reads no guests)."""
    found = []
    tables = host.offered or {}
    for gpu in host.gpus:
        if gpu.vendor_vfio:
            found.append(model.GpuTypes(gpu.address, [
                [model.VgpuType(type_id, vf, name, '', 1)
                 for type_id, name in sorted(
                     tables.get(vf, {}).items(),
                     key=lambda item: names.type_number(item[0]))]
                for vf in gpu.virtual_functions],
                sriov=True, vendor_vfio=True))
            continue
        devices = gpu.virtual_functions or (gpu.address,)
        descriptions = host.type_descriptions.get(gpu.address, {})
        on_vfs = set(gpu.virtual_functions)
        found.append(model.GpuTypes(gpu.address, [
            [model.VgpuType(type_id, device, name,
                            descriptions.get(type_id) or '',
                            host.available.get((device, type_id)))
             for type_id, name in sorted(tables.get(devices[0],
                                                    {}).items())]
            for device in devices],
            [mdev.type_id for mdev in host.mdevs if mdev.parent in on_vfs],
            sriov=bool(gpu.virtual_functions)))
    return found


def listing(offered: List[model.GpuTypes], resource_class: Optional[str],
            refusal: Optional[str] = None,
            mig: Optional[Mapping[str, model.MigGpu]] = None,
            versions: Optional[model.Versions] = None,
            driver: Optional[str] = None,
            mixed_size: Optional[Mapping[str, model.MixedSize]] = None,
            gi_fits: Optional[GiFits] = None) -> Results:
    """A table in 'output', the same rows as structured data in 'types'.

    resource_class: the vgpu-resource-class option; refusal: why the
    last hook found this nova unable to honour it. While either stands
    the types are still listed, without classes (none is published),
    under that problem. mig: the listed GPUs that are MIG-capable, whose
    mode and GPU instances follow the table (in 'mig' too): a VF offers a
    MIG-backed type only while a free GPU instance of its profile exists.
    versions: what live migration depends on here; with them, whether
    this host's vGPU guests can live-migrate, and to which hosts (driver:
    the vGPU Manager running), ends the output (in 'live_migration' too).
    mixed_size: what the driver says of mixed-size mode on the listed
    mdev GPUs with VFs: whether each can mix sizes, and how many of each
    type fit then (in 'mixed_size' too). gi_fits: on the vendor-specific
    VFIO driver, each MIG-backed type's GPU instance profile and vGPUs
    per instance as nvidia-smi gives them (mig/fits.py).
    """
    # Not `gi_fits or {}`: the driver's table is read when first asked,
    # and asking whether it is empty would read it on every host.
    fits_read: GiFits = {} if gi_fits is None else gi_fits
    problem = refusal
    try:
        chosen: Optional[str] = resource_classes.choice(resource_class)
    except resource_classes.ResourceClassError as error:
        chosen, problem = None, str(error)
    if problem:
        chosen = None
    records = _records(offered, chosen, mig,
                       versions.nova if versions else None, fits_read)
    output = vgpu_types.table(records) or (
        'The NVIDIA driver offers no vGPU types on {}.'.format(
            ', '.join(gpu.gpu for gpu in offered)))
    if problem:
        output = '{} (no resource classes shown until it is fixed)\n{}'.format(
            problem, output)
    results: Results = {'output': output, 'types': records}
    _add_mig(results, mig or {}, records, fits_read)
    _add_mixed_size(results, mixed_size or {}, records)
    if versions is not None:
        _add_migration(results, versions,
                       any(gpu.vendor_vfio for gpu in offered), driver)
    return results


def _add_mig(results: Results, mig: Mapping[str, model.MigGpu],
             records: List[Dict[str, object]], gi_fits: GiFits) -> None:
    """Each MIG-capable GPU's mode and GPU instances: a line each after
    the table, and 'mig'."""
    if not mig:
        return
    results['mig'] = {address: _mig_record(gpu)
                      for address, gpu in sorted(mig.items())}
    results['output'] = '\n'.join([str(results['output'])] + [
        _mig_line(gpu, records, gi_fits) for _, gpu in sorted(mig.items())])


def _records(offered: List[model.GpuTypes], chosen: Optional[str],
             mig: Optional[Mapping[str, model.MigGpu]],
             nova_version: Optional[str],
             gi_fits: GiFits) -> List[Dict[str, object]]:
    """A record per type and GPU (per VF group on SR-IOV GPUs), with
    its class and flavor properties."""
    records: List[Dict[str, object]] = []
    for gpu in offered:
        if gpu.sriov:
            found = vgpu_types.gpu_records(gpu.gpu, gpu.per_device,
                                           gpu.hosted)
            _cap_at_free_instances(found, (mig or {}).get(gpu.gpu),
                                   gpu.hosted, gi_fits)
        else:
            found = [vgpu_types.as_record(vgpu_type, gpu.gpu)
                     for vgpu_type in gpu.per_device[0]]
        records += _with_classes(
            found, chosen, gpu.vendor_vfio, families.several_vgpus_per_guest(
                nova_version, gpu.vendor_vfio))
    return records


def _add_migration(results: Results, versions: model.Versions,
                   vendor_vfio: bool, driver: Optional[str]) -> None:
    """Whether this host's vGPU guests can live-migrate, and where to,
    as the last line and in 'live_migration'."""
    migration = live_migration.readiness(versions, vendor_vfio, driver)
    results['live_migration'] = migration
    results['output'] = '\n'.join([str(results['output']),
                                   live_migration.line(migration)])


def _cap_at_free_instances(records: List[Dict[str, object]],
                           gpu: Optional[model.MigGpu],
                           hosted: List[str], gi_fits: GiFits) -> None:
    """On a GPU in MIG mode a MIG-backed type has as many vGPUs as its
    GPU instances hold (mig/fits.py), whatever each VF shows: its
    available count is at most those that no vGPU of its size takes."""
    if gpu is None or not gpu.enabled:
        return
    sizes = {str(record['type']): _gi_profile(gpu, record, gi_fits)
             for record in records}
    for record in records:
        profile = sizes[str(record['type'])]
        if profile is None or record['available_instances'] is None:
            continue
        taken = sum(1 for type_id in hosted if sizes.get(type_id) == profile)
        made = fits.capacity(gpu, gi_fits.get(_fit_key(gpu, record)),
                             str(record['name'] or '')) or 0
        record['available_instances'] = min(
            int(str(record['available_instances'])), max(0, made - taken))


def _fit_key(gpu: model.MigGpu, record: Dict[str, object]
             ) -> Tuple[str, str]:
    return (gpu.address, str(record['type']))


def _gi_profile(gpu: model.MigGpu, record: Dict[str, object],
                gi_fits: GiFits) -> Optional[str]:
    """The GPU instance profile a listed type takes on this GPU."""
    return fits.gi_profile(gpu, gi_fits.get(_fit_key(gpu, record)),
                           str(record['name'] or ''))


def _mig_record(gpu: model.MigGpu) -> Dict[str, object]:
    return {'mode': gpu.mode.lower(), 'pending': gpu.pending.lower(),
            'gpu_instances': [instance.profile for instance in
                              sorted(gpu.instances, key=_by_size)],
            'profiles': [{'name': profile.name, 'id': profile.id,
                          'free': profile.free, 'total': profile.total}
                         for profile in gpu.profiles]}


def _by_size(instance: model.GpuInstance) -> Tuple[int, str, int]:
    return (-mig_layout.slices(instance.profile), instance.profile,
            instance.id)


def _mig_line(gpu: model.MigGpu, records: List[Dict[str, object]],
              gi_fits: GiFits) -> str:
    """'MIG on <GPU>: ...', its mode and GPU instances in one line, each
    size with the MIG-backed types it gives (records: the table's rows)."""
    mode = gpu.mode.lower()
    if gpu.pending.lower() != mode:
        mode += ' ({} after the next GPU reset or reboot)'.format(
            gpu.pending.lower())
    if not gpu.enabled:
        return 'MIG on {}: {}'.format(gpu.address, mode)
    counts: Dict[str, int] = {}
    for instance in sorted(gpu.instances, key=_by_size):
        counts[instance.profile] = counts.get(instance.profile, 0) + 1
    gives: Dict[str, List[str]] = {}
    for record in records:
        profile = _gi_profile(gpu, record, gi_fits)
        if record['gpu'] == gpu.address and profile:
            gives.setdefault(profile, []).append('{} ({})'.format(
                record['profile'], record['type']))
    return 'MIG on {}: {}; GPU instances: {}'.format(
        gpu.address, mode, ', '.join(
            '{} x{}{}'.format(name, count, ' giving {}'.format(', '.join(
                gives[name])) if name in gives else '')
            for name, count in counts.items())
        or 'none (no MIG-backed type is offered until some exist)')


def _add_mixed_size(results: Results,
                    mixed_size: Mapping[str, model.MixedSize],
                    records: List[Dict[str, object]]) -> None:
    """What each GPU's driver says of mixed-size mode, where it says
    anything: a line each, and 'mixed_size'."""
    said = {address: mixed for address, mixed in mixed_size.items()
            if mixed.supported is not None}
    if not said:
        return
    results['mixed_size'] = {address: _mixed_record(mixed, records, address)
                             for address, mixed in sorted(said.items())}
    results['output'] = '\n'.join([str(results['output'])] + [
        _mixed_line(address, mixed, records)
        for address, mixed in sorted(said.items())])


def _most_in_mixed_size(mixed: model.MixedSize,
                        records: List[Dict[str, object]],
                        address: str) -> Dict[str, int]:
    """profile name (the type id where it has none) -> the most vGPUs of
    it on the GPU in mixed-size mode, for the types listed there, in the
    table's order."""
    most: Dict[str, int] = {}
    for record in records:
        count = mixed.most(str(record['type']))
        if record['gpu'] == address and count is not None:
            most[str(record['profile'] or record['type'])] = count
    return most


def _mixed_record(mixed: model.MixedSize, records: List[Dict[str, object]],
                  address: str) -> Dict[str, object]:
    return {'supported': mixed.supported,
            'mode': (mixed.mode or '').lower() or None,
            'most_vgpus': _most_in_mixed_size(mixed, records, address)}


def _mixed_line(address: str, mixed: model.MixedSize,
                records: List[Dict[str, object]]) -> str:
    """'Mixed sizes on <GPU>: ...': whether its driver lets it hold
    vGPUs of several sizes at once, and the most of each type then
    (fewer, for some types, than one size alone)."""
    if not mixed.supported:
        return ('Mixed sizes on {}: not supported by this GPU and driver '
                '(one vGPU size per GPU)').format(address)
    most = _most_in_mixed_size(mixed, records, address)
    return ('Mixed sizes on {}: supported by the driver (mode now: {}); '
            'the most of each type in mixed-size mode: {}; give the GPU\'s '
            'address under several sizes (each gets an even share) or each '
            'size VFs of its own').format(
                address, (mixed.mode or 'not reported').lower(),
                ', '.join('{} x{}'.format(name, count)
                          for name, count in most.items())
                or 'not listed by the driver')


def _with_classes(records: List[Dict[str, object]], chosen: Optional[str],
                  vendor_vfio: bool, several_per_guest: bool
                  ) -> List[Dict[str, object]]:
    """Each record with its profile name, the resource class the charm
    publishes it under with this vgpu-resource-class (None: not valid),
    and the flavor properties that ask for one, and for two per guest
    where this Nova gives them (families.several_vgpus_per_guest)."""
    for record in records:
        found = resource_classes.for_type(
            chosen or resource_classes.VGPU, str(record['type']),
            str(record['name'] or ''), vendor_vfio)
        record['profile'] = found.profile
        record['resource_class'] = found.resource_class if chosen else None
        record['flavor_property'] = found.flavor_property if chosen else None
        record['flavor_property_two'] = resource_classes.flavor_property_for(
            2, str(record['type']), found.resource_class, vendor_vfio) if (
                chosen and found.resource_class and several_per_guest
            ) else None
    return records
