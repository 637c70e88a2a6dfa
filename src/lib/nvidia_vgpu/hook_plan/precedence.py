"""The unit's status: which of everything that applies it shows.

charms.openstack asks a charm three times, in its own order: the paused
check first (where a series upgrade held for guests says so), then the
charm's blocked check, then, after its check of the services, the
charm's last check (waiting, or ready). This module decides all three at
once from the hook's plan, in the order the guide's unit-status table
gives (docs/index.md#unit-status), so that order is one function, tested
with a table (unit_tests/test_precedence.py):

1. a series upgrade prepared without stopping the vGPU Manager;
2. blocked: mig-layout refused, MIG mode waiting for a reboot, a refused
   option (vgpu-device-mappings, vgpu-resource-class, typed VFs before
   Epoxy), a wrong metrics-port while metrics are served, a nagios
   option Nagios could not read while the nrpe unit is related; then on GPU
   hosts the software (its problem, none attached), a reboot to load the
   driver, a GPU that mixes sizes not in mixed-size mode, host drift;
3. (charms.openstack: services not running)
4. waiting: nova not installed yet, the relation missing, names the
   driver has not given, what waits for guests or has not reached
   nova-compute yet (several joined with "; "); else ready.
"""
from typing import Any, Mapping, NamedTuple, Optional, Sequence, Tuple

from nvidia_vgpu import juju_commands, model, status
from nvidia_vgpu.driver import series_upgrade, software
from nvidia_vgpu.health import verdict
from nvidia_vgpu.hook_plan import facts as hook_facts
from nvidia_vgpu.mig import plan as mig_plan
from nvidia_vgpu.monitoring import metrics_port, nagios_names
from nvidia_vgpu.nova import mixed_sizes

Status = Tuple[Optional[str], Optional[str]]
NONE: Status = (None, None)
RELATION = 'nova-vgpu'
RELATION_ENDPOINTS = ('nova-compute-nvidia-vgpu:nova-vgpu',
                      'nova-compute:nova-vgpu')


class StatusFacts(NamedTuple):
    """What the status is decided from."""

    host: model.HostSnapshot
    unit: hook_facts.UnitState
    relations: hook_facts.Relations
    nova: model.NovaPlan
    layout_problem: Optional[str]
    mig: model.MigPlan
    health: verdict.HostFacts
    running_guests: Sequence[str]   # guests running on this host's vGPUs
    given: bool                     # nova-compute holds the settings
    config: Mapping[str, Any]


class StatusDecision(NamedTuple):
    """The answer to each of charms.openstack's three questions."""

    held_upgrade: Status    # instead of its paused check, where set
    blocked: Status         # right after the paused check
    last: Status            # after its services check


def decide(facts: StatusFacts) -> StatusDecision:
    """The three answers, each (None, None) where it has nothing."""
    return StatusDecision(held_upgrade(facts), blocked(facts), last(facts))


def held_upgrade(facts: StatusFacts) -> Status:
    """While a series upgrade waits for guests, which to move."""
    held = facts.unit.series_upgrade_held
    if held is not None and facts.running_guests:
        return 'blocked', series_upgrade.held_message(
            facts.running_guests, held['target'])
    return NONE


def blocked(facts: StatusFacts) -> Status:
    """Blocked states, the one to act on first: the options' (on every
    host), then the GPU host's software, driver and drift."""
    layout_problem = facts.layout_problem
    if layout_problem:
        return 'blocked', layout_problem
    # Before the mappings: a MIG-backed type is not offered until the
    # GPU's MIG mode and instances are there.
    mig_problem = mig_plan.blocked_message(facts.mig)
    if mig_problem:
        return 'blocked', mig_problem
    refused = facts.nova.problem
    if refused and refused[0] == 'blocked':
        return refused
    if facts.relations.cos_agent:
        port_problem = metrics_port.problem(
            facts.config.get(metrics_port.OPTION))
        if port_problem:
            return 'blocked', port_problem
    if facts.relations.nrpe:
        names_problem = nagios_names.option_problem(facts.config)
        if names_problem:
            return 'blocked', names_problem
    if not facts.host.functions:
        return NONE
    return _gpu_host_blocked(facts)


def _gpu_host_blocked(facts: StatusFacts) -> Status:
    """The software's problem, none attached, a reboot, drift."""
    software_problem = facts.unit.software_problem
    if software_problem:
        return 'blocked', software_problem
    installed = facts.unit.installed
    if installed is None:
        return 'blocked', software.resource_problem(None)
    if facts.host.driver != installed.version:
        return 'blocked', software.reboot_message(installed,
                                                  facts.host.driver)
    # (where the mappings are refused, the refusal says why Nova keeps
    # its settings)
    unsettled = mixed_sizes.unsettled(facts.host, facts.nova.mixed) \
        if facts.nova.problem is None else []
    if unsettled:
        return 'blocked', (
            'NVIDIA\'s mixed-size mode of {} is not yet what '
            'vgpu-device-mappings needs, so Nova keeps its settings: '
            'nvidia-smi could not change it (juju debug-log says why); the '
            'next hook tries again'.format(', '.join(unsettled)))
    drift = verdict.drift(facts.health)
    if drift:
        return 'blocked', verdict.status_message(drift)
    return NONE


def last(facts: StatusFacts) -> Status:
    """Waiting states, else ready naming what was found. SR-IOV GPUs
    without VFs are blocked before this: a reboot while the driver does
    not run, host drift once it does."""
    if facts.nova.problem:
        return facts.nova.problem
    if facts.relations.nova_vgpu is None:
        return 'waiting', 'Waiting for the {} relation: {}'.format(
            RELATION, juju_commands.relate_command(
                facts.relations.juju_version, *RELATION_ENDPOINTS))
    found = status.waiting_or_ready(
        facts.host, facts.nova, facts.unit.waiting_software,
        facts.running_guests, facts.given)
    mig_waits = mig_plan.held_message(facts.mig.held)
    if not mig_waits:
        return found
    if found[0] == 'waiting':   # several wait: joined, as Nova's are
        mig_waits = found[1] + '; ' + mig_waits
    return 'waiting', mig_waits
