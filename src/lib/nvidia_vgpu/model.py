"""The records the charm's rooms hand each other.

Host readers (host/) return them, policy (nova/, driver/, health/) decides
from them, and neither imports the other for a type: what a PCI function,
a GPU as Nova can use it, a package or a vGPU in use looks like is said
once, here, with no I/O and no Juju.
"""
import re
from typing import (Any, Dict, FrozenSet, List, Mapping, NamedTuple,
                    Optional, Tuple)

NVIDIA_VENDOR_ID = '10de'
# VGA compatible controller (boards with display outputs enabled) and 3D
# controller (datacenter boards); audio, USB, serial and bridge functions
# (NVSwitch) of the same vendor are not GPUs.
GPU_CLASSES = ('0300', '0302')
_MARKETING_NAME = re.compile(r'\[(?P<model>[^\]]+)\]$')

# vGPU type (or profile name) -> the PCI addresses or selectors it is on
Mappings = Dict[str, List[str]]
# device (a GPU or a VF) -> {type id: the driver's name for it}
Offered = Dict[str, Dict[str, str]]


class PciFunction(NamedTuple):
    """One PCI function: ids as lower-case hex, names as lspci knows them."""

    address: str
    class_id: str
    vendor_id: str
    device_id: str
    subsystem_vendor_id: str = ''
    subsystem_device_id: str = ''
    revision: str = ''
    class_name: str = ''
    vendor_name: str = ''
    device_name: str = ''

    @property
    def model(self) -> str:
        """A name an operator recognises, e.g. "Tesla V100 PCIe 16GB".

        lspci's database writes "GV100GL [Tesla V100 PCIe 16GB]": the
        marketing name is the bracketed part. Boards newer than the
        host's database only have ids.
        """
        match = _MARKETING_NAME.search(self.device_name)
        if match:
            return match.group('model')
        if self.device_name and self.device_name != 'Device':
            return self.device_name
        return 'device {}:{}'.format(self.vendor_id, self.device_id)

    @property
    def is_nvidia_gpu(self) -> bool:
        return (self.vendor_id == NVIDIA_VENDOR_ID and
                self.class_id in GPU_CLASSES)


class HostGpu(NamedTuple):
    """An NVIDIA GPU on this host, as Nova's vGPU code can use it."""

    address: str
    sriov: bool                 # vGPUs live on its virtual functions
    virtual_functions: Tuple[str, ...] = ()
    # NVIDIA's vendor-specific VFIO driver: no mdev, VFs are given a type
    vendor_vfio: bool = False
    # "10de:1db4:10de:1214": what selectors match
    ids: str = ''
    # how many VFs it can have (0: no SR-IOV); None: not read, where VFs
    # are enabled and the reader needs no more (list-vgpu-types)
    total_vfs: Optional[int] = 0

    def matches(self, selector: str) -> bool:
        return self.ids == selector or self.ids.startswith(selector + ':')


class DebInfo(NamedTuple):
    """What a .deb says about itself."""

    package: str
    version: str
    architecture: str
    services: Tuple[str, ...]
    # Whether installing it builds a kernel module on the host (DKMS), so
    # that the running kernel's headers, and under Secure Boot an enrolled
    # signing key, must be there first.
    builds_kernel_module: bool = False


class Mdev(NamedTuple):
    """A mediated device (a created vGPU)."""

    uuid: str
    parent: str
    type_id: str


class VgpuType(NamedTuple):
    """One type offered on one device (a GPU or one of its VFs)."""

    type_id: str
    address: str
    name: str
    description: str
    available_instances: Optional[int]


class GpuTypes(NamedTuple):
    """The vGPU types one GPU offers, device by device: the GPU itself,
    or each of its VFs in order."""

    gpu: str
    per_device: List[List[VgpuType]]
    hosted: List[str] = []       # types of the vGPUs on its VFs now
    sriov: bool = False          # listed over its VFs
    vendor_vfio: bool = False    # VFs typed through sysfs, no mdev


