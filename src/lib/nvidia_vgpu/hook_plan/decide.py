"""The hook's whole plan, from the facts the hook read and the options.

One pure function, `decide`, says everything the hook will do and show:
what nova-compute gets and whether it is published now, how MIG GPUs are
cut and what their boot units make, which SR-IOV GPUs get VFs, what the
boot programs read, which guests a change waits for, the health facts
and the unit's status. The apply side (nvidia_vgpu/apply/) only carries
it out, and after changing the host reads it again and decides again.
The preview-config action runs it with other option values.
"""
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

from nvidia_vgpu import model
from nvidia_vgpu.driver import restore_plan, sriov
from nvidia_vgpu.health import verdict
from nvidia_vgpu.hook_plan import facts as hook_facts, precedence, survey
from nvidia_vgpu.mig import layout as mig_layout, plan as mig_plan
from nvidia_vgpu.monitoring import report
from nvidia_vgpu.nova import (
    families, guest_safety, mappings, mixed_sizes, nova_config, offer_gaps,
    plan as nova_plan, resource_classes)


class BootPlan(NamedTuple):
    """What the next boot needs to give guests their vGPUs back."""

    restores_mdevs: bool                 # the restore unit recreates mdevs
    host_mappings: Optional[model.Mappings]   # None: keep what it has
    vf_types: Dict[str, int]             # VF -> the type number it takes
    # the driver's names of the MIG-backed ones (str(number) -> name)
    vf_type_names: Dict[str, str]
    sriov: model.SriovWork = model.SriovWork()
    mig_record: Dict[str, List[str]] = {}   # what the MIG units make
    # running vGPUs guests use to make persistent (mdevctl define)
    to_define: Tuple[model.Mdev, ...] = ()
    # GPU that mixes sizes -> {VF: [its type, its placement ID]}
    placements: Dict[str, Dict[str, List[object]]] = {}


class HookPlan(NamedTuple):
    """Everything one hook does and shows."""

    family: families.Family
    nova: model.NovaPlan
    settings: Dict[str, object]      # the nova-vgpu relation's settings
    publish: bool                    # hand them to nova-compute now
    layout_problem: Optional[str]    # why mig-layout is refused
    mig: model.MigPlan
    boot: BootPlan
    running: List[model.VgpuInUse]   # vGPUs running guests use
    health: verdict.HostFacts        # what the status' drift is made of
    status: precedence.StatusDecision
    # where the facts have detail: the health facts with free vGPUs,
    # services and boot units, and the monitoring document made of them
    detail: Optional[verdict.HostFacts] = None
    monitoring: Optional[Dict[str, object]] = None


class Reading(NamedTuple):
    """How much of the host a hook reads, decided before reading it."""

    names: bool    # the driver's names of the vGPU types
    mig: bool      # nvidia-smi's MIG state


def reading(config: Mapping[str, Any],
            unit: hook_facts.UnitState) -> Reading:
    """Profile names, per-profile classes and MIG-backed types need the
    driver's names of the types; a layout to apply, or one applied
    before to undo, needs the MIG state."""
    mig = mig_asked(config, unit)
    return Reading(nova_plan.needs_type_names(
        config.get(mappings.OPTION),
        config.get(resource_classes.OPTION)) or mig, mig)


def mig_asked(config: Mapping[str, Any], unit: hook_facts.UnitState) -> bool:
    """A layout to apply, or one applied before to undo."""
    return bool((config.get(mig_layout.OPTION) or '').strip()
                or unit.mig_record)


def decide(facts: hook_facts.HookFacts, config: Mapping[str, Any],
           unit: hook_facts.UnitState) -> HookPlan:
    """The hook's plan: pure, from what it read and the options."""
    host = facts.host
    family = families.family_of(host.nova_version)
    layout_problem = _layout_problem(config)
    mig = _mig(host, config, unit, layout_problem)
    nova = nova_plan.plan_nova(
        host, config.get(mappings.OPTION),
        config.get(resource_classes.OPTION),
        families.nova_rules(host.nova_version),
        unit.published_mappings, unit.published_classes)
    settings = nova_settings(nova)
    running = nova_plan.vgpus_running(host)
    health = health_facts(host, nova, unit, mig)
    status = precedence.decide(precedence.StatusFacts(
        host=host, unit=unit, relations=facts.relations, nova=nova,
        layout_problem=layout_problem, mig=mig, health=health,
        running_guests=guest_safety.guest_names(running),
        given=_given(facts.relations, settings), config=config))
    detail = _detail(host, health, facts.detail)
    return HookPlan(
        family, nova, settings,
        not (nova.waiting and (facts.update_status or
                               host.driver is not None)) and
        not mixed_sizes.unsettled(host, nova.mixed),
        layout_problem, mig, _boot(host, family, nova, mig, unit), running,
        health, status, detail, report.document(
            detail, facts.detail.unit, facts.detail.health_command,
            shown(status, unit.paused)) if detail is not None else None)


