"""One read of the host per hook: everything the charm decides from.

The hook's decisions (nova/plan.py, health/verdict.py) are pure functions
of this record, so each fact is read once however many decisions use it,
and a decision can be tested with a record written by hand.

Files only, apart from the one lspci (and, on the vendor-specific VFIO
driver, libvirt's and QEMU's versions from dpkg): a host without an
NVIDIA GPU reads nothing more, and a 16-GPU server reads one VF per GPU
for its mdev types (every VF of a GPU offers the same types). What only
some decisions need is read on first use, once: the driver's names of
the types (where profile names or per-profile classes are used) and a
type's description (for the capacity of the types an SR-IOV GPU is
given).
"""
from typing import (Any, Callable, Dict, Iterator, List, Mapping, Optional,
                    Sequence, Tuple)

from nvidia_vgpu import model
from nvidia_vgpu.names import type_id, type_number
from nvidia_vgpu.host import (
    boot_records, dpkg, inventory, kernel, libvirt, mdevctl, mixed_size,
    supported_types, survey, sysfs)
from nvidia_vgpu.host import mig as mig_state


def read(nova_version: Optional[str],
         functions: Optional[Tuple[model.PciFunction, ...]] = None,
         names: bool = False,
         installed: Callable[[str], Optional[str]] = dpkg.installed_version,
         mig: bool = False) -> model.HostSnapshot:
    """The host as it is now; nova_version is what the hook's release
    selection read from dpkg already, functions what lspci said earlier
    in the hook (GPUs do not come or go during one); names: read the
    driver's name of each mdev type (else ''); installed: how a package's
    version is asked (libvirt's and QEMU's, only where a GPU runs the
    vendor-specific VFIO driver: Nova's minimums for live-migrating its
    VFs); mig: ask nvidia-smi about MIG (where a layout is to be applied
    or undone, the driver runs and a GPU has SR-IOV: MIG-capable GPUs
    all do)."""
    if functions is None:
        functions = tuple(inventory.nvidia_gpus())
    gpus = tuple(host_gpu(function) for function in functions)
    driver = kernel.nvidia_driver_version()
    if not gpus:
        return model.HostSnapshot(functions, gpus, driver, nova_version)
    guests = libvirt.definitions()
    mdevs = tuple(sysfs.mediated_devices())
    vf_current_types = _vf_current_types(gpus)
    mdev_users, pci_users = with_unknown_users(guests, mdevs, vf_current_types)
    libvirt_version, qemu_version = survey.libvirt_and_qemu(installed) \
        if any(gpu.vendor_vfio for gpu in gpus) else (None, None)
    return model.HostSnapshot(
        functions, gpus, driver, nova_version,
        offered=_offered(gpus, names, vf_current_types)
        if driver is not None else None,
        type_descriptions=first_vf_descriptions(gpus), mdevs=mdevs,
        mdev_users=mdev_users, pci_users=pci_users,
        running_guests=libvirt.running_domains(),
        vf_types_in_use={address: sysfs.current_vgpu_type(address) or 0
                         for address in pci_users},
        vf_device_ids=_vf_device_ids(gpus),
        recorded_mdevs=boot_records.recorded_inventory(),
        recorded_vf_types=boot_records.recorded_vf_types(),
        libvirt_version=libvirt_version, qemu_version=qemu_version,
        **_on_demand(driver),
        mig=mig_state.read() if mig and driver is not None and
        any(gpu.sriov for gpu in gpus) else None,
        vf_current_types=vf_current_types,
        **_driver_reports(gpus, driver),
        recorded_placements=boot_records.recorded_placements(),
        persistent_mdevs=mdevctl.persistent_mdevs() if mdev_users
        else frozenset(),
        ignored=_ignored(guests))


def _vf_device_ids(gpus: Tuple[model.HostGpu, ...]) -> Dict[str, str]:
    """vendor-specific VFIO VF -> its PCI device id (Nova's product_id)."""
    return {vf: sysfs.device_id(vf) for gpu in gpus if gpu.vendor_vfio
            for vf in gpu.virtual_functions}


def _driver_reports(gpus: Tuple[model.HostGpu, ...],
                    driver: Optional[str]) -> Dict[str, Mapping]:
    """What only nvidia-smi gives, each read when first asked, its
    report of supported types run once for all: on the vendor-specific
    VFIO driver each time-sliced type's most vGPUs per GPU and each
    MIG-backed type's GPU instance profile and vGPUs per instance; on
    GPUs whose vGPUs are mdevs on their VFs, mixed-size mode."""
    if driver is None:
        return {'max_instances': {}, 'gi_fits': {}, 'mixed_size': {}}
    report = supported_types.Report()
    vfio = any(gpu.vendor_vfio for gpu in gpus)
    return {
        'max_instances': supported_types.table(
            report, supported_types.parse_max_instances) if vfio else {},
        'gi_fits': supported_types.table(
            report, supported_types.parse_gi_fits) if vfio else {},
        'mixed_size': mixed_size.on_demand(
            (gpu.address for gpu in gpus
             if gpu.virtual_functions and not gpu.vendor_vfio), report)}


