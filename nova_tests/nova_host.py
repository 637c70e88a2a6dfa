"""Nova's side: its real libvirt driver over its own fake libvirt.

A host is described once (the same dictionaries the simulator's scenarios
use under host.pci and host.mdevs). The fake libvirt shows each device as
libvirt's node-device XML would, with the free instances the NVIDIA
driver reports (sim.host's model of the driver, so the charm's side and
Nova's side read the same hardware). Nova's LibvirtDriver then reads the
rendered nova.conf and that libvirt exactly as nova-compute does, and
these helpers ask it what it reports to Placement and where it would
create a vGPU. Only libvirt's device creation is played here, as Nova's
own functional tests (test_vgpu.py) play it.

A GPU in MIG mode (mig_host) shows on each VF its MIG-backed types, each
with one free instance only while a GPU instance of the type's profile is
free (sim/mig.py); a vGPU Nova creates there takes one.
"""
import copy
import re
from typing import Any, Dict, List, Optional, Tuple

import fixtures
import mig_host
from oslo_utils import uuidutils
from oslo_utils import versionutils

import nova.conf
from nova import context as nova_context
from nova import objects
from nova.compute import pci_placement_translator
from nova.compute import provider_tree
from nova.pci import manager as pci_manager
from nova.pci import request as pci_request
from nova.tests import fixtures as nova_fixtures
from nova.tests.fixtures import libvirt as fakelibvirt
from nova.virt import fake
from nova.virt.libvirt import driver as libvirt_driver
from nova.virt.libvirt import utils as libvirt_utils

from sim import host as sim_host

CONF = nova.conf.CONF
NODE = 'compute1'


def libvirt_name(address: str) -> str:
    """0000:84:00.0 -> pci_0000_84_00_0, libvirt's node-device name."""
    return 'pci_' + '_'.join(re.split('[:.]', address))


def _address_xml(address: str) -> str:
    domain, bus, rest = address.split(':')
    slot, function = rest.split('.')
    return ("<address domain='0x{}' bus='0x{}' slot='0x{}' "
            "function='0x{}'/>".format(domain, bus, slot, function))


class GpuNodeDevice:
    """One PCI function as libvirt's node-device API shows it.

    Its mdev types, with their free instances, are worked out each time
    Nova asks, from the vGPUs that exist on the host at that moment.
    """

    mac_address = None

    def __init__(self, host: 'FakeHost', function: Dict[str, Any],
                 physical: Optional[str] = None,
                 virtual: Tuple[str, ...] = ()) -> None:
        self.host = host
        self.function = function
        self.address = function['address']
        self.physical = physical
        self.virtual = virtual

    @property
    def is_capable_of_mdevs(self) -> bool:
        return bool(self.host.mdev_types(self))

    def XMLDesc(self, flags: int) -> str:
        domain, bus, rest = self.address.split(':')
        slot, function = rest.split('.')
        capabilities = ''
        if self.virtual:
            capabilities += (
                "<capability type='virt_functions' maxCount='{}'>{}"
                "</capability>".format(len(self.virtual), ''.join(
                    _address_xml(vf) for vf in self.virtual)))
        if self.physical:
            capabilities += ("<capability type='phys_function'>{}"
                             "</capability>".format(
                                 _address_xml(self.physical)))
        types = self.host.mdev_types(self)
        if types:
            capabilities += "<capability type='mdev_types'>{}</capability>"\
                .format(''.join(
                    "<type id='{}'><name>{}</name><deviceAPI>vfio-pci"
                    "</deviceAPI><availableInstances>{}</availableInstances>"
                    "</type>".format(type_id, spec.get('name', ''), free)
                    for type_id, (spec, free) in sorted(types.items())))
        return (
            "<device><name>{name}</name>"
            "<path>/sys/devices/pci{domain}:{bus}/{address}</path>"
            "<parent>computer</parent>"
            "<driver><name>{driver}</name></driver>"
            "<capability type='pci'>"
            "<class>0x{klass}</class>"
            "<domain>{d}</domain><bus>{b}</bus><slot>{s}</slot>"
            "<function>{f}</function>"
            "<product id='0x{device}'/>"
            "<vendor id='0x{vendor}'>NVIDIA Corporation</vendor>"
            "{capabilities}"
            "<iommuGroup number='{group}'>{own}</iommuGroup>"
            "<numa node='0'/>"
            "</capability></device>").format(
                name=libvirt_name(self.address), domain=domain, bus=bus,
                address=self.address,
                driver=self.function.get('driver') or 'nvidia',
                klass=self.function['class'], d=int(domain, 16),
                b=int(bus, 16), s=int(slot, 16), f=int(function, 16),
                device=self.function['device'],
                vendor=self.function['vendor'], capabilities=capabilities,
                group=self.host.iommu_group(self.address),
                own=_address_xml(self.address))


