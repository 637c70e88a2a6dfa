"""How much each unit status matters to the on-call engineer: one
severity per status, which the NRPE status check answers with and the
exporter's nvidia_vgpu_status_severity carries for the alert rules, so
Nagios and COS page alike (issue 37).

The rule: what breaks or endangers running guests, or leaves Nova
without the capacity this host should offer, is CRITICAL; what waits
for the operator without harming guests is WARNING; a ready unit is OK.
An option refused is WARNING wherever it is shown: Nova keeps what it
had, and a host without GPUs never pages for the application's typo.

Some statuses have an alert of their own, with more to say (the drift
finding, the reboot, the idle GPUs): OWN_ALERT names it, and the
generic status alerts leave those codes out, so one status is one
alert.
"""
from typing import Dict, NamedTuple, Optional, Sequence, Tuple

OK, WARNING, CRITICAL = 0, 1, 2
NAMES = ('OK', 'WARNING', 'CRITICAL')


class Rule(NamedTuple):
    """The statuses whose message starts so."""

    start: str
    code: str
    severity: int


# In the order they are tried: a longer start before a shorter one it
# shares its beginning with.
RULES: Sequence[Rule] = (
    Rule('Unit is ready', 'ready', OK),
    Rule('Installing NVIDIA vGPU host software', 'installing', OK),
    Rule('Typed VFs not live-migratable', 'not-live-migratable', WARNING),
    Rule('Paused.', 'paused', WARNING),
    Rule('Ready for do-release-upgrade', 'series-upgrade-prepared', WARNING),
    Rule('Series upgrade to ', 'series-upgrade-held', WARNING),
    Rule('Services should be paused but', 'services-not-paused', WARNING),
    Rule('Services not running that should be', 'services-not-running',
         CRITICAL),
    Rule('Invalid mig-layout', 'option-refused', WARNING),
    Rule('Invalid vgpu-device-mappings', 'option-refused', WARNING),
    Rule('Invalid vgpu-resource-class', 'option-refused', WARNING),
    Rule('Invalid metrics-port', 'option-refused', WARNING),
    Rule('Invalid nagios_', 'option-refused', WARNING),
    Rule('GPUs at ', 'option-refused', WARNING),
    Rule('Reboot required: MIG mode', 'mig-reboot-required', WARNING),
    Rule('Reboot required', 'reboot-required', WARNING),
    Rule('NVIDIA GPU found but no vGPU host software', 'software', CRITICAL),
    Rule('Resource nvidia-vgpu-software', 'software', CRITICAL),
    Rule('apt-get could not install', 'software', CRITICAL),
    Rule('Kernel headers for the running kernel', 'software', CRITICAL),
    Rule('The kernel only loads signed modules', 'software', CRITICAL),
    Rule('NVIDIA kernel module of', 'software', CRITICAL),
    Rule('Host drift', 'host-drift', CRITICAL),
    # nvidia-smi did not change it: Nova keeps what it had
    Rule("NVIDIA's mixed-size mode", 'mixed-size-mode', WARNING),
    Rule('This GPU host gives Nova no vGPU', 'nothing-offered', WARNING),
    Rule('Waiting for nova-compute to install', 'waiting-for-nova',
         WARNING),
    Rule('Waiting for the nova-vgpu relation', 'waiting-for-relation',
         WARNING),
    Rule('Waiting for the NVIDIA driver', 'waiting-for-names', WARNING),
    # nvidia_vgpu_waiting_changes counts the others, not this one
    Rule('Change of vgpu-resource-class', 'class-waits-for-guests',
         WARNING),
    Rule('Change of ', 'waits-for-guests', WARNING),
    Rule('Attached vGPU software', 'waits-for-guests', WARNING),
    Rule("Nova has not been given this host's vGPU settings yet",
         'not-given-yet', WARNING),
)
# Codes whose alert is another rule's: the generic status alerts leave
# them out (src/files/prometheus_alert_rules/nvidia_vgpu.rules).
OWN_ALERT: Dict[str, str] = {
    'host-drift': 'NvidiaVgpuHostDrift',
    'reboot-required': 'NvidiaVgpuRebootRequired',
    'nothing-offered': 'NvidiaVgpuHostOffersNovaNothing',
    'software': 'NvidiaVgpuHostUnhealthy',
    'services-not-running': 'NvidiaVgpuManagerDown',
    # a change waiting for guests is normal for a while: a day
    'waits-for-guests': 'NvidiaVgpuChangeWaitsForGuests',
}
# The generic alert of each severity.
STATUS_ALERT = {WARNING: 'NvidiaVgpuUnitWarning',
                CRITICAL: 'NvidiaVgpuUnitCritical'}


def rule_of(message: str) -> Optional[Rule]:
    """The rule a status message falls under; None for none."""
    for rule in RULES:
        if message.startswith(rule.start):
            return rule
    return None


def of_status(message: str) -> Tuple[str, int]:
    """(code, severity) of a unit status; one no rule knows is a
    WARNING, so that a new status is seen before it is classified."""
    rule = rule_of(message)
    return (rule.code, rule.severity) if rule else ('unknown', WARNING)


def alert_for(code: str, severity: int) -> Optional[str]:
    """The one alert a status of this code and severity fires."""
    if severity == OK:
        return None
    return OWN_ALERT.get(code) or STATUS_ALERT[severity]