def _on_demand(driver: Optional[str]) -> Dict[str, Mapping]:
    """What sysfs gives per device and type, read on first use (free
    instances, the driver's names), where the driver runs."""
    if driver is None:
        return {'available': {}, 'type_names': {}}
    return {'available': _OnDemand(sysfs.available_instances),
            'type_names': _OnDemand(sysfs.mdev_type_name)}


def _vf_current_types(gpus: Tuple[model.HostGpu, ...]) -> Dict[str, int]:
    """vendor-specific VFIO VF -> the vGPU type number it has (0: none)."""
    return {vf: sysfs.current_vgpu_type(vf) or 0 for gpu in gpus
            if gpu.vendor_vfio for vf in gpu.virtual_functions}


def _ignored(guests: libvirt.Definitions) -> Tuple[str, ...]:
    """What the read left out, and why: records and definitions."""
    return tuple(boot_records.problems()) + tuple(
        'the definition of guest {} cannot be read ({}): every vGPU on '
        'this host counts as in use by it'.format(guest, why)
        for guest, why in sorted(guests.unreadable.items()))


def with_unknown_users(guests: libvirt.Definitions,
                       mdevs: Sequence[model.Mdev],
                       vf_types: Mapping[str, int]
                       ) -> Tuple[Dict[str, List[str]], Dict[str, List[str]]]:
    """(mdev UUID -> guests, PCI address -> guests), where a guest whose
    definition cannot be read may use any vGPU: it is counted among the
    users of every vGPU (mdevs, and VFs with a vGPU type) on the host, so
    that nothing a guest might hold is changed until it is readable or
    gone (guests first)."""
    mdev_users = {uuid: list(users) for uuid, users in guests.mdevs.items()}
    pci_users = {address: list(users)
                 for address, users in guests.pci.items()}
    for guest in sorted(guests.unreadable):
        for mdev in mdevs:
            mdev_users.setdefault(mdev.uuid, []).append(guest)
        for address, number in sorted(vf_types.items()):
            if number:
                pci_users.setdefault(address, []).append(guest)
    return mdev_users, pci_users


def read_listing(functions: Tuple[model.PciFunction, ...],
                 driver: Optional[str]) -> model.HostSnapshot:
    """The host at list-vgpu-types' level: these GPUs and their VFs, the
    types each device offers with the driver's names (one VF stands for
    all of an mdev GPU's, as in a hook; a typed VF of the vendor-specific
    VFIO driver offers its own type too), the descriptions and free
    instances the listing then asks for, one file each, the vGPUs on
    VFs, MIG where a GPU has SR-IOV (every MIG-capable GPU does), and
    what the driver says of mixed-size mode on the mdev GPUs with VFs
    not in MIG mode (where the GPU-wide mode means nothing).
    None of a hook's other reads (guests, boot records, versions);
    driver: what the action read already."""
    gpus = tuple(host_gpu(function, count_vfs=False)
                 for function in functions)
    if not gpus or driver is None:
        return model.HostSnapshot(functions, gpus, driver, None)
    current = _vf_current_types(gpus)
    mig = mig_state.read() if any(gpu.sriov for gpu in gpus) else None
    report = supported_types.Report()
    return model.HostSnapshot(
        functions, gpus, driver, None,
        offered=_offered(gpus, True, current), vf_current_types=current,
        type_descriptions={
            gpu.address: _Descriptions((gpu.virtual_functions or
                                        (gpu.address,))[0])
            for gpu in gpus if not gpu.vendor_vfio},
        mdevs=tuple(sysfs.mediated_devices()),
        available=_OnDemand(sysfs.available_instances),
        mig=mig, mixed_size=mixed_size.read((
            gpu.address for gpu in gpus
            if gpu.virtual_functions and not gpu.vendor_vfio and not (
                gpu.address in (mig or {}) and mig[gpu.address].enabled)),
            report),
        gi_fits=supported_types.table(report, supported_types.parse_gi_fits)
        if any(gpu.vendor_vfio for gpu in gpus) else {})


def with_records(snapshot: model.HostSnapshot) -> model.HostSnapshot:
    """The same snapshot with the charm's boot records read again (the
    charm has just rewritten them)."""
    if not snapshot.gpus:
        return snapshot
    return snapshot._replace(
        recorded_mdevs=boot_records.recorded_inventory(),
        recorded_vf_types=boot_records.recorded_vf_types())


def host_gpu(function: model.PciFunction,
             count_vfs: bool = True) -> model.HostGpu:
    """A GPU as Nova can use it, its VFs read now.

    The driver mode is read from sysfs, not assumed from the Ubuntu
    release: VFs with a creatable_vgpu_types table mean NVIDIA's
    vendor-specific VFIO driver (no mdev). count_vfs=False: how many VFs
    it can have is read only where none is enabled (enabled VFs already
    say it has SR-IOV; total_vfs is then None).
    """
    vfs = tuple(sysfs.sriov_virtual_functions(function.address))
    total_vfs = sysfs.sriov_total_vfs(function.address) \
        if count_vfs or not vfs else None
    return model.HostGpu(
        function.address, total_vfs is None or total_vfs > 0, vfs,
        bool(vfs) and sysfs.creatable_vgpu_types(vfs[0]) is not None,
        ':'.join((function.vendor_id, function.device_id,
                  function.subsystem_vendor_id or '0000',
                  function.subsystem_device_id or '0000')), total_vfs)