class GpuState(NamedTuple):
    """One physical GPU as the host shows it now."""

    address: str
    model: str
    total_vfs: int                  # 0: no SR-IOV
    vfs: Tuple[str, ...] = ()       # enabled VFs
    vendor_vfio: bool = False       # VFs typed through sysfs, no mdev
    # device -> {type id: free instances (None: not read)}; empty while
    # the driver does not run
    types: Mapping[str, Mapping[str, Optional[int]]] = {}
    names: Mapping[str, str] = {}   # type id -> the driver's name
    vf_types: Mapping[str, int] = {}  # vendor VFIO: VF -> type (0: none)


class GiProfile(NamedTuple):
    """A GPU instance profile as the GPU lists it (nvidia-smi mig -lgip),
    with where an instance of it may start (mig -lgipp): its ids differ
    by board, so it is looked up by name."""

    id: int
    name: str           # 1g.10gb, 1g.10gb+me, ...
    free: int           # how many more of it fit now
    total: int          # how many of it the GPU can hold, alone
    # the first memory slice of each placement -lgipp lists, and how
    # many memory slices an instance occupies; () and 0: not listed
    starts: Tuple[int, ...] = ()
    size: int = 0


class GpuInstance(NamedTuple):
    """A GPU instance that exists (nvidia-smi mig -lgi)."""

    id: int
    profile_id: int
    profile: str
    placement: str      # start:size, in memory slices


class GiPlacement(NamedTuple):
    """A GPU instance to make, and where: made at a start of its own, a
    layout does not rest on where the driver would put it."""

    profile: str                    # its name, as mig-layout gives it
    profile_id: Optional[int] = None    # the GPU's id for that name
    start: Optional[int] = None     # first memory slice; None: the
    #                                 driver's choice (no placements listed)


class Placements(NamedTuple):
    """Where a time-sliced type may sit on a GPU in mixed-size mode: its
    size and start offsets in the GPU's placement region (one slot per
    GB of frame buffer), as `nvidia-smi vgpu -s -v` lists them."""

    size: int
    ids: Tuple[int, ...]


Placed = Dict[str, Tuple[str, int]]   # VF -> (type id, placement id)


class MixedGpu(NamedTuple):
    """A GPU in mixed-size mode as planned: every VF Nova is given, with
    its type and placement."""

    gpu: str
    placed: Placed

    def counts(self) -> Dict[str, int]:
        """type -> how many vGPUs of it the GPU holds."""
        found: Dict[str, int] = {}
        for vgpu_type, _ in self.placed.values():
            found[vgpu_type] = found.get(vgpu_type, 0) + 1
        return found


class GiFit(NamedTuple):
    """Where a MIG-backed type's vGPUs go, as the driver says: the GPU
    instance profile (its id on this board) and how many share one
    instance (1 but for Blackwell's time-sliced-on-MIG types)."""

    profile_id: int
    per_gi: int


class MixedWork(NamedTuple):
    """What a hook does for the GPUs that mix sizes, in this order."""

    # vGPUs no guest uses that are in the way: on a GPU whose mode
    # changes (it cannot while one exists), or not of their VF's type
    remove: Tuple[str, ...] = ()
    set_mode: Tuple[str, ...] = ()     # GPUs to put in mixed-size mode
    unset_mode: Tuple[str, ...] = ()   # GPUs back to equal-size mode
    # (VF, type, placement ID): a vGPU to make there for Nova to take
    create: Tuple[Tuple[str, str, int], ...] = ()
    # (vGPU, placement ID): an unused vGPU of its VF's type to place
    place: Tuple[Tuple[str, int], ...] = ()


class MixedSize(NamedTuple):
    """What a GPU's driver says of NVIDIA's mixed-size mode (vGPUs of
    several sizes on one GPU): None where it does not say."""

    supported: Optional[bool]     # "Heterogeneous Time-Slice Sizes"
    mode: Optional[str]           # "vGPU Heterogeneous Mode" now
    placements: Mapping[str, Placements] = {}   # type id -> placements

    @property
    def enabled(self) -> bool:
        """Whether the GPU is in mixed-size mode now."""
        return (self.mode or '').lower() == 'enabled'

    def most(self, type_id: str) -> Optional[int]:
        """The most vGPUs of a type on the GPU in mixed-size mode: its
        supported placements; None where the driver lists none."""
        found = self.placements.get(type_id)
        return len(found.ids) if found else None


