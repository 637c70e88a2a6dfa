"""The nova-compute-nvidia-vgpu charm class, one per OpenStack release family.

charms.openstack picks the class: the release selector below reads the
installed nova-common, and the newest class whose `release` is not newer
than that is instantiated for the hook.
"""
import functools
import hashlib
import os
import subprocess
from typing import Dict, List, NamedTuple, Optional, Set, Tuple

import charmhelpers.contrib.openstack.utils as os_utils
import charmhelpers.core.hookenv as hookenv
import charmhelpers.core.unitdata as unitdata
import charms.reactive as reactive
import charms_openstack.charm

from nvidia_vgpu import juju_commands, memo, model, vgpu_types
from nvidia_vgpu.driver import module_build, restore, software, sriov
from nvidia_vgpu.health import verdict
from nvidia_vgpu.host import (
    dpkg, inventory, kernel, libvirt, nvidia_smi, pci, secure_boot, survey,
    sysfs, systemd)
from nvidia_vgpu.nova import (
    capacity, guest_safety, mappings, nova_config, profiles, releases,
    resource_classes)

NOVA_PACKAGE = 'nova-common'
SHA256_OPTION = 'nvidia-vgpu-software-sha256'
# unitdata keys; kept across charm upgrades, so renaming one loses state.
PROBLEM_KEY = 'nvidia-vgpu.software-problem'
# {package, version} of an attached revision that waits for guests.
WAITING_SOFTWARE_KEY = 'nvidia-vgpu.software-waits'
# The host mappings Nova was last given (what a held GPU keeps).
PUBLISHED_KEY = 'nvidia-vgpu.published-mappings'
# The resource class each of those types was given.
PUBLISHED_CLASSES_KEY = 'nvidia-vgpu.published-classes'
# Why this host's nova cannot have per-profile classes now (or None), for
# list-vgpu-types, which runs without the release's charm class.
CLASS_REFUSAL_KEY = resource_classes.REFUSAL_KEY
SOFTWARE_WAITS_FLAG = 'nova-compute-nvidia-vgpu.software-waits'
DPKG_VERSIONS_KEY = 'nvidia-vgpu.dpkg-versions'
RELATION = 'nova-vgpu'
MDEVCTL = 'mdevctl'
RELATION_ENDPOINTS = ('nova-compute-nvidia-vgpu:nova-vgpu',
                      'nova-compute:nova-vgpu')


def _make_charmhelpers_know_our_releases() -> None:
    """Let charms.openstack accept every release this charm knows.

    charms.openstack refuses releases that charmhelpers' OPENSTACK_RELEASES
    does not list and orders classes by that list; the charmhelpers bundled
    in a build may be older than the cloud.
    """
    extended = releases.extend_release_list(
        tuple(os_utils.OPENSTACK_RELEASES))
    if extended != tuple(os_utils.OPENSTACK_RELEASES):
        os_utils.OPENSTACK_RELEASES = extended
        os_utils.CompareOpenStackReleases._list = extended


_make_charmhelpers_know_our_releases()


def installed_version(package: str) -> Optional[str]:
    """A package's installed version; dpkg is asked only when its
    database changed since it last answered (kept in unitdata)."""
    kv = unitdata.kv()
    remembered = kv.get(DPKG_VERSIONS_KEY)
    version, keep = dpkg.remembered_version(package, remembered)
    if keep != remembered:
        kv.set(DPKG_VERSIONS_KEY, keep)
    return version


@functools.lru_cache(maxsize=1)
def installed_nova_version() -> Optional[str]:
    """nova-common's version, looked up once per hook (the hook's
    process)."""
    return installed_version(NOVA_PACKAGE)


@charms_openstack.charm.register_os_release_selector
def select_release() -> Optional[str]:
    """The release of the nova installed by the principal, if any yet.

    None (nova not installed yet) makes charms.openstack use the newest
    class; nothing is published to nova until nova is there anyway.
    """
    version = installed_nova_version()
    return releases.release_for_nova_version(version) if version else None


class NovaVgpuConfig(NamedTuple):
    """What this host should tell nova-compute, or why it cannot."""

    sections: Optional[nova_config.Sections]  # None: leave nova as it is
    problem: Optional[Tuple[str, str]]         # (workload status, message)
    absent: List[str]                          # configured, not GPUs here
    waiting: List[str] = []                    # SR-IOV GPUs without VFs yet
    host_mappings: Optional[Dict[str, List[str]]] = None  # expanded
    selected: Dict[str, Dict[str, List[str]]] = {}  # type -> selector -> GPUs
    unmatched: List[str] = []  # selectors no GPU here matches
    vf_count: int = 0  # enabled SR-IOV VFs of this host's GPUs
    vf_types: Dict[str, List[str]] = {}  # vendor-VFIO: type -> its VFs
    # SR-IOV: type -> {GPU: vGPUs Nova will offer there}
    sriov_capacity: Dict[str, Dict[str, int]] = {}
    # GPUs whose mapping change waits for the guests using their vGPUs
    held: List[guest_safety.HeldGpu] = []
    held_whole_host: bool = False  # one type per host: everything waits
    resolution: Optional[profiles.Resolution] = None  # profile names
    resource_class: str = resource_classes.VGPU  # vgpu-resource-class
    classes: Dict[str, str] = {}  # type -> its Placement resource class
    unnamed: List[str] = []  # per-profile types the driver has not named
    # types whose class change waits for the guests using them
    class_held: List[resource_classes.HeldClass] = []
    class_refusal: Optional[str] = None  # nova ignores per-profile here
    gpus: List[model.HostGpu] = []  # as read for this config
    # device -> {type id: name} the driver offers (None: not running)
    offered: Optional[Dict[str, Dict[str, str]]] = None
    # type -> devices Nova gives it beyond the mappings (one type, < 29)
    nova_adds: Dict[str, List[str]] = {}