# charmhelpers' paused status (os_utils._ows_check_if_paused), which
# charms.openstack shows before the charm's own checks.
PAUSED = ('maintenance',
          "Paused. Use 'resume' action to resume normal service.")


def shown(status: precedence.StatusDecision,
          paused: bool = False) -> Tuple[str, str]:
    """The status the unit shows, as far as the plan knows: a series
    upgrade held for guests, else paused, else the charm's blocked and
    last answers (charms.openstack's services check comes from the
    host: the NRPE services check reports it)."""
    answers = [status.held_upgrade] + [PAUSED] * paused + [
        status.blocked, status.last]
    for state, message in answers:
        if state is not None:
            return state, message or ''
    return 'active', 'Unit is ready'


def _detail(host: model.HostSnapshot, health: verdict.HostFacts,
            detail: Optional[hook_facts.Detail]
            ) -> Optional[verdict.HostFacts]:
    """The health facts as the health report and monitoring show them:
    the free vGPUs of the types Nova was given (survey.py says how they
    are counted), the services, the boot units, the GPUs' hardware
    faults and the MIG GPUs' instances."""
    if detail is None:
        return None
    return health._replace(
        gpus=survey.with_free(health.gpus, host, health.published),
        services=detail.services, boot_units=detail.boot_units,
        gpu_faults=detail.gpu_faults, mig=host.mig or {})


def nova_settings(nova: model.NovaPlan) -> Dict[str, object]:
    """The relation settings this host should have published now (no
    vGPU configuration while the option has a problem: Nova keeps what
    it has).

    `services` is always empty: nova-compute's pause, resume,
    openstack-upgrade and series upgrade stop or restart every service
    listed there, under running guests, from data a hook set before they
    started. The vGPU Manager is this unit's to stop (its pause action
    waits for the guests); an earlier revision's list is cleared by the
    first hook after the upgrade.
    """
    settings: Dict[str, object] = {'services': []}
    if nova.sections is not None:
        settings['subordinate_configuration'] = \
            nova_config.subordinate_configuration(nova.sections)
    return settings


def _given(relations: hook_facts.Relations,
           settings: Mapping[str, object]) -> bool:
    """Whether every nova-vgpu relation already holds these settings."""
    return all(data.get(key) == value
               for data in relations.nova_vgpu or ()
               for key, value in settings.items())


def _layout_problem(config: Mapping[str, Any]) -> Optional[str]:
    """Why mig-layout cannot be read (then nothing of MIG changes)."""
    try:
        mig_layout.parse(config.get(mig_layout.OPTION))
    except mig_layout.LayoutError as error:
        return str(error)
    return None


def _mig(host: model.HostSnapshot, config: Mapping[str, Any],
         unit: hook_facts.UnitState,
         layout_problem: Optional[str]) -> model.MigPlan:
    """What mig-layout asks of this host now, and what waits."""
    if layout_problem or not mig_asked(config, unit):
        return model.MigPlan()
    return mig_plan.plan(
        mig_layout.parse(config.get(mig_layout.OPTION)), host.gpus,
        host.mig, mig_plan.users_by_gpu(host),
        applied=sorted(unit.mig_record),
        idle_typed=mig_plan.idle_typed_vfs(host))