def offered_types(gpus: Tuple[model.HostGpu, ...],
                  names: bool = False) -> model.Offered:
    """Types each device offers, with the driver's name for each.

    Every VF of an mdev GPU lists the same types (only their free
    instances differ), so one VF is read for all: a 16-GPU server has 512
    of them. What a VF on the vendor-specific VFIO driver can still take
    depends on its siblings, so each of those is read.
    """
    offered: model.Offered = {}
    for gpu in gpus:
        if gpu.vendor_vfio:
            for address in (gpu.address,) + gpu.virtual_functions:
                table = sysfs.creatable_vgpu_types(address) or {}
                offered[address] = {type_id(number): name
                                    for number, name in table.items()}
            continue
        offered[gpu.address] = _mdev_types(gpu.address, names)
        if gpu.virtual_functions:
            shared = _mdev_types(gpu.virtual_functions[0], names)
            for address in gpu.virtual_functions:
                offered[address] = shared
    return offered


def _offered(gpus: Tuple[model.HostGpu, ...], names: bool,
             current: Mapping[str, int]) -> model.Offered:
    """What each device offers, typed VFs their own types too (the
    charm's record of their names is read only where a VF has a type:
    an mdev host, or one whose VFs are untyped, reads nothing more)."""
    offered = offered_types(gpus, names)
    if not any(current.values()):
        return offered
    return with_typed_vfs(offered, current,
                          boot_records.recorded_vf_type_names())


def with_typed_vfs(offered: model.Offered, current: Mapping[str, int],
                   recorded_names: Mapping[int, str]) -> model.Offered:
    """What each device offers, a VF given a vGPU type (vendor-specific
    VFIO) offering its own type too.

    The driver lists in a VF's creatable_vgpu_types only what it can
    still create, so a type whose every vGPU exists (every GPU instance
    of a MIG-backed type's profile held by a VF) is listed nowhere: the
    VFs holding it still offer it, named as another device names it or,
    where none does, as the charm recorded when it gave the VFs that
    type ('' where neither knows).
    """
    named = dict(recorded_names)
    for table in offered.values():
        for listed, name in table.items():
            number = type_number(listed)
            if name and number is not None:
                named[number] = name
    found = dict(offered)
    for vf, number in current.items():
        if number and type_id(number) not in offered.get(vf, {}):
            found[vf] = dict(offered.get(vf, {}),
                             **{type_id(number): named.get(number, '')})
    return found


def _mdev_types(address: str, names: bool) -> Dict[str, str]:
    """{type id: the driver's name, or '' unless names are wanted}."""
    if names:
        return sysfs.mdev_type_names(address)
    return dict.fromkeys(sysfs.mdev_types(address), '')


def first_vf_descriptions(gpus: Tuple[model.HostGpu, ...]
                          ) -> Dict[str, Mapping[str, str]]:
    """SR-IOV GPU -> {type: the driver's description of it}, read on its
    first VF when a decision asks (what each type's capacity on the GPU
    is read from): a GPU offers some 40 types, the charm gives it one."""
    return {gpu.address: _Descriptions(gpu.virtual_functions[0])
            for gpu in gpus if gpu.sriov and gpu.virtual_functions}


class _Descriptions(Mapping):
    """The descriptions of a device's mdev types, each read once, when it
    is first asked for."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.read: Dict[str, Optional[str]] = {}

    def __getitem__(self, type_id: str) -> str:
        if type_id not in self.read:
            self.read[type_id] = sysfs.mdev_type_description(
                self.address, type_id)
        if self.read[type_id] is None:
            raise KeyError(type_id)
        return self.read[type_id]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(sysfs.mdev_types(self.address)))

    def __len__(self) -> int:
        return len(sysfs.mdev_types(self.address))


class _OnDemand(Mapping):
    """(device, type) -> what `read` says of that type on that device,
    each read when it is first asked for (None from `read`: not there).
    Monitoring asks for the types Nova was given: their free vGPUs on
    GPUs without SR-IOV, and their names, one file each (an SR-IOV GPU's
    counts follow from the snapshot: hook_plan/survey.py)."""

    def __init__(self, read: Callable[[str, str], Any]) -> None:
        self._read = read
        self.found: Dict[Tuple[str, str], Any] = {}

    def __getitem__(self, key: Tuple[str, str]) -> Any:
        if key not in self.found:
            self.found[key] = self._read(*key)
        if self.found[key] is None:
            raise KeyError(key)
        return self.found[key]

    def __iter__(self) -> Iterator[Tuple[str, str]]:
        return iter(sorted(key for key, value in self.found.items()
                           if value is not None))

    def __len__(self) -> int:
        return sum(1 for value in self.found.values() if value is not None)