def _split(host_mappings: Dict[str, List[str]], devices: Set[str],
           inside: bool) -> Dict[str, List[str]]:
    """The part of the mappings on (or off) these devices."""
    split = {vgpu_type: [d for d in listed if (d in devices) == inside]
             for vgpu_type, listed in host_mappings.items()}
    return {vgpu_type: listed for vgpu_type, listed in split.items()
            if listed}


class NovaComputeNvidiaVgpuCharm(charms_openstack.charm.OpenStackCharm):
    """Queens and later: the base of every release family."""

    release = 'queens'
    name = 'nova-compute-nvidia-vgpu'
    # Nothing comes from the Ubuntu archive: the vGPU host software is the
    # operator's resource, installed only where a GPU is found.
    packages = []
    release_pkg = NOVA_PACKAGE
    # Subordinates follow the principal's cloud archive; they have no
    # openstack-origin option of their own.
    source_config_key = ''
    required_relations = []
    # install() and config_changed() both run in the first hook.
    _software_ensured = False

    # ---------------------------------------------------------- the host

    @memo.cached_property
    def gpus(self) -> List[model.PciFunction]:
        """This host's NVIDIA physical GPUs (one lspci per hook)."""
        return inventory.nvidia_gpus()

    @property
    def installed_software(self) -> Optional[model.Installed]:
        return model.Installed.from_dict(
            unitdata.kv().get(software.INSTALLED_KEY))

    @property
    def services(self) -> List[str]:
        """The systemd services the installed vGPU package declares."""
        installed = self.installed_software
        return list(installed.services) if installed else []

    @property
    def application_version(self) -> str:
        """The NVIDIA vGPU host software version; empty until installed."""
        installed = self.installed_software
        return installed.version if installed else ''

    # ------------------------------------------------------ the software

    def install(self) -> None:
        super().install()
        self.ensure_vgpu_software()

    def config_changed(self) -> None:
        self.ensure_vgpu_software()

    def upgrade_charm(self) -> None:
        """Also Juju's answer to attach-resource: a new revision installs."""
        super().upgrade_charm()
        self.assess_status()

    def ensure_vgpu_software(self) -> None:
        """Install the attached vGPU host software if this host has a GPU
        and does not have this very revision yet.

        Runs in install, start (a GPU added before a reboot), config-changed
        and upgrade-charm (Juju's answer to attach-resource). A problem is
        remembered for the status and retried at the next of those hooks,
        not in a loop.

        A new revision waits while guests use vGPUs on the host (it would
        replace the vGPU Manager under them): it installs at the first
        hook after they are gone, update-status included (the
        software-waits flag), or through the install-vgpu-software
        action.
        """
        if self._software_ensured:
            return
        self._software_ensured = True
        kv = unitdata.kv()
        if not self.gpus:
            kv.unset(PROBLEM_KEY)
            self._software_waits(None)
            return
        resource, problem, needed = self._resource_to_install()
        if needed and self.vgpus_in_use and self._replaces_vgpu_manager(
                resource.deb):
            self._software_waits(resource.deb)
            needed = False
        else:
            self._software_waits(None)
        if needed:
            problem = self._install(resource)
        if problem:
            hookenv.log(problem, level=hookenv.WARNING)
            kv.set(PROBLEM_KEY, problem)
        else:
            kv.unset(PROBLEM_KEY)
            self.ensure_sriov()

    def install_once_guests_are_gone(self) -> None:
        """A revision that waited for guests installs once none uses a
        vGPU; until then nothing is read again (no hash of the file in
        every update-status)."""
        if not self.vgpus_in_use:
            self.ensure_vgpu_software()

    def _resource_to_install(self) -> Tuple[Optional[model.Resource],
                                            Optional[str], bool]:
        """The attached resource, why it must not be installed (or
        None), and whether this host still needs it."""
        resource = self._attached_resource()
        problem = software.resource_problem(
            resource, self.config.get(SHA256_OPTION) or '')
        needed = problem is None and software.needs_install(
            resource, self.installed_software,
            installed_version(resource.deb.package))
        return resource, problem, needed

    def _replaces_vgpu_manager(self, deb: model.DebInfo) -> bool:
        """Whether installing this package would replace a vGPU Manager
        the host has (the charm's, or the same package from elsewhere)."""
        return (self.installed_software is not None or
                installed_version(deb.package) is not None)

    def _software_waits(self, deb: Optional[model.DebInfo]) -> None:
        """Remember (or forget) the revision that waits for guests."""
        kv = unitdata.kv()
        if deb is None:
            kv.unset(WAITING_SOFTWARE_KEY)
            reactive.clear_flag(SOFTWARE_WAITS_FLAG)
            return
        hookenv.log('{} {} waits for guests using vGPUs: {}'.format(
            deb.package, deb.version, ', '.join(guest_safety.guest_names(
                self.vgpus_in_use))), level=hookenv.INFO)
        kv.set(WAITING_SOFTWARE_KEY, {'package': deb.package,
                                      'version': deb.version})
        reactive.set_flag(SOFTWARE_WAITS_FLAG)

    def install_vgpu_software(self) -> str:
        """The install-vgpu-software action: install the attached
        revision now; refused while guests use vGPUs unless force=true.
        Returns what it did; raises (the action fails) saying why not."""
        if not self.gpus:
            raise RuntimeError('No NVIDIA GPU on this host: there is '
                               'nothing to install')
        resource, problem, needed = self._resource_to_install()
        if problem:
            raise RuntimeError(problem)
        deb = resource.deb
        if not needed:
            return '{} {} is already installed'.format(deb.package,
                                                       deb.version)
        self.refuse_under_running_guests('install-vgpu-software')
        kv = unitdata.kv()
        failure = self._install(resource)
        if failure:
            kv.set(PROBLEM_KEY, failure)
            # The unit shows the block now, not "Installing ..." until
            # the next hook.
            self._assess_status()
            raise RuntimeError(failure)
        kv.unset(PROBLEM_KEY)
        self._software_waits(None)
        self.ensure_sriov()
        return ('Installed {} {}; reboot the host when the unit asks, to '
                'load its driver'.format(deb.package, deb.version))

    def ensure_sriov(self) -> None:
        """On SR-IOV GPUs, have their VFs enabled at every boot, and now.

        VFs vanish at each reboot; the boot unit recreates them after the
        vGPU Manager and before nova-compute. Where the driver already
        runs and a GPU has no VFs yet, the unit runs at once.
        """
        sriov_gpus = [gpu.address for gpu in self.gpus
                      if sysfs.sriov_total_vfs(gpu.address) > 0]
        if not sriov_gpus or self.installed_software is None:
            return
        systemd.install_unit(sriov.BOOT_UNIT, sriov.BOOT_UNIT_TEXT)
        if kernel.nvidia_driver_version() is not None and any(
                not sysfs.sriov_virtual_functions(address)
                for address in sriov_gpus):
            hookenv.log('Enabling SR-IOV VFs on {}'.format(
                ', '.join(sriov_gpus)), level=hookenv.INFO)
            try:
                systemd.run_unit(sriov.BOOT_UNIT)
            except subprocess.CalledProcessError:
                # The unit's status shows the GPUs without VFs (health).
                hookenv.log('{} failed: see journalctl -b -u {}'.format(
                    sriov.BOOT_UNIT, sriov.BOOT_UNIT), level=hookenv.WARNING)
            self.__dict__.pop('nova_vgpu_config', None)

    def remove_boot_units(self) -> None:
        """The charm is going: take its boot-time units with it."""
        systemd.remove_unit(sriov.BOOT_UNIT)
        systemd.remove_unit(restore.UNIT)

    def restore_unit_text(self) -> str:
        """The boot unit that recreates guests' vGPUs (restore.py)."""
        return (
            '# Installed by the nova-compute-nvidia-vgpu charm; removed with '
            'it.\n'
            '[Unit]\n'
            'Description=Recreate existing guests\' vGPUs after a reboot\n'
            'After=nvidia-vgpu-mgr.service {}\n'
            'Before=nova-compute.service\n'
            '\n'
            '[Service]\n'
            'Type=oneshot\n'
            'RemainAfterExit=yes\n'
            'Environment=PYTHONPATH={}\n'
            'ExecStart=/usr/bin/python3 -m nvidia_vgpu.restore\n'
            '\n'
            '[Install]\n'
            'WantedBy=multi-user.target\n').format(
                sriov.BOOT_UNIT, os.path.join(hookenv.charm_dir(), 'lib'))

    # Before Dalmatian Nova does not reliably recreate vGPUs at boot.
    restores_mdevs = True

    def keep_vgpus_across_reboots(self, periodic: bool = False) -> None:
        """Keep what the next boot needs to give guests their vGPUs back.

        The boot unit (nvidia_vgpu.restore) sets VFs' vGPU types on the
        vendor-specific VFIO driver and, before Dalmatian, recreates the
        vGPUs guests use. It reads this host's expanded mappings (so a
        config change reaches the next boot) and, before Dalmatian, where
        each vGPU lives now. In update-status (periodic) the unit is not
        reinstalled, but what it reads follows the mappings Nova is given,
        and VFs take their types there too: a change that waited for
        guests applies once they are gone.
        """
        if not self.gpus or self.installed_software is None:
            return
        if self.restores_mdevs:
            restore.record_inventory()
        if not periodic:
            systemd.install_unit(restore.UNIT, self.restore_unit_text())
        config = self.nova_vgpu_config
        if config.host_mappings is None:
            return
        restore.save_json(restore.MAPPINGS, config.host_mappings)
        vf_types = {vf: int(vgpu_type.rsplit('-', 1)[1])
                    for vgpu_type, vfs in config.vf_types.items()
                    for vf in vfs}
        restore.save_json(restore.SETTINGS, {
            'restore_mdevs': self.restores_mdevs, 'vf_vgpu_types': vf_types})
        if kernel.nvidia_driver_version() is not None:
            restore.apply_vf_types(vf_types)

    def _attached_resource(self) -> Optional[model.Resource]:
        path = hookenv.resource_get(software.RESOURCE)
        if not path or not os.path.isfile(path):
            return None
        size = os.path.getsize(path)
        digest = hashlib.sha256()
        with open(path, 'rb') as stream:
            for block in iter(lambda: stream.read(1 << 20), b''):
                digest.update(block)
        return model.Resource(size, digest.hexdigest(),
                              dpkg.read_deb(path) if size else None)

    def _install(self, resource: model.Resource) -> Optional[str]:
        deb = resource.deb
        hookenv.status_set('maintenance', 'Installing NVIDIA vGPU host '
                           'software {} {}'.format(deb.package, deb.version))
        if deb.builds_kernel_module:
            problem = self._kernel_module_problem(deb)
            if problem:
                return problem
        failure = dpkg.install_local_deb(
            hookenv.resource_get(software.RESOURCE))
        if failure:
            return ('apt-get could not install {} {}: {} (retried at the '
                    'next config-changed, upgrade-charm or start)'.format(
                        deb.package, deb.version, failure))
        unitdata.kv().set(software.INSTALLED_KEY, model.Installed(
            resource.sha256, deb.package, deb.version,
            deb.services).to_dict())
        kernel.blacklist_nouveau()
        return None

    def _kernel_module_problem(self, deb: model.DebInfo) -> Optional[str]:
        """Before a package whose kernel module DKMS builds here: install
        what the archive has and the build needs (module_build says
        which), then say why the build, or the module's load under
        Secure Boot, would fail; None if it would not."""
        host = self._module_build_host()
        missing = module_build.packages_to_install(host)
        failure = None
        if missing:
            hookenv.log('Installing {} for the kernel module of {} {}'.format(
                ', '.join(missing), deb.package, deb.version),
                level=hookenv.INFO)
            failure = dpkg.install_packages(missing)
            host = self._module_build_host()
        return module_build.problem(deb, host, failure)

    @staticmethod
    def _module_build_host() -> model.BuildHost:
        """The running kernel, its headers and its rule on unsigned
        modules; the signing key and mokutil only where that rule asks
        for signatures (elsewhere no command runs)."""
        release = kernel.running_release()
        signed_only = module_build.signed_only(
            secure_boot.secure_boot_enabled(), secure_boot.lockdown(),
            secure_boot.sig_enforce())
        certificate = secure_boot.dkms_certificate(release)
        exists = secure_boot.certificate_exists(certificate)
        mokutil = bool(signed_only) and installed_version(
            module_build.MOKUTIL_PACKAGE) is not None
        return model.BuildHost(
            release, kernel.headers_installed(release), signed_only,
            certificate, exists, mokutil,
            secure_boot.key_enrolment(certificate)
            if signed_only and exists and mokutil else None)

    # ------------------------------------------------------ nova config

    # Nova's option names and how many types it honours: Queens to Train
    # use the first type of [devices] enabled_vgpu_types on every GPU.
    nova_options = nova_config.QUEENS
    single_type_reason = (
        'OpenStack Queens to Train use only the first type of [devices] '
        'enabled_vgpu_types')

    def vgpu_type_limit(self, nova_version: str) -> Optional[int]:
        """How many vGPU types this nova honours (None: no limit)."""
        return 1

    def host_gpus(self) -> List[model.HostGpu]:
        """This host's GPUs as Nova can use them, VFs read afresh.

        The driver mode is read from sysfs, not assumed from the Ubuntu
        release: VFs with a creatable_vgpu_types table mean NVIDIA's
        vendor-specific VFIO driver (no mdev).
        """
        gpus = []
        for gpu in self.gpus:
            vfs = tuple(sysfs.sriov_virtual_functions(gpu.address))
            gpus.append(model.HostGpu(
                gpu.address, sysfs.sriov_total_vfs(gpu.address) > 0, vfs,
                bool(vfs) and sysfs.creatable_vgpu_types(vfs[0]) is not None,
                ':'.join((gpu.vendor_id, gpu.device_id,
                          gpu.subsystem_vendor_id or '0000',
                          gpu.subsystem_device_id or '0000'))))
        return gpus

    @staticmethod
    def offered_vgpu_types(gpus: List[model.HostGpu], names: bool = False
                           ) -> Optional[Dict[str, Dict[str, str]]]:
        """Types each device offers, {type id: the driver's name}, once
        the driver runs (else None); the mdev names ('' unless names) are
        read only where the mappings use profile names.

        Every VF of a GPU lists the same mdev types (only their free
        instances differ), so one VF is listed for all: a 16-GPU server
        has 512 of them. What a VF on the vendor-specific VFIO driver can
        still take depends on its siblings, so each of those is read.
        """
        if kernel.nvidia_driver_version() is None:
            return None

        def mdev(address: str) -> Dict[str, str]:
            return (sysfs.mdev_type_names(address) if names
                    else dict.fromkeys(sysfs.mdev_types(address), ''))
        offered = {}
        for gpu in gpus:
            if gpu.vendor_vfio:
                for address in (gpu.address,) + gpu.virtual_functions:
                    table = sysfs.creatable_vgpu_types(address) or {}
                    offered[address] = {'nvidia-{}'.format(number): name
                                        for number, name in table.items()}
                continue
            offered[gpu.address] = mdev(gpu.address)
            if gpu.virtual_functions:
                shared = mdev(gpu.virtual_functions[0])
                for address in gpu.virtual_functions:
                    offered[address] = shared
        return offered

    def sriov_capacities(self, host: mappings.HostMappings,
                         gpus: List[model.HostGpu]
                         ) -> Dict[Tuple[str, str], Optional[int]]:
        """(GPU, type) -> the type's max_instance on that SR-IOV GPU.

        Read from the type's description on the GPU's first VF (every
        VF lists the same types); None where it cannot be read.
        """
        vfs = {gpu.address: gpu.virtual_functions for gpu in gpus}
        capacities = {}
        for vgpu_type, gpu_addresses in host.sriov_gpus.items():
            for address in gpu_addresses:
                description = next((
                    sysfs.mdev_type_description(first, vgpu_type)
                    for first in vfs.get(address, ())[:1]), None)
                capacities[(address, vgpu_type)] = (
                    vgpu_types.max_instance(description)
                    if description is not None else None)
        return capacities

    @memo.cached_property
    def guest_devices(self) -> Tuple[List[Tuple[str, str, str]],
                                     Dict[str, List[str]],
                                     Dict[str, List[str]]]:
        """The mdevs that exist (uuid, parent, type), and which guests'
        definitions use which mdev and which PCI device."""
        mdev_users, pci_users = libvirt.hostdev_users()
        return ([(mdev.uuid, mdev.parent, mdev.type_id)
                 for mdev in sysfs.mediated_devices()], mdev_users,
                pci_users)

    @memo.cached_property
    def vgpus_in_use(self) -> List[model.VgpuInUse]:
        """Every vGPU a guest uses on this host now: mdevs a guest's
        definition has, and VFs of the vendor-specific VFIO driver with a
        vGPU type that a guest has as a PCI device."""
        if not self.gpus:
            return []
        mdevs, mdev_users, pci_users = self.guest_devices
        return guest_safety.vgpus_in_use(
            mdevs, mdev_users,
            {address: sysfs.current_vgpu_type(address) or 0
             for address in pci_users}, pci_users)

    @staticmethod
    def occupied_devices() -> Set[str]:
        """Devices hosting a vGPU now, or a guest's vGPU the boot unit
        will put back (where the charm last saw it)."""
        return capacity.occupied_devices(
            [(mdev.uuid, mdev.parent) for mdev in sysfs.mediated_devices()],
            libvirt.mdev_users(), restore.recorded_inventory())

    @memo.cached_property
    def nova_vgpu_config(self) -> NovaVgpuConfig:
        """This host's vGPU settings for nova.conf, checked every way.

        Any problem leaves sections None: what nova-compute already has
        stays exactly as it is until the operator fixes the option.
        """
        try:
            wanted = mappings.parse(self.config.get(mappings.OPTION))
            chosen = resource_classes.choice(
                self.config.get(resource_classes.OPTION))
        except (mappings.MappingError,
                resource_classes.ResourceClassError) as error:
            return NovaVgpuConfig(None, ('blocked', str(error)), [])
        nova_version = installed_nova_version()
        if nova_version is None:
            return NovaVgpuConfig(None, (
                'waiting', 'Waiting for nova-compute to install '
                '{}'.format(NOVA_PACKAGE)), [])
        gpus = self.host_gpus()
        offered = self.offered_vgpu_types(
            gpus, profiles.named(wanted)
            or chosen == resource_classes.PER_PROFILE)
        resolution = profiles.resolve(wanted, gpus, offered)
        gpu_of = {device: gpu.address for gpu in gpus
                  for device in (gpu.address,) + gpu.virtual_functions}
        published = unitdata.kv().get(PUBLISHED_KEY)
        # What a GPU whose change waits for guests offers is not judged
        # now: its vGPUs' type hides the others until they are gone.
        _, held = guest_safety.hold_for_guests(
            mappings.for_host(resolution.mappings, gpus, None).mappings,
            published, self.vgpus_in_use, gpu_of)
        checked = offered
        if held and offered is not None:
            waiting_gpus = {gpu.gpu for gpu in held}
            checked = {device: None if gpu_of.get(device) in waiting_gpus
                       else types for device, types in offered.items()}
        host = profiles.merged(resolution, mappings.for_host(
            resolution.mappings, gpus, checked))
        if host.problems:
            more = len(host.problems) - 1
            return NovaVgpuConfig(None, ('blocked', 'Invalid {}: {}{}'.format(
                mappings.OPTION, host.problems[0],
                ' (and {} more)'.format(more) if more else '')), host.absent)
        limit = self.vgpu_type_limit(nova_version)
        if limit is not None and len(host.mappings) > limit:
            return NovaVgpuConfig(None, ('blocked', (
                'Invalid {}: {} vGPU types on this host, but {} (nova {}); '
                'keep one type, or upgrade to Victoria (nova 22.2.1) or '
                'later').format(mappings.OPTION, len(host.mappings),
                                self.single_type_reason,
                                releases.upstream_version(nova_version))),
                host.absent)
        vfio_devices = {vf for gpu in gpus if gpu.vendor_vfio
                        for vf in gpu.virtual_functions}
        mdev_mappings = _split(host.mappings, vfio_devices, False)
        vfio_mappings = _split(host.mappings, vfio_devices, True)
        if vfio_mappings and not self.nova_options.managed_no_vfs:
            gpus_named = sorted(gpu.address for gpu in gpus
                                if gpu.vendor_vfio)
            return NovaVgpuConfig(None, ('blocked', (
                'GPUs at {} run NVIDIA\'s vendor-specific VFIO driver (no '
                'mdev), which Nova supports from 2025.1 Epoxy; this host has '
                'nova {}: upgrade OpenStack, or use a vGPU driver with mdev'
                ).format(', '.join(gpus_named),
                         releases.upstream_version(nova_version))),
                host.absent)
        # Each SR-IOV GPU gets only as many VFs as it can host of the
        # type, on every release; no max_instances (capacity.py: why).
        if host.sriov_gpus:   # only they have VFs to choose among
            mdev_mappings = capacity.limit_to_capacity(
                mdev_mappings, gpus, self.sriov_capacities(host, gpus),
                self.occupied_devices())
        effective, held = guest_safety.hold_for_guests(
            dict(mdev_mappings, **vfio_mappings), published,
            self.vgpus_in_use, gpu_of)
        whole_host = bool(held and limit is not None and
                          len(effective) > limit)
        if whole_host:
            effective = dict(published or {})
        mdev_mappings = _split(effective, vfio_devices, False)
        vfio_mappings = _split(effective, vfio_devices, True)
        refused = resource_classes.refusal(
            chosen, self.nova_options, nova_version, len(mdev_mappings))
        if refused:
            return NovaVgpuConfig(None, ('blocked', refused), host.absent,
                                  class_refusal=refused)
        found = resource_classes.for_host(chosen, mdev_mappings,
                                          vfio_mappings, offered)
        if found.problems:
            return NovaVgpuConfig(None, ('blocked', 'Invalid {}: {}'.format(
                resource_classes.OPTION, found.problems[0])), host.absent)
        # What the driver has not named yet is not published (never
        # guessed), as for profile names.
        effective = {vgpu_type: devices
                     for vgpu_type, devices in effective.items()
                     if vgpu_type not in found.unnamed}
        mdev_mappings = _split(effective, vfio_devices, False)
        vfio_mappings = _split(effective, vfio_devices, True)
        classes, class_held = resource_classes.hold_for_guests(
            found.classes, unitdata.kv().get(PUBLISHED_CLASSES_KEY),
            self.vgpus_in_use, vfio_mappings)
        sections = nova_config.nova_sections(mdev_mappings, self.nova_options,
                                             classes)
        pci_entries = nova_config.pci_passthrough_section({
            vgpu_type: [(vf, sysfs.device_id(vf)) for vf in vfs]
            for vgpu_type, vfs in vfio_mappings.items()}, {
            vgpu_type: (classes[vgpu_type], resource_classes.alias_name(
                vgpu_type, classes[vgpu_type]))
            for vgpu_type in vfio_mappings})
        if pci_entries:
            sections['pci'] = pci_entries
        vfio_gpus = {gpu.address for gpu in gpus if gpu.vendor_vfio}
        nova_adds = nova_config.devices_nova_adds(
            mdev_mappings, self.nova_options, {
                device: types for device, types in (offered or {}).items()
                if gpu_of.get(device) not in vfio_gpus})
        return NovaVgpuConfig(
            sections, None, host.absent, waiting=host.waiting,
            host_mappings=effective, vf_types=vfio_mappings,
            selected=host.selected, unmatched=host.unmatched,
            vf_count=sum(len(gpu.virtual_functions) for gpu in gpus),
            sriov_capacity=capacity.per_gpu(mdev_mappings, gpus),
            held=held, held_whole_host=whole_host, resolution=resolution,
            resource_class=chosen, classes={
                vgpu_type: classes[vgpu_type] for vgpu_type in effective},
            unnamed=found.unnamed, class_held=class_held,
            gpus=gpus, offered=offered, nova_adds=nova_adds)

    def nova_settings(self) -> Dict[str, object]:
        """The relation settings this host should have published now
        (no vGPU configuration while the option has a problem: Nova keeps
        what it has)."""
        settings: Dict[str, object] = {'services': self.services}
        sections = self.nova_vgpu_config.sections
        if sections is not None:
            settings['subordinate_configuration'] = \
                nova_config.subordinate_configuration(sections)
        return settings

    def publish_nova_config(self, endpoint, periodic: bool = False) -> None:
        """Tell nova-compute what it needs, setting only what changed.

        Also in update-status (periodic), where a change that waited for
        guests applies once they are gone. Not while SR-IOV VFs are
        missing, in update-status or where the driver runs (a boot whose
        VFs were not enabled): no hook takes a GPU away from Nova, and
        its guests' allocations, because its VFs are not back yet. Before
        the driver first runs there are none to take.
        """
        config = self.nova_vgpu_config
        if config.waiting and (
                periodic or kernel.nvidia_driver_version() is not None):
            return
        unitdata.kv().set(CLASS_REFUSAL_KEY, config.class_refusal)
        settings = self.nova_settings()
        if endpoint.publish(settings):
            hookenv.log('nova-vgpu settings changed: {}'.format(
                sorted(settings)), level=hookenv.INFO)
        if config.host_mappings is not None:
            unitdata.kv().set(PUBLISHED_KEY, config.host_mappings)
            unitdata.kv().set(PUBLISHED_CLASSES_KEY, config.classes)

    # ----------------------------------------------------------- status

    def custom_assess_status_check(self) -> Tuple[Optional[str],
                                                  Optional[str]]:
        """Blocked states, the one to act on first.

        Runs after charms.openstack's paused check and before its service
        check; waiting states come after both (last check).
        """
        problem = self.nova_vgpu_config.problem
        if problem and problem[0] == 'blocked':
            return problem
        if self.gpus:
            software_problem = unitdata.kv().get(PROBLEM_KEY)
            if software_problem:
                return 'blocked', software_problem
            installed = self.installed_software
            if installed is None:
                return 'blocked', software.resource_problem(None)
            running = kernel.nvidia_driver_version()
            if running != installed.version:
                return 'blocked', software.reboot_message(installed, running)
            drift = verdict.drift(self.health_facts())
            if drift:
                return 'blocked', verdict.status_message(drift)
        return None, None

    def custom_assess_status_last_check(self) -> Tuple[Optional[str],
                                                       Optional[str]]:
        """Waiting states, else ready naming what was found."""
        problem = self.nova_vgpu_config.problem
        if problem:
            return problem
        if not reactive.is_flag_set(RELATION + '.connected'):
            return 'waiting', 'Waiting for the {} relation: {}'.format(
                RELATION, juju_commands.relate_command(
                    os.environ.get('JUJU_VERSION'), *RELATION_ENDPOINTS))
        # SR-IOV GPUs without VFs (config.waiting) are blocked before
        # this: a reboot while the driver does not run, host drift once
        # it does.
        config = self.nova_vgpu_config
        if config.resolution and config.resolution.unresolved:
            return 'waiting', ('Waiting for the NVIDIA driver to resolve '
                               'vGPU profile names {} (nothing is published '
                               'for them until then)'.format(
                                   ', '.join(config.resolution.unresolved)))
        if config.unnamed:
            return 'waiting', ('Waiting for the NVIDIA driver to name vGPU '
                               'types {} for their per-profile resource '
                               'classes (nothing is published for them until '
                               'then)'.format(', '.join(config.unnamed)))
        pending = self.pending_for_nova()
        if pending:
            return 'waiting', pending
        message = 'Unit is ready: ' + pci.describe_gpus(self.gpus)
        if not self.gpus:
            return 'active', message + ' on this host'
        if config.vf_count:
            message += '; {} SR-IOV VFs'.format(config.vf_count)
        for phrase in capacity.summary(config.sriov_capacity):
            message += '; ' + phrase
        for phrase in nova_config.adds_summary(config.nova_adds, {
                vf: gpu.address for gpu in config.gpus
                for vf in gpu.virtual_functions}):
            message += '; ' + phrase
        for phrase in profiles.summary(config.resolution):
            message += '; ' + phrase
        for phrase in resource_classes.summary(config.resource_class,
                                               config.classes):
            message += '; ' + phrase
        for vgpu_type, by_selector in config.selected.items():
            for selector, gpus in by_selector.items():
                if gpus:
                    message += '; {} on {} GPU{} ({})'.format(
                        vgpu_type, len(gpus), '' if len(gpus) == 1 else 's',
                        selector)
        if config.unmatched:
            message += '; no GPU here matches ' + ', '.join(config.unmatched)
        if config.absent:
            message += '; not on this host: ' + ', '.join(config.absent)
        return 'active', message

    def pending_for_nova(self) -> Optional[str]:
        """What this host should have but nova-compute has not been given
        yet, and why; None when Nova has it all."""
        pending = []
        waiting = unitdata.kv().get(WAITING_SOFTWARE_KEY)
        if waiting:
            pending.append(guest_safety.software_waits_message(
                waiting['package'], waiting['version'],
                guest_safety.guest_names(self.vgpus_in_use)))
        config = self.nova_vgpu_config
        if config.held:
            pending.append(guest_safety.held_message(
                config.held, config.held_whole_host))
        if config.class_held:
            pending.append(resource_classes.held_message(config.class_held))
        endpoint = reactive.endpoint_from_flag(RELATION + '.connected')
        if endpoint is not None and not endpoint.has_published(
                self.nova_settings()):
            pending.append('Nova has not been given this host\'s vGPU '
                           'settings yet (they go at the next hook)')
        return '; '.join(pending) or None

    # ----------------------------------------------------------- health

    def health_facts(self, detail: bool = False) -> verdict.HostFacts:
        """What the health verdict is made from. Without detail (every
        hook's status) only what the hook has read already, plus the VFs'
        vGPU types and the charm's records; with it (the action) each
        device's free instances, services and boot units too."""
        config = self.nova_vgpu_config
        driver = kernel.nvidia_driver_version()
        gpus = config.gpus if config.sections is not None else \
            self.host_gpus() if self.gpus else []
        models = {gpu.address: gpu.model for gpu in self.gpus}
        kv = unitdata.kv()
        waiting = kv.get(WAITING_SOFTWARE_KEY)
        mdevs, mdev_users, pci_users = self.guest_devices
        return verdict.HostFacts(
            gpus=[survey.gpu_state(gpu, models.get(gpu.address, ''),
                                   driver is not None,
                                   None if detail else config.offered or {})
                  for gpu in gpus],
            driver=driver, installed=self.installed_software,
            published=kv.get(PUBLISHED_KEY), wanted=config.host_mappings,
            mdevs=mdevs, mdev_users=mdev_users, pci_users=pci_users,
            recorded=restore.recorded_inventory(),
            recorded_vf_types=restore.recorded_vf_types(),
            software_problem=kv.get(PROBLEM_KEY),
            waiting_software=(waiting['package'], waiting['version'])
            if waiting else None, held=config.held,
            held_whole_host=config.held_whole_host,
            nova_adds=config.nova_adds,
            config_problem=config.problem[1] if config.problem and
            config.problem[0] == 'blocked' else None,
            services=survey.services(self.services) if detail else {},
            boot_units=survey.boot_units() if detail and self.gpus else {},
            paused=os_utils.is_unit_paused_set())

    def vgpu_health(self) -> Dict[str, object]:
        """The vgpu-health action's report (verdict.report), reading
        only; nvidia-smi is asked where the host has it."""
        return verdict.report(
            self.health_facts(detail=True),
            survey.versions(installed_nova_version()),
            nvidia_smi.vgpu_report())

    # ---------------------------------------------------- pause, resume

    def refuse_under_running_guests(self, action: str) -> None:
        """Raise (the action fails) if stopping the vGPU Manager now would
        break guests' vGPUs, unless the operator said force=true."""
        problem = guest_safety.refusal(action, [
            (vgpu.device, vgpu.guests) for vgpu in self.vgpus_in_use])
        if problem and not hookenv.action_get('force'):
            raise RuntimeError(problem)

    def pause(self) -> None:
        """Stop the vGPU Manager, unless that would break guests' vGPUs."""
        self.refuse_under_running_guests('pause')
        super().pause()

    def restart_services(self) -> None:
        """layer:openstack's restart-services stops and starts the vGPU
        Manager: the same guard as pause."""
        self.refuse_under_running_guests('restart-services')
        super().restart_services()


