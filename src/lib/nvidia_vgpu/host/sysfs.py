"""What the kernel says about PCI devices in sysfs (/sys/bus/pci)."""
import os
from typing import Dict, Iterable, List, Optional, Set

from nvidia_vgpu.host.hostfs import host_path
from nvidia_vgpu.model import VgpuType
from nvidia_vgpu import model

PCI_DEVICES = '/sys/bus/pci/devices'
MDEV_BUS = '/sys/class/mdev_bus'
MDEV_DEVICES = '/sys/bus/mdev/devices'


def _device(address: str, *parts: str) -> str:
    return host_path(os.path.join(PCI_DEVICES, address, *parts))


def device_present(address: str) -> bool:
    """Whether a PCI function (a GPU, a VF) is on the host now."""
    return os.path.isdir(_device(address))


def virtual_functions(addresses: Iterable[str]) -> Set[str]:
    """The SR-IOV virtual functions among these addresses.

    A VF has a `physfn` link to its physical function; lspci cannot tell
    the two apart, they share vendor, device and class.
    """
    return {address for address in addresses
            if os.path.lexists(_device(address, 'physfn'))}


def sriov_total_vfs(address: str) -> int:
    """How many VFs the device supports; 0 for a GPU without SR-IOV."""
    value = _read(_device(address, 'sriov_totalvfs'))
    return int(value) if value and value.isdigit() else 0


def sriov_virtual_functions(address: str) -> List[str]:
    """The enabled VFs of a physical function, in VF order (virtfn0...)."""
    directory = _device(address)
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    links = sorted((int(name[len('virtfn'):]), name) for name in names
                   if name.startswith('virtfn') and
                   name[len('virtfn'):].isdigit())
    return [os.path.basename(os.readlink(os.path.join(directory, name)))
            for _, name in links]


