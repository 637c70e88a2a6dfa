"""What each OpenStack release family's Nova takes, as one table.

A family starts at a release and lasts until the next one: Nova's option
names, how many vGPU types it honours, and who keeps vGPUs across a
reboot. A new Nova release that changes any of these is one more row,
not one more charm class or `if release >=` branch.
"""
from typing import NamedTuple, Optional, Tuple

from nvidia_vgpu import model
from nvidia_vgpu.nova import nova_config, releases


class Family(NamedTuple):
    """The rules of the releases from `release` to the next family's."""

    release: str
    options: model.NovaOptions
    # nova's upstream version from which several types are honoured
    # (None: from the family's first release; () : never in this family)
    several_types_from: Optional[Tuple[int, ...]]
    single_type_reason: str
    # the charm's boot unit recreates guests' vGPUs (before Nova keeps
    # them itself through libvirt, which needs mdevctl)
    restores_mdevs: bool
    # Nova defines the vGPUs it creates (libvirt, through mdevctl) and
    # starts only defined ones at start
    nova_persists_mdevs: bool
    # nova's upstream version from which a flavor's several request
    # groups of vGPUs each get one (before, the libvirt driver takes the
    # first group's only: bug 1758086); () : not in this family
    several_vgpus_per_guest_from: Tuple[int, ...] = ()


_QUEENS_REASON = ('OpenStack Queens to Train use only the first type of '
                  '[devices] enabled_vgpu_types')
_USSURI_REASON = ('nova 21 (Ussuri) and 22 before 22.2.1 use only the '
                  'first type (Nova bug fixed in 22.2.1)')

# Oldest first. Every nova 21.x registers the per-type groups after the
# driver has read them, so all but the first type are ignored until
# 22.2.1. From Caracal, [mdev_<type>] max_instances exists; the charm does
# not need it (capacity.py says why). From Dalmatian, Nova persists vGPUs
# through libvirt, which needs mdevctl (instances fail to start without
# it). From Epoxy, VFs typed by NVIDIA's vendor-specific VFIO driver are
# offered through PCI passthrough ([pci] device_spec, managed: no). From
# Gazpacho, a guest gets a vGPU from each request group of its flavor
# (releasenotes/notes/bug-1758086-e9d147380d149789.yaml).
FAMILIES: Tuple[Family, ...] = (
    Family('queens', nova_config.QUEENS, (), _QUEENS_REASON, True, False),
    Family('ussuri', nova_config.USSURI, (), _USSURI_REASON, True, False),
    Family('victoria', nova_config.USSURI, (22, 2, 1), _USSURI_REASON,
           True, False),
    Family('xena', nova_config.XENA, None, _USSURI_REASON, True, False),
    Family('caracal', nova_config.CARACAL, None, _USSURI_REASON, True,
           False),
    Family('dalmatian', nova_config.CARACAL, None, _USSURI_REASON, False,
           True),
    Family('epoxy', nova_config.EPOXY, None, _USSURI_REASON, False, True,
           several_vgpus_per_guest_from=(33, 0, 0)),
)


def family_of(nova_version: Optional[str]) -> Family:
    """The family of the installed nova-common; the newest where nova is
    not installed yet (nothing is published to Nova until it is)."""
    release = (releases.release_for_nova_version(nova_version)
               if nova_version else None)
    if release is None:
        return FAMILIES[-1]
    position = releases.RELEASES.index(release)
    return [family for family in FAMILIES
            if releases.RELEASES.index(family.release) <= position][-1]


def type_limit(family: Family, nova_version: str) -> Optional[int]:
    """How many vGPU types this nova honours (None: no limit)."""
    if family.several_types_from is None:
        return None
    if (family.several_types_from and releases.upstream_tuple(
            nova_version) >= family.several_types_from):
        return None
    return 1


def several_vgpus_per_guest(nova_version: Optional[str],
                            vendor_vfio: bool) -> bool:
    """Whether this nova gives one guest several vGPUs, each from a
    provider of its own (False where nova is not installed: not known).
    On vendor-specific VFIO a vGPU is a PCI device, and a flavor's alias
    takes as many as it names wherever Nova takes typed VFs at all; on
    the mdev path, from the release whose libvirt driver creates one for
    each request group of the flavor."""
    if not nova_version:
        return False
    family = family_of(nova_version)
    if vendor_vfio:
        return family.options.managed_no_vfs
    threshold = family.several_vgpus_per_guest_from
    return bool(threshold) and releases.upstream_tuple(
        nova_version) >= threshold


def nova_rules(nova_version: Optional[str]) -> model.NovaRules:
    """What the installed release's Nova takes, for the plan."""
    family = family_of(nova_version)
    return model.NovaRules(
        family.options,
        type_limit(family, nova_version) if nova_version else None,
        family.single_type_reason)
