"""Which guests use which vGPUs, from libvirt's own domain definitions.

Read from the files libvirt keeps (/etc/libvirt/qemu/*.xml), so the check
needs neither a libvirt connection nor the cloud's API.
"""
import glob
import os
import xml.etree.ElementTree as ElementTree
from typing import Dict, List

from nvidia_vgpu.hostfs import host_path

DOMAINS = '/etc/libvirt/qemu'


def mdev_users() -> Dict[str, List[str]]:
    """mdev UUID -> names of the domains whose definition uses it."""
    users: Dict[str, List[str]] = {}
    for path in sorted(glob.glob(os.path.join(host_path(DOMAINS), '*.xml'))):
        try:
            root = ElementTree.parse(path).getroot()
        except (ElementTree.ParseError, OSError):
            continue
        name = root.findtext('name') or os.path.basename(path)[:-4]
        for hostdev in root.iter('hostdev'):
            if hostdev.get('type') != 'mdev':
                continue
            address = hostdev.find('source/address')
            uuid = address.get('uuid') if address is not None else None
            if uuid:
                users.setdefault(uuid.lower(), []).append(name)
    return users
