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
from typing import Dict, FrozenSet, List, NamedTuple

from nvidia_vgpu.host.hostfs import host_path

DOMAINS = '/etc/libvirt/qemu'
LIVE_STATE = '/run/libvirt/qemu'


class Definitions(NamedTuple):
    """What the guests' definitions say of the host's devices."""

    mdevs: Dict[str, List[str]]        # mdev UUID -> domains
    pci: Dict[str, List[str]]          # PCI address -> domains
    # domain -> why its definition could not be read: which vGPUs it
    # uses is unknown
    unreadable: Dict[str, str]


def definitions() -> Definitions:
    """The host devices of every guest definition."""
    found = Definitions({}, {}, {})
    for path in sorted(glob.glob(os.path.join(host_path(DOMAINS), '*.xml'))):
        name = _shown(os.path.basename(path)[:-len('.xml')])
        try:
            root = _parse(path)
        except (ElementTree.ParseError, OSError, ValueError) as error:
            found.unreadable[name] = _shown(str(error))[:200]
            continue
        name = _shown(root.findtext('name') or '') or name
        for hostdev in root.iter('hostdev'):
            address = hostdev.find('source/address')
            if address is None:
                continue
            if hostdev.get('type') == 'mdev' and address.get('uuid'):
                found.mdevs.setdefault(address.get('uuid').lower(),
                                       []).append(name)
            elif hostdev.get('type') == 'pci':
                pci_address = _pci_address(address.attrib)
                if pci_address:
                    found.pci.setdefault(pci_address, []).append(name)
    return found


def _parse(path: str) -> ElementTree.Element:
    """A definition's root element. libvirt writes no DTD: a file that
    declares entities is refused before expat expands them (bionic's
    expat has no limit on that)."""
    with open(path, 'rb') as stream:
        text = stream.read()
    if b'<!ENTITY' in text or b'<!DOCTYPE' in text:
        raise ValueError('it declares a DTD or entities, which libvirt '
                         'never writes')
    return ElementTree.fromstring(text)


def _shown(text: str) -> str:
    """A name or an error as a status or a log line may show it: one
    line of printable characters."""
    return ''.join(char if char.isprintable() else '?'
                   for char in ' '.join(text.split()))


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
