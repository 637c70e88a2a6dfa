"""Whether Nova can live-migrate guests on this host's typed VFs.

On NVIDIA's vendor-specific VFIO driver (no mdev) a vGPU is a VF passed
through by Nova's PCI tracker (nova_config.pci_passthrough_section). From
Epoxy (Nova 31) Nova live-migrates a guest's PCI device only where its
[pci] device_spec says `live_migratable` and the flavor's alias asks for
it (conductor's _check_can_migrate_pci refuses any other flavor-alias
request), and nova-compute refuses to start at all when any device_spec
carries the tag while libvirt or QEMU is older than Nova's minimums for
VFIO variant drivers (LibvirtDriver._check_pci_whitelist). So the charm
tags its VFs only where both versions are known and high enough, never
with "no" (any value trips that check), and says so where it cannot.

Pure functions of the Debian versions dpkg reported.
"""
from typing import List, Optional, Tuple

from nvidia_vgpu.nova import releases

# nova/virt/libvirt/driver.py MIN_VFIO_PCI_VARIANT_LIBVIRT_VERSION and
# MIN_VFIO_PCI_VARIANT_QEMU_VERSION, as read in Nova 34 (nova_tests
# compare them with the installed Nova's own)
MINIMUMS: Tuple[Tuple[str, Tuple[int, ...]], ...] = (
    ('libvirt', (10, 0, 0)), ('QEMU', (8, 2, 2)))
# The device_spec and alias key, and the only value the charm writes.
TAG = 'live_migratable'
YES = 'yes'


def _meets(version: Optional[str], minimum: Tuple[int, ...]) -> bool:
    """A Debian version against an upstream minimum; unknown (None or
    unreadable) never meets it. 10.0 counts as 10.0.0, as libvirt's
    integer version does."""
    found = releases.upstream_tuple(version) if version else ()
    if not found:
        return False
    padded = found + (0,) * (len(minimum) - len(found))
    return padded >= minimum


def shortfall(libvirt: Optional[str], qemu: Optional[str]) -> List[str]:
    """The components below Nova's minimum, as operators name them
    ('libvirt', 'QEMU'); empty where the VFs can be live_migratable."""
    found = {'libvirt': libvirt, 'QEMU': qemu}
    return [name for name, minimum in MINIMUMS
            if not _meets(found[name], minimum)]


def found_and_needed(libvirt: Optional[str], qemu: Optional[str]) -> str:
    """'this host has libvirt 9.0.0 and QEMU 8.2.2; Nova needs libvirt
    10.0.0 and QEMU 8.2.2': what a status line names ('no libvirt
    package' where dpkg has none)."""
    found = {'libvirt': libvirt, 'QEMU': qemu}
    return 'this host has {}; Nova needs {}'.format(
        ' and '.join('{} {}'.format(name, releases.upstream_version(
            found[name])) if found[name] else 'no {} package'.format(name)
            for name, _ in MINIMUMS),
        ' and '.join('{} {}'.format(name, '.'.join(
            str(part) for part in minimum)) for name, minimum in MINIMUMS))
