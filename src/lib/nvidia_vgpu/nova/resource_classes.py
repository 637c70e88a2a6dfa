"""The Placement resource class each vGPU type is offered under.

By default (vgpu-resource-class=VGPU) Nova reports every mdev vGPU as the
standard VGPU class, as it always has, and a flavor asks for
resources:VGPU=1; with several GPU models in a cloud that lands on any of
them unless traits narrow it. With per-profile, each type is published in
a class named after NVIDIA's profile name, CUSTOM_VGPU_A40_2Q, in Nova's
[mdev_<type>] mdev_class: the name comes from the driver ("NVIDIA
A40-2Q", "GRID A40-2Q": the same profile on every driver branch), so
resources:CUSTOM_VGPU_A40_2Q=1 asks for that profile on every host that
has it, whatever type id the host's driver gives it.

On NVIDIA's vendor-specific VFIO driver (no mdev; Nova's PCI passthrough)
a VF cannot be VGPU: Nova's libvirt driver counts that class as its own
mdevs, and a flavor reaches a PCI device only through a [pci] alias. So
VGPU keeps what the charm has always published there (CUSTOM_NVIDIA_<N>,
alias nvidia-<N>), and per-profile publishes the same CUSTOM_VGPU_<profile>
class as the mdev path, under an alias named after the profile.

Nova's support differs per release (NovaOptions.mdev_class_types, from
Nova's own code): no mdev_class before Xena (24); Xena to Bobcat (24-28)
read it only where a host enables two or more types (with one, the driver
reads its config before the option exists and every vGPU stays VGPU);
Caracal (29) and later always. A per-profile choice Nova would ignore is
refused, never published.

Pure functions: data in, data out.
"""
import re
from typing import (Dict, Iterable, List, Mapping, NamedTuple, Optional,
                    Sequence, Set, Tuple)

from nvidia_vgpu import guest_words, model
from nvidia_vgpu.names import is_profile, profile_of, type_order
from nvidia_vgpu.nova import nova_config, releases

OPTION = 'vgpu-resource-class'
VGPU = nova_config.VGPU   # the default value names the class it keeps
PER_PROFILE = 'per-profile'
CHOICES = (VGPU, PER_PROFILE)
# Nova's own check of [mdev_<type>] mdev_class (nova/conf/devices.py) and
# Placement's limit on a resource class name.
NOVA_MDEV_CLASS = re.compile(r'VGPU|CUSTOM_[A-Z0-9_]+', re.ASCII)
MAX_CLASS_LENGTH = 255
CLASS_PREFIX = 'CUSTOM_VGPU_'

# vGPU type -> the resource class it is published under
Classes = Dict[str, str]


class ResourceClassError(ValueError):
    """The option cannot be used; the message says why and what to do."""

    def __init__(self, problem: str) -> None:
        super().__init__('Invalid {}: {}'.format(OPTION, problem))


def choice(value: Optional[str]) -> str:
    """The option's value, checked: exactly VGPU or per-profile.

    None (an older config without the option) is the default. Anything
    else is refused whole, never guessed at: vgpu, Per-Profile and a
    stray space are all refused, naming the two values.
    """
    if value is None:
        return VGPU
    if value in CHOICES:
        return value
    shown = ascii(value if len(value) <= 40 else value[:37] + '...')
    raise ResourceClassError(
        '{} is not one of its values: VGPU (every vGPU in Placement\'s '
        'VGPU class) or per-profile (one class per vGPU profile, e.g. '
        'CUSTOM_VGPU_A40_2Q)'.format(shown))


def profile_class(profile: str) -> str:
    """CUSTOM_VGPU_A40_2Q for A40-2Q (RTX6000-Ada-4Q: ..._RTX6000_ADA_4Q).

    profile must be a profile name as names.profile_of() returns it
    (letters, digits and dashes only): a ValueError otherwise, so that
    nothing but validated characters reaches nova.conf.
    """
    if not is_profile(profile):
        raise ValueError('{!r} is not a vGPU profile name'.format(profile))
    name = CLASS_PREFIX + profile.upper().replace('-', '_')
    if not (NOVA_MDEV_CLASS.fullmatch(name)
            and len(name) <= MAX_CLASS_LENGTH):
        raise ValueError('{!r} is not a Placement class'.format(name))
    return name


def default_class(vgpu_type: str, vendor_vfio: bool) -> str:
    """What VGPU means for a type: Nova's VGPU on mdev; on the
    vendor-specific VFIO path, the type's own class (a PCI device cannot
    be VGPU: see the module's docstring)."""
    return nova_config.resource_class(vgpu_type) if vendor_vfio else VGPU