class FakeHost:
    """The host's PCI functions and vGPUs, behind Nova's fake libvirt.

    order: 'lspci' lists devices as the scenario does; 'reversed' the
    other way round (libvirt promises no order).
    """

    def __init__(self, pci: List[Dict[str, Any]],
                 mdevs: Optional[List[Dict[str, str]]] = None,
                 order: str = 'lspci',
                 versions: Optional[Tuple[Tuple[int, ...],
                                          Tuple[int, ...]]] = None,
                 mig: Optional[mig_host.MigState] = None) -> None:
        self.pci = pci
        # the MIG-capable GPUs' mode and GPU instances (mig_host.cut)
        self.mig = mig or {}
        # (libvirt, QEMU) as the connection reports them; by default
        # Nova's fake libvirt's, its own minimums (8.0.0, 6.2.0 in 34)
        self.versions = versions
        self.mdevs = [dict(mdev) for mdev in mdevs or []]
        self.devices: Dict[str, GpuNodeDevice] = {}
        self._groups: Dict[str, int] = {}
        self.gpu_of: Dict[str, str] = {}
        for function in pci:
            sriov = function.get('sriov')
            vfs = tuple(sim_host.vf_addresses(
                function['address'], sriov['total_vfs'])) if sriov else ()
            self._add(GpuNodeDevice(self, function, virtual=vfs))
            for vf in vfs:
                self._add(GpuNodeDevice(self, dict(
                    function, address=vf), physical=function['address']))
                self.gpu_of[vf] = function['address']
            self.gpu_of[function['address']] = function['address']
        if order == 'reversed':
            self.devices = dict(reversed(list(self.devices.items())))

    def _add(self, device: GpuNodeDevice) -> None:
        self.devices[libvirt_name(device.address)] = device
        self._groups[device.address] = 40 + len(self._groups)

    def iommu_group(self, address: str) -> int:
        return self._groups[address]

    def mdev_types(self, device: GpuNodeDevice
                   ) -> Dict[str, Tuple[Dict[str, Any], int]]:
        """type -> (its spec, free instances) on this device now."""
        function = device.function
        if device.physical:
            offers = mig_host.vf_offers(self.pci, self.mig, self.mdevs,
                                        device.address)
            if offers is not None:
                return {type_id: (spec, spec['available_instances'])
                        for type_id, spec in offers.items()}
            parent = next(f for f in self.pci
                          if f['address'] == device.physical)
            specs = parent['sriov'].get('vf_mdev_types', {})
        elif function.get('sriov'):
            return {}
        else:
            specs = function.get('mdev_types', {})
        gpu = self.gpu_of[device.address]
        on_gpu = [m['type'] for m in self.mdevs
                  if self.gpu_of.get(m['parent']) == gpu]
        here = [m['type'] for m in self.mdevs
                if m['parent'] == device.address]
        if device.physical and parent['sriov'].get('mixed_size', {}).get(
                'mode') == 'Enabled':
            free = sim_host.mixed_available(parent, bool(here), on_gpu)
            return {type_id: (spec, free[type_id])
                    for type_id, spec in specs.items()}
        free = sim_host.available_instances(
            specs, here, on_gpu, sriov=bool(device.physical))
        return {type_id: (spec, free[type_id])
                for type_id, spec in specs.items()}

    def connection(self) -> fakelibvirt.Connection:
        pci_info = fakelibvirt.HostPCIDevicesInfo(
            num_pci=0, num_pfs=0, num_vfs=0)
        pci_info.devices = self.devices
        mdev_info = fakelibvirt.HostMdevDevicesInfo(devices={
            libvirt_utils.mdev_uuid2name(mdev['uuid']):
            fakelibvirt.FakeMdevDevice(
                dev_name=libvirt_utils.mdev_uuid2name(mdev['uuid']),
                type_id=mdev['type'], parent=libvirt_name(mdev['parent']))
            for mdev in self.mdevs})
        self._mdev_info = mdev_info
        libvirt_version, qemu_version = (
            fakelibvirt.FAKE_LIBVIRT_VERSION, fakelibvirt.FAKE_QEMU_VERSION)
        if self.versions:
            libvirt_version, qemu_version = (
                versionutils.convert_version_to_int(version)
                for version in self.versions)
        return fakelibvirt.Connection(
            'qemu:///system', version=libvirt_version,
            hv_version=qemu_version,
            pci_info=pci_info, mdev_info=mdev_info, hostname=NODE)

    def create_mdev(self, dev_name: str, mdev_type: str,
                    uuid: Optional[str] = None) -> str:
        """What libvirt does when Nova creates a vGPU: it exists now."""
        uuid = uuid or uuidutils.generate_uuid()
        parent = next(d.address for name, d in self.devices.items()
                      if name == dev_name)
        self.mdevs.append({'uuid': uuid, 'parent': parent,
                           'type': mdev_type})
        name = libvirt_utils.mdev_uuid2name(uuid)
        self._mdev_info.devices[name] = fakelibvirt.FakeMdevDevice(
            dev_name=name, type_id=mdev_type, parent=dev_name)
        return uuid