def mdev_types(address: str) -> Set[str]:
    """The vGPU (mdev) types the driver offers on this device."""
    directory = host_path(os.path.join(MDEV_BUS, address,
                                       'mdev_supported_types'))
    try:
        return set(os.listdir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return set()


def mdev_type_names(address: str) -> Dict[str, str]:
    """The device's mdev types with the name the driver gives each
    ("GRID V100-8Q"): what profile names in the mappings are matched
    against."""
    directory = host_path(os.path.join(MDEV_BUS, address,
                                       'mdev_supported_types'))
    return {type_id: _read(os.path.join(directory, type_id, 'name')) or ''
            for type_id in mdev_types(address)}


def _read(path: str) -> Optional[str]:
    """A sysfs attribute's text, stripped; None if it cannot be read.

    os.read on a descriptor, not open(): a large GPU server has tens of
    thousands of these small files to read in one action.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(descriptor, 65536).decode('utf-8', 'replace').strip()
    except OSError:
        return None
    finally:
        os.close(descriptor)


def read_mdev_types(address: str,
                    known: Optional[Dict[str, VgpuType]] = None
                    ) -> List[VgpuType]:
    """Each type the driver offers on a device, read from its own
    mdev_supported_types directory only (never a walk of /sys).

    known: types already read on another device of the same GPU (a
    sibling VF); their names and descriptions are taken from there and
    only the free instances, which differ per device, are read here.
    """
    directory = host_path(os.path.join(MDEV_BUS, address,
                                       'mdev_supported_types'))
    try:
        type_ids = sorted(os.listdir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return []
    types = []
    for type_id in type_ids:
        base = '{}/{}/'.format(directory, type_id)
        available = _read(base + 'available_instances')
        same = (known or {}).get(type_id)
        types.append(VgpuType(
            type_id=type_id, address=address,
            name=same.name if same else _read(base + 'name') or '',
            description=same.description if same else
            _read(base + 'description') or '',
            available_instances=int(available)
            if available and available.isdigit() else None))
    return types


def mdev_type_description(address: str, type_id: str) -> Optional[str]:
    """One offered type's description (None if not offered), without
    reading the device's other types."""
    return _read(host_path(os.path.join(
        MDEV_BUS, address, 'mdev_supported_types', type_id, 'description')))


def mdev_type_name(address: str, type_id: str) -> Optional[str]:
    """One offered type's name (None if not offered), without reading
    the device's other types."""
    return _read(host_path(os.path.join(
        MDEV_BUS, address, 'mdev_supported_types', type_id, 'name')))


def available_instances(address: str, type_id: str) -> Optional[int]:
    """How many more vGPUs of one type the driver can create on a
    device now (None if it does not offer the type), reading that one
    file only."""
    found = _read(host_path(os.path.join(
        MDEV_BUS, address, 'mdev_supported_types', type_id,
        'available_instances')))
    return int(found) if found and found.isdigit() else None


def mediated_devices() -> List[model.Mdev]:
    """Every mdev that exists now (/sys/bus/mdev/devices)."""
    directory = host_path(MDEV_DEVICES)
    try:
        uuids = sorted(os.listdir(directory))
    except FileNotFoundError:
        return []
    mdevs = []
    for uuid in uuids:
        device = os.path.realpath(os.path.join(directory, uuid))
        type_link = os.path.join(device, 'mdev_type')
        type_id = (os.path.basename(os.path.realpath(type_link))
                   if os.path.lexists(type_link) else '')
        mdevs.append(model.Mdev(
            uuid, os.path.basename(os.path.dirname(device)), type_id))
    return mdevs


def create_mdev(parent: str, type_id: str, uuid: str) -> None:
    """Make a vGPU: its UUID written to its type's create file on its
    parent (OSError where the parent cannot take it)."""
    with open(host_path(os.path.join(MDEV_BUS, parent,
                                     'mdev_supported_types', type_id,
                                     'create')), 'w') as stream:
        stream.write(uuid)


def remove_mdev(uuid: str) -> None:
    """Take a vGPU away (OSError where it cannot go, e.g. in use)."""
    with open(host_path(os.path.join(MDEV_DEVICES, uuid, 'remove')),
              'w') as stream:
        stream.write('1')


# NVIDIA's vGPU User Guide, "Placing a vGPU on a Physical GPU in
# Mixed-Size Mode": written before the vGPU's VM starts.
PLACEMENT_PARAMS = 'nvidia/vgpu_params'
PLACEMENT = 'vgpu-placement-id={}'


def set_placement(uuid: str, placement: int) -> None:
    """Where the vGPU Manager puts a vGPU on a GPU in mixed-size mode,
    from its VM's next start (OSError where the vGPU has no such file)."""
    with open(host_path(os.path.join(MDEV_DEVICES, uuid, PLACEMENT_PARAMS)),
              'w') as stream:
        stream.write(PLACEMENT.format(placement))


def creatable_vgpu_types(address: str) -> Optional[Dict[int, str]]:
    """On NVIDIA's vendor-specific VFIO driver (no mdev): the vGPU types
    this VF can take, {type id: name}; None where the VF has no such
    table (the mdev framework is in use, or no VF)."""
    text = _read(_device(address, 'nvidia', 'creatable_vgpu_types'))
    if text is None:
        return None
    types = {}
    for line in text.splitlines():
        number, colon, name = line.partition(':')
        if colon and number.strip().isdigit():
            types[int(number.strip())] = name.strip()
    return types


def set_vgpu_type(address: str, type_id: int) -> bool:
    """Give a VF its vGPU type (vendor-specific VFIO); True if changed."""
    path = _device(address, 'nvidia', 'current_vgpu_type')
    if _read(path) == str(type_id):
        return False
    with open(path, 'w') as stream:
        stream.write(str(type_id))
    return True


def clear_vgpu_type(address: str) -> Optional[str]:
    """Take a VF's vGPU type away (vendor-specific VFIO), freeing what
    it held; what went wrong, or None."""
    try:
        set_vgpu_type(address, 0)
    except OSError as error:
        return 'clearing the vGPU type of VF {}: {}'.format(
            address, error.strerror or error)
    return None


def device_id(address: str) -> str:
    """The PCI device id of a function, e.g. 26b9 (as Nova wants it)."""
    value = _read(_device(address, 'device')) or ''
    return value.lower().replace('0x', '')


def current_vgpu_type(address: str) -> Optional[int]:
    """The vGPU type a VF has on the vendor-specific VFIO driver (0: no
    vGPU); None where the VF has no such file (mdev, or no VF)."""
    value = _read(_device(address, 'nvidia', 'current_vgpu_type'))
    return int(value) if value and value.isdigit() else None