class MigGpu(NamedTuple):
    """A MIG-capable GPU's mode and instances as the driver reports them;
    profiles and instances are read only while the mode is enabled (the
    driver lists none otherwise)."""

    address: str
    index: int          # nvidia-smi's -i
    mode: str           # Enabled | Disabled
    pending: str        # the mode after the next reset or reboot
    profiles: Tuple[GiProfile, ...] = ()
    instances: Tuple[GpuInstance, ...] = ()

    @property
    def enabled(self) -> bool:
        """In MIG mode now (nvidia-smi writes Enabled)."""
        return self.mode.lower() == 'enabled'

    def instances_of(self, profile: str) -> int:
        """How many GPU instances of this profile exist."""
        return sum(1 for instance in self.instances
                   if instance.profile == profile)

    def profile_named(self, profile_id: int) -> Optional[str]:
        """The name of the GPU instance profile with this id on this GPU
        (ids differ by board); None where -lgip listed none such."""
        return next((profile.name for profile in self.profiles
                     if profile.id == profile_id), None)


class MigPlan(NamedTuple):
    """What mig-layout asks of this host now, and what waits.

    Each GPU's wanted GPU instances are profile names, largest first (the
    order they are made in); those to make each carry the start computed
    for it from the placements the GPU lists, so that they all fit
    whatever the driver would have chosen."""

    wanted: Mapping[str, Tuple[str, ...]] = {}   # GPU -> its GIs
    enable: Tuple[str, ...] = ()       # GPUs to set to MIG mode now
    disable: Tuple[str, ...] = ()      # GPUs left out of the layout
    destroy: Mapping[str, Tuple[int, ...]] = {}  # GPU -> GI ids, unused
    create: Mapping[str, Tuple[GiPlacement, ...]] = {}  # GPU -> to make
    reset_pending: Tuple[str, ...] = ()  # mode set, applies at a reboot
    held: Mapping[str, Tuple[str, ...]] = {}     # GPU -> guests it waits for
    refused: Mapping[str, str] = {}    # GPU -> why its layout cannot apply
    # GPU -> its VFs (vendor-specific VFIO) whose vGPU type no guest uses,
    # to clear before its mode or instances change: a typed VF holds its
    # GPU (or a GI of it), which the driver then refuses to change
    untype: Mapping[str, Tuple[str, ...]] = {}


class Versions(NamedTuple):
    """What live migration depends on, as installed (None: not found)."""

    nova: Optional[str]      # nova-common's Debian version
    libvirt: Optional[str]   # libvirt's Debian version
    qemu: Optional[str]      # qemu-system-x86's Debian version
    linux: Optional[str]     # the running kernel's release
    # nova.conf's [libvirt] live_migration_permit_post_copy (Nova's
    # default, off, where unset; None: no nova.conf to read)
    post_copy: Optional[bool] = False
    # the host's GPU boards, as PCI ids (vendor:device:subvendor:subdevice)
    boards: Tuple[str, ...] = ()


class Resource(NamedTuple):
    """The attached resource as found on this unit."""

    size: int
    sha256: str
    deb: Optional[DebInfo]


class Installed(NamedTuple):
    """What the charm installed, remembered across hooks and upgrades."""

    sha256: str
    package: str
    version: str
    services: tuple
    # DKMS builds its module for each kernel (DebInfo's, at install). A
    # record kept before this was remembered says True: NVIDIA's vGPU
    # Manager for Ubuntu KVM is built that way.
    builds_kernel_module: bool = True

    def to_dict(self) -> Dict[str, Any]:
        return {'sha256': self.sha256, 'package': self.package,
                'version': self.version, 'services': list(self.services),
                'builds_kernel_module': self.builds_kernel_module}

    @classmethod
    def from_dict(cls, data: Optional[Dict[str, Any]]
                  ) -> Optional['Installed']:
        if not data:
            return None
        return cls(data['sha256'], data['package'], data['version'],
                   tuple(data.get('services', ())),
                   data.get('builds_kernel_module', True))


