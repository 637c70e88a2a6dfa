"""Which guests use which vGPUs, and which of them run, from the files
libvirt keeps.

A guest's definition (/etc/libvirt/qemu/NAME.xml) says which vGPUs it
uses, running or not: Nova keeps a stopped guest defined, with its vGPU.
libvirt keeps a domain's live state (/run/libvirt/qemu/NAME.xml) only
while it runs (or is paused): its QEMU process holds the vGPU then. Both
are read as files, so the checks need neither a libvirt connection nor
the cloud's API.
"""
import glob
import os
import xml.etree.ElementTree as ElementTree
from typing import Dict, FrozenSet, List, Tuple

from nvidia_vgpu.host.hostfs import host_path

DOMAINS = '/etc/libvirt/qemu'
LIVE_STATE = '/run/libvirt/qemu'


def hostdev_users() -> Tuple[Dict[str, List[str]], Dict[str, List[str]]]:
    """(mdev UUID -> domains, PCI address -> domains) of every guest
    definition's host devices."""
    mdevs: Dict[str, List[str]] = {}
    pci: Dict[str, List[str]] = {}
    for path in sorted(glob.glob(os.path.join(host_path(DOMAINS), '*.xml'))):
        try:
            root = ElementTree.parse(path).getroot()
        except (ElementTree.ParseError, OSError):
            continue
        name = root.findtext('name') or os.path.basename(path)[:-4]
        for hostdev in root.iter('hostdev'):
            address = hostdev.find('source/address')
            if address is None:
                continue
            if hostdev.get('type') == 'mdev' and address.get('uuid'):
                mdevs.setdefault(address.get('uuid').lower(), []).append(name)
            elif hostdev.get('type') == 'pci':
                pci_address = _pci_address(address.attrib)
                if pci_address:
                    pci.setdefault(pci_address, []).append(name)
    return mdevs, pci


def _pci_address(attributes: Dict[str, str]) -> str:
    """0000:41:00.4 from libvirt's domain/bus/slot/function (hex)."""
    try:
        return '{:04x}:{:02x}:{:02x}.{:x}'.format(*(
            int(attributes[key], 16)
            for key in ('domain', 'bus', 'slot', 'function')))
    except (KeyError, ValueError):
        return ''


def running_domains() -> FrozenSet[str]:
    """Names of the domains libvirt runs now: those it keeps live state
    for. libvirt names the file after the domain, as it does the
    definition; the file is not parsed (the name is all that is asked),
    and one left behind while libvirtd was down counts as running."""
    return frozenset(
        os.path.basename(path)[:-len('.xml')] for path in glob.glob(
            os.path.join(host_path(LIVE_STATE), '*.xml')))


def mdev_users() -> Dict[str, List[str]]:
    """mdev UUID -> names of the domains whose definition uses it."""
    return hostdev_users()[0]


def pci_users() -> Dict[str, List[str]]:
    """PCI address -> names of the domains that have it as a hostdev (a
    VF on NVIDIA's vendor-specific VFIO driver is given that way)."""
    return hostdev_users()[1]