class UssuriNovaComputeNvidiaVgpuCharm(NovaComputeNvidiaVgpuCharm):
    """Ussuri: per-type [vgpu_<type>] groups, but only the first type.

    Every nova 21.x registers the per-type groups after the driver has
    read them, so all but the first type are ignored (fixed in 22.2.1).
    """

    release = 'ussuri'
    nova_options = nova_config.USSURI
    single_type_reason = (
        'nova 21 (Ussuri) and 22 before 22.2.1 use only the first type '
        '(Nova bug fixed in 22.2.1)')


class VictoriaNovaComputeNvidiaVgpuCharm(UssuriNovaComputeNvidiaVgpuCharm):
    """Victoria and Wallaby: several types from nova 22.2.1 on."""

    release = 'victoria'

    def vgpu_type_limit(self, nova_version: str) -> Optional[int]:
        fixed = releases.upstream_tuple(nova_version) >= (22, 2, 1)
        return None if fixed else 1


class XenaNovaComputeNvidiaVgpuCharm(VictoriaNovaComputeNvidiaVgpuCharm):
    """Xena and later: the generic mdev option names."""

    release = 'xena'
    nova_options = nova_config.XENA

    def vgpu_type_limit(self, nova_version: str) -> Optional[int]:
        return None


class CaracalNovaComputeNvidiaVgpuCharm(XenaNovaComputeNvidiaVgpuCharm):
    """Caracal and later: Nova adds [mdev_<type>] max_instances, which the
    charm does not need: each SR-IOV GPU already gets only as many VFs as
    it can host (nvidia_vgpu.nova.capacity says why)."""

    release = 'caracal'
    nova_options = nova_config.CARACAL


class DalmatianNovaComputeNvidiaVgpuCharm(CaracalNovaComputeNvidiaVgpuCharm):
    """Dalmatian and later: Nova persists vGPUs through libvirt itself,
    which needs mdevctl on the host (instances fail to start without it).
    """

    release = 'dalmatian'
    restores_mdevs = False

    def keep_vgpus_across_reboots(self, periodic: bool = False) -> None:
        super().keep_vgpus_across_reboots(periodic)
        if periodic or not self.gpus or self.installed_software is None:
            return
        if installed_version(MDEVCTL) is None:
            failure = dpkg.install_packages([MDEVCTL])
            if failure:
                unitdata.kv().set(PROBLEM_KEY, (
                    'apt-get could not install {} (Nova needs it to keep '
                    'vGPUs across reboots): {}'.format(MDEVCTL, failure)))


class EpoxyNovaComputeNvidiaVgpuCharm(DalmatianNovaComputeNvidiaVgpuCharm):
    """Epoxy and later: VFs typed by NVIDIA's vendor-specific VFIO driver
    are offered through PCI passthrough ([pci] device_spec, managed: no).
    """

    release = 'epoxy'
    nova_options = nova_config.EPOXY