class TypeClass(NamedTuple):
    """What a type is published as, and how a flavor asks for it."""

    profile: Optional[str]          # NVIDIA's profile name, if it has one
    resource_class: Optional[str]   # None: nothing to publish it under
    flavor_property: Optional[str]  # e.g. resources:VGPU=1


def alias_name(vgpu_type: str, resource_class: str) -> str:
    """The [pci] alias a flavor names for a vendor-specific VFIO type:
    the type id under the type's own class (nvidia-1148, as before), else
    the class itself (CUSTOM_VGPU_L40S_2Q): one name per profile, whatever
    id a driver branch gives it."""
    if resource_class == nova_config.resource_class(vgpu_type):
        return vgpu_type
    return resource_class


def flavor_property(vgpu_type: str, resource_class: str,
                    vendor_vfio: bool) -> str:
    """The flavor extra spec that asks for one vGPU of this class:
    resources:<class>=1, or on vendor-specific VFIO the [pci] alias (Nova
    claims a PCI device only for an alias, never for resources:)."""
    if vendor_vfio:
        return 'pci_passthrough:alias={}:1'.format(
            alias_name(vgpu_type, resource_class))
    return 'resources:{}=1'.format(resource_class)


def flavor_property_for(count: int, vgpu_type: str, resource_class: str,
                        vendor_vfio: bool) -> str:
    """The flavor extra specs that ask for `count` vGPUs of this class
    for one guest: on vendor-specific VFIO `count` devices of its [pci]
    alias; on the mdev path one request group each (Placement takes
    `resources:<class>=2` from one provider, which a VF's single vGPU
    cannot give), from different providers (group_policy=isolate: two
    GPUs, or two VFs)."""
    if vendor_vfio:
        return 'pci_passthrough:alias={}:{}'.format(
            alias_name(vgpu_type, resource_class), count)
    return ' '.join(['resources{}:{}=1'.format(group, resource_class)
                     for group in range(1, count + 1)] +
                    ['group_policy=isolate'])


def for_type(chosen: str, vgpu_type: str, driver_name: str,
             vendor_vfio: bool) -> TypeClass:
    """One type as list-vgpu-types shows it: its profile name, the class
    the charm publishes it under with this choice, and the flavor
    property that asks for it. Under per-profile a type whose driver
    name holds no profile name has no class (nothing is published)."""
    profile = profile_of(driver_name) if driver_name else None
    if chosen == PER_PROFILE:
        resource_class = profile_class(profile) if profile else None
    else:
        resource_class = default_class(vgpu_type, vendor_vfio)
    if resource_class is None:
        return TypeClass(profile, None, None)
    return TypeClass(profile, resource_class, flavor_property(
        vgpu_type, resource_class, vendor_vfio))


class HostClasses(NamedTuple):
    """The classes of the types this host publishes, and what stops some
    of them from being published."""

    classes: Classes                 # type -> class, for every type named
    unnamed: List[str] = []          # types the driver has not named yet
    problems: List[str] = []


def for_host(chosen: str, mdev_types: Iterable[str],
             vfio_types: Iterable[str],
             offered: Optional[Mapping[str, Mapping[str, str]]]
             ) -> HostClasses:
    """The class of each type this host publishes, per the choice.

    offered: device -> {type id: the driver's name}, as profiles.py reads
    it; None while the driver does not run. Under per-profile a type is
    named by what the driver calls it on this host (type ids are the
    driver's, so every device offering one names it alike); a type it
    does not name yet is left out (unnamed), never guessed; a name with
    no profile in it, or two names for one type, is a problem.
    """
    mdev_types, vfio_types = list(mdev_types), list(vfio_types)
    if chosen != PER_PROFILE:
        classes = {vgpu_type: default_class(vgpu_type, False)
                   for vgpu_type in mdev_types}
        classes.update({vgpu_type: default_class(vgpu_type, True)
                        for vgpu_type in vfio_types})
        return HostClasses(classes)
    names: Dict[str, Set[str]] = {}
    for table in (offered or {}).values():
        for type_id, name in table.items():
            if name:
                names.setdefault(type_id, set()).add(name)
    classes = {}
    unnamed: List[str] = []
    problems: List[str] = []
    for vgpu_type in sorted(set(mdev_types) | set(vfio_types),
                            key=type_order):
        found = sorted(names.get(vgpu_type, ()))
        found_profiles = {profile_of(name) for name in found}
        if not found:
            unnamed.append(vgpu_type)
        elif len(found_profiles) > 1 or None in found_profiles:
            problems.append(
                'the NVIDIA driver names {} {}, {}: no one vGPU profile to '
                'name its resource class after; set {}=VGPU'.format(
                    vgpu_type, ' and '.join(ascii(name) for name in found),
                    'which is no vGPU profile name' if len(found) == 1
                    else 'not one profile', OPTION))
        else:
            classes[vgpu_type] = profile_class(found_profiles.pop())
    return HostClasses(classes, unnamed, problems)