class VgpuInUse(NamedTuple):
    """A vGPU a guest's definition uses, where it lives and its type."""

    device: str          # the GPU, or the SR-IOV VF, it lives on
    vgpu_type: str       # nvidia-<N>
    guests: List[str]    # whose definition has it (or, where only running
    #                      guests count, those of them that run)


# Where Ubuntu's DKMS keeps the key it signs modules with.
UBUNTU_DKMS_CERTIFICATE = '/var/lib/shim-signed/mok/MOK.der'
# What mokutil says of a signing key (BuildHost.enrolment).
ENROLLED = 'enrolled'
PENDING = 'pending'          # imported, to be confirmed at the next boot
NOT_ENROLLED = 'not enrolled'


class BuildHost(NamedTuple):
    """What the host offers a DKMS build, as the package would find it."""

    kernel: str                 # the running kernel's release
    headers: bool               # its headers are where DKMS looks
    signed_only: Optional[str]  # why unsigned modules are refused, if so
    certificate: str            # what DKMS signs with (its certificate)
    certificate_exists: bool
    mokutil: bool               # installed
    enrolment: Optional[str]    # 'enrolled', 'pending', 'not enrolled'


class RunningKernel(NamedTuple):
    """The running kernel as an installed vGPU Manager's module meets it
    when the driver is not loaded (a kernel updated without headers)."""

    release: str
    headers: bool        # its headers are where DKMS looks
    nvidia_module: bool  # an nvidia module is under /lib/modules/<release>


class HeldGpu(NamedTuple):
    """A GPU whose mapping change waits for the guests on it."""

    gpu: str                 # the physical GPU
    keeps: Tuple[str, ...]   # the type(s) Nova keeps for it meanwhile
    wants: Tuple[str, ...]   # the type(s) asked for (empty: taken out)
    guests: List[str]


class Resolution(NamedTuple):
    """The mappings with profile names as this host's type ids, and what
    could not be resolved and why."""

    mappings: Mappings            # type ids only: what for_host reads
    resolved: Dict[str, List[str]] = {}  # profile -> its type ids here
    unresolved: List[str] = []    # profiles waiting for the driver
    unoffered: List[str] = []     # profiles their GPUs here do not offer
    problems: List[str] = []
    absent: List[str] = []        # addresses under profiles, no GPU here
    unmatched: List[str] = []     # selectors under profiles matching none
    waiting: List[str] = []       # SR-IOV GPUs named, VFs not enabled yet


class HeldClass(NamedTuple):
    """A type whose class change waits for the guests using it."""

    vgpu_type: str
    keeps: str
    wants: str
    guests: List[str]


class NovaOptions(NamedTuple):
    """Nova's vGPU option names in one release family."""

    type_list_option: str            # [devices] enabled_*_types
    type_group_prefix: Optional[str]  # None: no per-type groups (< Ussuri)
    # PCI passthrough of pre-typed VFs (vendor-specific VFIO, 31+)
    managed_no_vfs: bool = False
    # The fewest types a host must enable for Nova to honour
    # [mdev_<type>] mdev_class; None: no such option (before Xena).
    mdev_class_types: Optional[int] = None
    # The fewest types a host must enable for Nova to keep each type to
    # its device_addresses; with fewer, Nova gives its one type to every
    # device that offers it.
    address_types: int = 2


class NovaRules(NamedTuple):
    """What the installed release's Nova takes: the charm class of the
    release says it, the plan follows it."""

    options: NovaOptions
    type_limit: Optional[int]   # how many types it honours (None: any)
    single_type_reason: str     # why, where it honours one


