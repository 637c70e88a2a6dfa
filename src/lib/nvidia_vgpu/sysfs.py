"""What the kernel says about PCI devices in sysfs (/sys/bus/pci)."""
import os
from typing import Iterable, Set

from nvidia_vgpu.hostfs import host_path

PCI_DEVICES = '/sys/bus/pci/devices'


def _device(address: str, *parts: str) -> str:
    return host_path(os.path.join(PCI_DEVICES, address, *parts))


def virtual_functions(addresses: Iterable[str]) -> Set[str]:
    """The SR-IOV virtual functions among these addresses.

    A VF has a `physfn` link to its physical function; lspci cannot tell
    the two apart, they share vendor, device and class.
    """
    return {address for address in addresses
            if os.path.lexists(_device(address, 'physfn'))}