def _boot(host: model.HostSnapshot, family: families.Family,
          nova: model.NovaPlan, mig: model.MigPlan,
          unit: hook_facts.UnitState) -> BootPlan:
    """What the boot units and their records should hold.

    From Dalmatian Nova defines the vGPUs it creates and recreates none
    at start, so those created before (under an older release, or by
    the restore unit) would be gone at the next reboot: they are made
    persistent too, and the restore unit keeps recreating every vGPU a
    guest uses until none without a definition is left (a definition
    that could not be made, or a vGPU missing now). An OpenStack upgrade
    is thus safe whichever hook, or reboot, comes first after it.
    """
    transient = restore_plan.transient_in_use(host)
    vf_types = restore_plan.vf_type_numbers(nova.vf_types or {})
    return BootPlan(
        family.restores_mdevs or bool(transient),
        nova.host_mappings, vf_types,
        restore_plan.mig_backed_names(set(vf_types.values()),
                                      host.offered or {}),
        sriov.work(host, unit.installed is not None),
        mig_plan.boot_record(mig, unit.mig_record),
        restore_plan.to_define(host, transient)
        if family.nova_persists_mdevs else (),
        mixed_sizes.boot_record(host, nova.mixed))


def health_facts(host: model.HostSnapshot, nova: model.NovaPlan,
                 unit: hook_facts.UnitState,
                 mig: model.MigPlan) -> verdict.HostFacts:
    """What the health verdict is made from, as far as the hook read the
    host (the vgpu-health action and monitoring add each device's free
    instances, the services and the boot units: apply/monitoring.py)."""
    models = {gpu.address: gpu.model for gpu in host.functions}
    waiting = unit.waiting_software
    return verdict.HostFacts(
        gpus=[survey.gpu_state(gpu, models.get(gpu.address, ''),
                               nova.offered or {}, host.vf_current_types)
              for gpu in host.gpus],
        driver=host.driver, installed=unit.installed,
        published=unit.published_mappings, wanted=nova.host_mappings,
        mdevs=[(mdev.uuid, mdev.parent, mdev.type_id)
               for mdev in host.mdevs],
        mdev_users=host.mdev_users, pci_users=host.pci_users,
        running_guests=host.running_guests, recorded=host.recorded_mdevs,
        recorded_vf_types=host.recorded_vf_types,
        software_problem=unit.software_problem,
        waiting_software=(waiting['package'], waiting['version'])
        if waiting else None, held=nova.held,
        held_whole_host=nova.held_whole_host, nova_adds=nova.nova_adds,
        config_problem=nova.problem[1] if nova.problem and
        nova.problem[0] == 'blocked' else None,
        paused=unit.paused,
        gis_missing=mig_plan.instances_missing(unit.mig_record, host.mig),
        mig_held=mig.held, mig_held_message=mig_plan.held_message(mig.held),
        offer_gaps=offer_gaps.gaps(host, nova))


def changed_gpus(before: HookPlan, after: HookPlan
                 ) -> Dict[str, Dict[str, Tuple[Any, Any]]]:
    """GPU -> what would change on it, (now, then), of its types, the
    devices (VFs, or the GPU) Nova gets and the GPU instances mig-layout
    asks for."""
    gpus = sorted(set(_by_gpu(before)) | set(_by_gpu(after)))
    found = {}
    for gpu in gpus:
        now, then = _by_gpu(before).get(gpu, {}), _by_gpu(after).get(gpu, {})
        changes = {key: (now.get(key), then.get(key))
                   for key in ('types', 'devices', 'gpu-instances')
                   if now.get(key) != then.get(key)}
        if changes:
            found[gpu] = changes
    return found


def _by_gpu(plan: HookPlan) -> Dict[str, Dict[str, Any]]:
    """GPU -> its types, the devices Nova gets and its GPU instances."""
    gpu_of = {device: gpu.address for gpu in plan.health.gpus
              for device in (gpu.address,) + tuple(gpu.vfs)}
    found: Dict[str, Dict[str, Any]] = {}
    for vgpu_type, devices in sorted((plan.nova.host_mappings or {}
                                      ).items()):
        for device in devices:
            entry = found.setdefault(gpu_of.get(device, device), {})
            entry.setdefault('types', []).append(vgpu_type)
            entry.setdefault('devices', []).append(device)
    for entry in found.values():
        entry['types'] = sorted(set(entry['types']))
        entry['devices'] = sorted(set(entry['devices']))
    for gpu, instances in plan.mig.wanted.items():
        found.setdefault(gpu, {})['gpu-instances'] = list(instances)
    return found
