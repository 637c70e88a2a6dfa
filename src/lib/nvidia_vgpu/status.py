"""The unit's waiting and ready statuses, from the plan and the snapshot.

Blocked states come first (the charm class checks them in the order an
operator should act on them); these are what is left once nothing
blocks: what the driver has not named yet, what Nova has not been given
and why, and the ready line naming what the host has.
"""
from collections import Counter
from typing import Iterable, List, Optional, Sequence, Tuple

from nvidia_vgpu import model
from nvidia_vgpu.nova import (
    capacity, guest_safety, nova_config, offer_gaps, profiles,
    resource_classes, vfio_migration)


def describe_gpus(gpus: Iterable[model.PciFunction]) -> str:
    """"2 NVIDIA GPUs (Tesla V100 PCIe 16GB)", for the unit's status."""
    models = Counter(gpu.model for gpu in gpus)
    total = sum(models.values())
    if not total:
        return 'no NVIDIA GPU'
    if len(models) == 1:
        detail = next(iter(models))
    else:
        detail = ', '.join('{} {}'.format(count, name)
                           for name, count in sorted(models.items()))
    return '{} NVIDIA GPU{} ({})'.format(total, '' if total == 1 else 's',
                                         detail)


NOT_GIVEN_YET = ('Nova has not been given this host\'s vGPU settings yet '
                 '(they go at the next hook)')


# (workload status, message), or None where the check has nothing to say
Status = Optional[Tuple[str, str]]


def waiting_or_ready(snapshot: model.HostSnapshot, plan: model.NovaPlan,
                     waiting_software: Optional[dict],
                     guests: Sequence[str], given: bool) -> Tuple[str, str]:
    """Once nothing blocks and the relation is there: what the driver has
    not named, then what Nova has not been given, then a GPU host that
    gives Nova nothing (blocked: its GPUs sit idle until the mappings
    name them), else ready."""
    nothing = offer_gaps.nothing_offered(snapshot, plan)
    return (waiting_for_driver(plan) or
            waiting_for_nova(plan, waiting_software, guests, given) or
            (('blocked', nothing) if nothing else ready(snapshot, plan)))


def waiting_for_driver(plan: model.NovaPlan) -> Status:
    """Profile names or per-profile classes the driver has not named."""
    if plan.resolution and plan.resolution.unresolved:
        return 'waiting', (
            'Waiting for the NVIDIA driver to resolve vGPU profile names {} '
            '(nothing is published for them until then)'.format(
                ', '.join(plan.resolution.unresolved)))
    if plan.unnamed:
        return 'waiting', (
            'Waiting for the NVIDIA driver to name vGPU types {} for their '
            'per-profile resource classes (nothing is published for them '
            'until then)'.format(', '.join(plan.unnamed)))
    return None


def waiting_for_nova(plan: model.NovaPlan, waiting_software: Optional[dict],
                     guests: Sequence[str], given: bool) -> Status:
    """Waiting while Nova lacks what this host should have."""
    pending = pending_for_nova(plan, waiting_software, guests, given)
    return ('waiting', pending) if pending else None


def pending_for_nova(plan: model.NovaPlan,
                     waiting_software: Optional[dict],
                     guests: Sequence[str], given: bool) -> Optional[str]:
    """What this host should have but nova-compute has not been given
    yet, and why; None when Nova has it all. given: whether the relation
    holds what the plan publishes."""
    pending = []
    if waiting_software:
        pending.append(guest_safety.software_waits_message(
            waiting_software['package'], waiting_software['version'],
            guests))
    if plan.held:
        pending.append(guest_safety.held_message(plan.held,
                                                 plan.held_whole_host))
    if plan.class_held:
        pending.append(resource_classes.held_message(plan.class_held))
    if not given:
        pending.append(NOT_GIVEN_YET)
    return '; '.join(pending) or None


def ready(snapshot: model.HostSnapshot,
          plan: model.NovaPlan) -> Tuple[str, str]:
    """'Unit is ready: ...' naming the GPUs and what each type got; where
    typed VFs cannot be live_migratable, what falls short first instead
    (the vGPUs work, but guests on them cannot move: not ready)."""
    message = describe_gpus(snapshot.functions)
    if not snapshot.functions:
        return 'active', 'Unit is ready: ' + message + ' on this host'
    if plan.vf_count:
        message += '; {} SR-IOV VFs'.format(plan.vf_count)
    if plan.live_migratable:
        message += '; ' + LIVE_MIGRATABLE
    for phrase in _phrases(snapshot, plan):
        message += '; ' + phrase
    short = plan.migration_shortfall
    if short:
        return 'active', NOT_LIVE_MIGRATABLE.format(
            vfio_migration.found_and_needed(snapshot.libvirt_version,
                                            snapshot.qemu_version),
            ' and '.join(short), 'is' if len(short) == 1 else 'are',
            message)
    return 'active', 'Unit is ready: ' + message


LIVE_MIGRATABLE = 'typed VFs live-migratable'
# Where Nova cannot be told so: not ready, what falls short first.
NOT_LIVE_MIGRATABLE = (
    'Typed VFs not live-migratable ({}): guests on them cannot be '
    'live-migrated until {} {} upgraded; {}')


def _phrases(snapshot: model.HostSnapshot,
             plan: model.NovaPlan) -> List[str]:
    phrases = capacity.summary(plan.sriov_capacity)
    phrases += nova_config.adds_summary(plan.nova_adds, {
        vf: gpu.address for gpu in snapshot.gpus
        for vf in gpu.virtual_functions})
    phrases += profiles.summary(plan.resolution)
    phrases += resource_classes.summary(plan.resource_class, plan.classes)
    for vgpu_type, by_selector in plan.selected.items():
        for selector, gpus in by_selector.items():
            if gpus:
                phrases.append('{} on {} GPU{} ({})'.format(
                    vgpu_type, len(gpus), '' if len(gpus) == 1 else 's',
                    selector))
    phrases += [offer_gaps.type_without_vgpus(*gap)
                for gap in plan.without_instances]
    if plan.unmatched:
        phrases.append('no GPU here matches ' + ', '.join(plan.unmatched))
    if plan.absent:
        phrases.append('not on this host: ' + ', '.join(plan.absent))
    return phrases