class HostSnapshot(NamedTuple):
    """Everything a hook decides from, read from the host once.

    Files only (lspci aside, and dpkg for libvirt's and QEMU's versions
    where a GPU runs the vendor-specific VFIO driver): sysfs, libvirt's
    definitions, the charm's own records under /var/lib; the Nova version
    comes from the hook's release selection, which read it already.
    """

    functions: Tuple[PciFunction, ...]   # NVIDIA physical GPUs (lspci)
    gpus: Tuple[HostGpu, ...]            # the same, VFs read now
    driver: Optional[str]                # the running NVIDIA driver
    nova_version: Optional[str]          # nova-common's Debian version
    # What each device offers once the driver runs (None before); a
    # VF of an mdev GPU stands for all of them (they offer the same).
    offered: Optional[Offered] = None
    # SR-IOV GPU with VFs -> {type: the driver's description}, read on
    # its first VF (a type's capacity on the GPU is in it)
    type_descriptions: Mapping[str, Mapping[str, str]] = {}
    mdevs: Tuple[Mdev, ...] = ()
    # Which guests' definitions use which vGPUs, running or not (a
    # retype waits for all of them: a stopped guest keeps its vGPU).
    mdev_users: Mapping[str, List[str]] = {}   # mdev uuid -> guests
    pci_users: Mapping[str, List[str]] = {}    # PCI address -> guests
    # The guests libvirt runs now (what stopping the vGPU Manager
    # breaks); None: not read, every guest counts as running.
    running_guests: Optional[FrozenSet[str]] = None
    # vendor-specific VFIO: a guest's PCI device -> its vGPU type (0: none)
    vf_types_in_use: Mapping[str, int] = {}
    vf_device_ids: Mapping[str, str] = {}      # vendor VFIO VF -> its id
    # where the charm last saw each vGPU: uuid -> (parent, type)
    recorded_mdevs: Mapping[str, Tuple[str, str]] = {}
    recorded_vf_types: Mapping[str, int] = {}  # VF -> type it was given
    # libvirt's and QEMU's Debian versions, read only where a GPU runs
    # the vendor-specific VFIO driver (None: not read, or not installed)
    libvirt_version: Optional[str] = None
    qemu_version: Optional[str] = None
    # MIG-capable GPUs as the driver reports them, where MIG was asked
    # about (a layout to apply or undo) and the driver runs; else None.
    mig: Optional[Mapping[str, MigGpu]] = None
    # vendor-specific VFIO VF -> the vGPU type number it has (0: none)
    vf_current_types: Mapping[str, int] = {}
    # (device, type) -> vGPUs of it the driver can still create there,
    # read on first use (host/snapshot.py); {} where the driver is down
    available: Mapping[Tuple[str, str], int] = {}
    # (device, type) -> the driver's name of the type, read on first use
    type_names: Mapping[Tuple[str, str], str] = {}
    # UUIDs of the mdevs a definition brings back at boot (mdevctl's)
    persistent_mdevs: FrozenSet[str] = frozenset()
    # what the read left out, and why (a record or a guest's definition
    # that cannot be read): the hook logs each as a warning
    ignored: Tuple[str, ...] = ()
    # (GPU, type id or profile name) -> its GPU instance profile and
    # vGPUs per instance, as nvidia-smi gives them (vendor-specific VFIO,
    # in MIG mode), read on first use (host/supported_types.py)
    gi_fits: Mapping[Tuple[str, str], GiFit] = {}
    # GPU -> what its driver says of mixed-size mode, read on first use
    # (host/mixed_size.py): list-vgpu-types, and hooks for the GPUs the
    # mappings name under two types
    mixed_size: Mapping[str, MixedSize] = {}
    # GPU in mixed-size mode -> the placements the charm last gave its VFs
    recorded_placements: Mapping[str, Placed] = {}
    # (GPU, type id) -> the most vGPUs of the type the GPU holds, where
    # sysfs does not say (vendor-specific VFIO: `nvidia-smi vgpu -s -v`),
    # read when first asked (host/supported_types.py)
    max_instances: Mapping[Tuple[str, str], int] = {}


