"""What the kernel says about PCI devices in sysfs (/sys/bus/pci)."""
import os
from typing import Iterable, List, Set

from nvidia_vgpu.hostfs import host_path

PCI_DEVICES = '/sys/bus/pci/devices'
MDEV_BUS = '/sys/class/mdev_bus'


def _device(address: str, *parts: str) -> str:
    return host_path(os.path.join(PCI_DEVICES, address, *parts))


def virtual_functions(addresses: Iterable[str]) -> Set[str]:
    """The SR-IOV virtual functions among these addresses.

    A VF has a `physfn` link to its physical function; lspci cannot tell
    the two apart, they share vendor, device and class.
    """
    return {address for address in addresses
            if os.path.lexists(_device(address, 'physfn'))}


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
