"""The records the charm's rooms hand each other.

Host readers (host/) return them, policy (nova/, driver/, health/) decides
from them, and neither imports the other for a type: what a PCI function,
a GPU as Nova can use it, a package or a vGPU in use looks like is said
once, here, with no I/O and no Juju.
"""
import re
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

NVIDIA_VENDOR_ID = '10de'
# VGA compatible controller (boards with display outputs enabled) and 3D
# controller (datacenter boards); audio, USB, serial and bridge functions
# (NVSwitch) of the same vendor are not GPUs.
GPU_CLASSES = ('0300', '0302')
_MARKETING_NAME = re.compile(r'\[(?P<model>[^\]]+)\]$')


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


class Versions(NamedTuple):
    """What live migration depends on, as installed (None: not found)."""

    nova: Optional[str]      # nova-common's Debian version
    libvirt: Optional[str]   # libvirt's Debian version
    qemu: Optional[str]      # qemu-system-x86's Debian version
    linux: Optional[str]     # the running kernel's release


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

    def to_dict(self) -> Dict[str, Any]:
        return {'sha256': self.sha256, 'package': self.package,
                'version': self.version, 'services': list(self.services)}

    @classmethod
    def from_dict(cls, data: Optional[Dict[str, Any]]
                  ) -> Optional['Installed']:
        if not data:
            return None
        return cls(data['sha256'], data['package'], data['version'],
                   tuple(data.get('services', ())))


class VgpuInUse(NamedTuple):
    """A vGPU a guest's definition uses, where it lives and its type."""

    device: str          # the GPU, or the SR-IOV VF, it lives on
    vgpu_type: str       # nvidia-<N>
    guests: List[str]


class BuildHost(NamedTuple):
    """What the host offers a DKMS build, as the package would find it."""

    kernel: str                 # the running kernel's release
    headers: bool               # its headers are where DKMS looks
    signed_only: Optional[str]  # why unsigned modules are refused, if so
    certificate: str            # what DKMS signs with (its certificate)
    certificate_exists: bool
    mokutil: bool               # installed
    enrolment: Optional[str]    # 'enrolled', 'pending', 'not enrolled'