class NovaCompute(fixtures.Fixture):
    """nova-compute's libvirt driver started with a nova.conf on a host."""

    def __init__(self, nova_conf_path: str, host: FakeHost,
                 database: bool = False) -> None:
        super().__init__()
        self.nova_conf_path = nova_conf_path
        self.host = host
        self.database = database
        self.created: List[Tuple[str, str]] = []

    def _setUp(self) -> None:
        if self.database:
            # Nova's PCI tracker keeps its devices in the database: Nova's
            # own in-memory one, as its tests use.
            objects.register_all()
            CONF.set_default('connection', 'sqlite://', group='database')
            self.useFixture(nova_fixtures.Database())
        CONF(['--config-file', self.nova_conf_path], project='nova',
             default_config_files=[], default_config_dirs=[])
        self.addCleanup(CONF.clear)
        self.addCleanup(CONF.reset)
        self.addCleanup(_forget_groups, set(CONF._groups))
        # nova 34 reads [pci] alias once per process (a restarted
        # nova-compute reads it again), as Nova's own tests reset it.
        aliases = getattr(pci_request, 'get_alias_from_config', None)
        if hasattr(aliases, 'cache_clear'):
            aliases.cache_clear()
            self.addCleanup(aliases.cache_clear)
        self.useFixture(nova_fixtures.LibvirtFixture())
        connection = self.host.connection()
        self.useFixture(fixtures.MockPatch(
            'nova.virt.libvirt.host.Host.get_connection',
            return_value=connection))

        def create_mdev(dev_name, mdev_type, uuid=None):
            self.created.append((dev_name, mdev_type))
            return self.host.create_mdev(dev_name, mdev_type, uuid)

        # Where Nova creates the vGPU: through libvirt from Dalmatian (30),
        # by writing sysfs's create file through privsep before.
        if hasattr(libvirt_driver.LibvirtDriver, '_create_mdev'):
            self.useFixture(fixtures.MonkeyPatch(
                'nova.virt.libvirt.driver.LibvirtDriver._create_mdev',
                lambda driver, *args, **kwargs: create_mdev(*args, **kwargs)))
        else:
            self.useFixture(fixtures.MonkeyPatch(
                'nova.privsep.libvirt.create_mdev',
                lambda address, *args, **kwargs: create_mdev(
                    libvirt_name(address), *args, **kwargs)))
        self.driver = libvirt_driver.LibvirtDriver(fake.FakeVirtAPI(), False)
        self.tree = provider_tree.ProviderTree()
        self.tree.new_root(NODE, uuidutils.generate_uuid())

    def report(self) -> Dict[str, Dict[str, int]]:
        """What Nova reports to Placement for vGPUs: child provider name
        (the device's PCI address) -> {resource class: total}."""
        self.driver._update_provider_tree_for_vgpu(self.tree, NODE)
        # As update_provider_tree leaves it for _allocate_mdevs.
        self.driver.provider_tree = copy.deepcopy(self.tree)
        report = {}
        for name in sorted(self.tree.get_provider_uuids()):
            data = self.tree.data(name)
            if data.name == NODE:
                continue
            report[_address_of(data.name)] = {
                rc: inventory['total']
                for rc, inventory in data.inventory.items()}
        return report

    def report_pci(self) -> Dict[str, Dict[str, int]]:
        """What Nova's PCI tracker reports to Placement ([pci]
        report_in_placement): provider (the PF's address) -> {resource
        class: total}, from the devices the driver finds and [pci]
        device_spec admits."""
        context = nova_context.get_admin_context()
        tracker = pci_manager.PciDevTracker(
            context, objects.ComputeNode(context, id=1, numa_topology=None))
        tracker.update_devices_from_hypervisor_resources(
            self.driver._get_pci_passthrough_devices())
        self.pci_tracker = tracker
        pci_placement_translator.update_provider_tree_for_pci(
            self.tree, NODE, tracker, {}, [])
        report = {}
        for name in sorted(self.tree.get_provider_uuids()):
            data = self.tree.data(name)
            if data.name.startswith(NODE + '_') and data.inventory:
                report[data.name[len(NODE) + 1:]] = {
                    rc: inventory['total']
                    for rc, inventory in data.inventory.items()}
        return report

    def pci_requests(self, extra_specs: Dict[str, str],
                     aliases: Optional[List[str]] = None
                     ) -> 'objects.InstancePCIRequests':
        """What Nova's API makes of a flavor's pci_passthrough:alias
        through [pci] alias: this host's, or `aliases` (JSON, as another
        service such as nova-cloud-controller has them)."""
        if aliases is not None:
            CONF.set_override('alias', aliases, group='pci')
        _clear_alias_cache()
        try:
            return pci_request.get_pci_requests_from_flavor(
                objects.Flavor(extra_specs=extra_specs))
        finally:
            if aliases is not None:
                CONF.clear_override('alias', group='pci')
            _clear_alias_cache()

    def flavor_fits(self, extra_specs: Dict[str, str],
                    aliases: Optional[List[str]] = None) -> bool:
        """Whether a flavor with these extra specs (pci_passthrough:alias)
        resolves through [pci] alias to devices this host's tracker has
        (as the scheduler's PciPassthroughFilter asks it)."""
        requests = self.pci_requests(extra_specs, aliases)
        return bool(requests.requests) and \
            self.pci_tracker.stats.support_requests(requests.requests, None)

    def allocate(self, address: str, resource_class: str = 'VGPU'
                 ) -> List[Tuple[str, str]]:
        """Boot a guest on one vGPU that Placement allocated on the
        provider of this device: the (device, type) Nova created it with.

        Raises Nova's ComputeResourcesUnavailable where it cannot.
        """
        return self.allocate_for_one_guest([address], resource_class)

    def allocate_for_one_guest(self, addresses: List[str],
                               resource_class: str = 'VGPU'
                               ) -> List[Tuple[str, str]]:
        """Boot one guest on a vGPU from each of these devices' providers
        (a flavor's request groups, each met by a provider of its own):
        the (device, type) of each vGPU Nova created for it."""
        before = len(self.created)
        # One consumer's allocations, as the compute manager passes them.
        self.driver._allocate_mdevs({
            self.tree.data('{}_{}'.format(
                NODE, libvirt_name(address))).uuid: {
                    'resources': {resource_class: 1}}
            for address in addresses})
        return [(_address_of(name), mdev_type)
                for name, mdev_type in self.created[before:]]