class GpuErrorCounters(NamedTuple):
    """One GPU's memory error state, as nvidia-smi reports it (None: the
    GPU does not report it, e.g. row remapping before Ampere or on a GPU
    in MIG mode with instances)."""

    ecc_uncorrected: Optional[int] = None   # volatile: since the driver
    rows_pending: Optional[bool] = None     # a row remap waits for a reset
    rows_failed: Optional[bool] = None      # a remap could not be done


class XidSeen(NamedTuple):
    """One NVIDIA Xid number on one GPU in this boot's kernel log."""

    gpu: str        # the GPU's PCI address (function 0)
    xid: int
    count: int      # how many times this boot
    message: str    # the last such line, as the kernel printed it


class GpuFaultFacts(NamedTuple):
    """What the host says of its GPUs' hardware health this boot: read
    only where monitoring or the health action asks, and the driver
    runs (nvidia-smi needs it)."""

    xids: Tuple[XidSeen, ...] = ()
    # GPU -> its counters, for the GPUs nvidia-smi answered for; None
    # where nvidia-smi gave no answer (why: unanswered)
    counters: Optional[Mapping[str, GpuErrorCounters]] = None
    unanswered: Optional[str] = None
    # the NVIDIA GPUs whose PCI function the nvidia driver holds (those
    # nvidia-smi should list)
    bound: FrozenSet[str] = frozenset()
    kernel_log_problem: Optional[str] = None   # why the log was not read


class SriovWork(NamedTuple):
    """What the host must do for its SR-IOV GPUs."""

    boot_unit: bool = False      # have the unit that enables VFs at boot
    enable_now: List[str] = []   # run it now: the SR-IOV GPUs it is for


class NovaPlan(NamedTuple):
    """What this host should tell nova-compute, or why it cannot."""

    sections: Optional[Dict[str, List[List[str]]]]  # None: Nova keeps its
    problem: Optional[Tuple[str, str]]  # (workload status, message)
    absent: List[str]                   # configured, not GPUs here
    waiting: List[str] = []             # SR-IOV GPUs without VFs yet
    host_mappings: Optional[Mappings] = None  # expanded
    selected: Dict[str, Dict[str, List[str]]] = {}  # type -> selector -> GPUs
    unmatched: List[str] = []  # selectors no GPU here matches
    vf_count: int = 0  # enabled SR-IOV VFs of this host's GPUs
    vf_types: Mappings = {}  # vendor-VFIO: type -> its VFs
    # SR-IOV: type -> {GPU: vGPUs Nova will offer there}
    sriov_capacity: Dict[str, Dict[str, int]] = {}
    # GPUs given several time-sliced sizes (NVIDIA's mixed-size mode)
    mixed: Dict[str, MixedGpu] = {}
    mixed_work: MixedWork = MixedWork()
    # GPUs whose mapping change waits for the guests using their vGPUs
    held: List[HeldGpu] = []
    held_whole_host: bool = False  # one type per host: everything waits
    resolution: Optional[Resolution] = None  # profile names
    resource_class: str = 'VGPU'  # vgpu-resource-class
    classes: Dict[str, str] = {}  # type -> its Placement resource class
    unnamed: List[str] = []  # per-profile types the driver has not named
    # types whose class change waits for the guests using them
    class_held: List[HeldClass] = []
    class_refusal: Optional[str] = None  # nova ignores per-profile here
    # device -> {type id: name} the driver offers (None: not running)
    offered: Optional[Offered] = None
    # type -> devices Nova gives it beyond the mappings (one type, < 29)
    nova_adds: Dict[str, List[str]] = {}
    # vendor-specific VFIO: the typed VFs are published live_migratable;
    # else, where typed VFs are published, what is below Nova's minimum
    # for that (libvirt, QEMU)
    live_migratable: bool = False
    migration_shortfall: List[str] = []
    # MIG-backed types mapped to a GPU in MIG mode without a GPU instance
    # of their profile: (type, GI profile, GPU); Nova gets none there
    without_instances: List[Tuple[str, str, str]] = []