def refusal(chosen: str, options: model.NovaOptions,
            nova_version: str, mdev_types: int) -> Optional[str]:
    """Why this nova would not honour per-profile classes, or None.

    mdev_types: how many mdev types the host publishes ([pci] entries
    carry their class on every release that has them).
    """
    if chosen != PER_PROFILE:
        return None
    release = _release(nova_version)
    if options.mdev_class_types is None:
        return ('Invalid {}: per-profile needs Nova\'s [mdev_<type>] '
                'mdev_class, which {} does not have; use VGPU, or upgrade '
                'to Caracal (nova 29) or later'.format(OPTION, release))
    if 0 < mdev_types < options.mdev_class_types:
        return ('Invalid {}: {} ignores [mdev_<type>] mdev_class on a host '
                'with only {} vGPU type{} (its vGPUs would stay VGPU; Nova '
                'fixed it in Caracal, nova 29); use VGPU, give this host\'s '
                'GPUs at least {} types, or upgrade to Caracal or '
                'later'.format(
                    OPTION, release, mdev_types,
                    '' if mdev_types == 1 else 's',
                    options.mdev_class_types))
    return None


def _release(nova_version: str) -> str:
    """'OpenStack Yoga (nova 25.2.0)' from nova-common's version."""
    name = releases.release_for_nova_version(nova_version)
    return '{}(nova {})'.format(
        'OpenStack {} '.format(name.capitalize()) if name else '',
        releases.upstream_version(nova_version))


def hold_for_guests(wanted: Classes, published: Optional[Classes],
                    vgpus: Iterable[model.VgpuInUse],
                    vendor_vfio: Iterable[str]
                    ) -> Tuple[Classes, List[model.HeldClass]]:
    """The classes to publish now, and the types whose change waits.

    Placement refuses to take a class away from a provider whose
    inventory guests hold, so Nova would fail to report the host at all
    until they are gone. A type that guests' vGPUs use keeps the class
    it was last published under until then; one class per type (one
    [mdev_<type>] group), so all its devices wait together. Without a
    record (the charm published before it had classes) Nova had the
    defaults: VGPU, or CUSTOM_NVIDIA_<N> on vendor-specific VFIO.

    vgpus: the vGPUs guests use here (guest_safety.vgpus_in_use).
    """
    vfio = set(vendor_vfio)
    guests: Dict[str, Set[str]] = {}
    for vgpu in vgpus:
        guests.setdefault(vgpu.vgpu_type, set()).update(vgpu.guests)
    effective = dict(wanted)
    held: List[model.HeldClass] = []
    for vgpu_type in sorted(wanted, key=type_order):
        if not guests.get(vgpu_type):
            continue
        if published is None:
            before: Optional[str] = default_class(vgpu_type,
                                                  vgpu_type in vfio)
        else:
            before = published.get(vgpu_type)
        if before is None or before == wanted[vgpu_type]:
            continue
        effective[vgpu_type] = before
        held.append(model.HeldClass(vgpu_type, before, wanted[vgpu_type],
                                    sorted(guests[vgpu_type])))
    return effective, held


def held_message(held: Sequence[model.HeldClass]) -> str:
    """The status line for class changes that wait for guests."""
    parts = ['{} keeps {} for {} (wanted: {})'.format(
        item.vgpu_type, item.keeps, guest_words.named(item.guests),
        item.wants) for item in held]
    return ('Change of {} waits for guests using vGPUs: {}; it applies '
            'once they are gone ({})'.format(
                OPTION, '; '.join(parts), guest_words.RETYPE_FREES))


def summary(chosen: str, classes: Classes) -> List[str]:
    """Status phrases naming each type's class, under per-profile only
    (VGPU is what Nova has always shown)."""
    if chosen != PER_PROFILE:
        return []
    return ['{} as {}'.format(vgpu_type, classes[vgpu_type])
            for vgpu_type in sorted(classes, key=type_order)]