def _clear_alias_cache() -> None:
    """nova 34 reads [pci] alias once per process (Nova's own tests reset
    it too); before, every call reads it."""
    aliases = getattr(pci_request, 'get_alias_from_config', None)
    if hasattr(aliases, 'cache_clear'):
        aliases.cache_clear()


def _forget_groups(before: set) -> None:
    """Drop the [mdev_<type>] groups Nova registered while a test ran, so
    that the next starts as a fresh nova-compute does: before Caracal
    (nova 24-28) whether they exist when the driver starts decides
    whether it reads them (oslo.config has no public way to drop one)."""
    for name in set(CONF._groups) - before:
        del CONF._groups[name]


def _address_of(name: str) -> str:
    """compute1_pci_0000_84_00_0 or pci_0000_84_00_0 -> 0000:84:00.0"""
    domain, bus, slot, function = name.split('_')[-4:]
    return '{}:{}:{}.{}'.format(domain, bus, slot, function)


def per_gpu(report: Dict[str, Dict[str, int]], host: FakeHost
            ) -> Dict[str, Dict[str, int]]:
    """The report added up per physical GPU: GPU -> {class: total}."""
    totals: Dict[str, Dict[str, int]] = {}
    for address, inventory in report.items():
        gpu = totals.setdefault(host.gpu_of[address], {})
        for rc, total in inventory.items():
            gpu[rc] = gpu.get(rc, 0) + total
    return totals
