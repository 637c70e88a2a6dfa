"""What monitoring reads, kept current at every hook: the monitoring
document the plan makes (the health verdict with the free vGPUs, the
services and the boot units), and the NRPE checks where the nrpe unit
is related; removed once nothing monitors. Also the vgpu-health
action's report, from the same facts.
"""
import os
from typing import Dict, Optional

import charmhelpers.core.hookenv as hookenv

from nvidia_vgpu import juju_commands
from nvidia_vgpu.apply import boot_units, context as hook_context
from nvidia_vgpu.driver import mig_boot
from nvidia_vgpu.health import verdict
from nvidia_vgpu.hook_plan import facts as hook_facts
from nvidia_vgpu.host import gpu_faults, nvidia_smi, survey
from nvidia_vgpu.monitoring import facts_file
from nvidia_vgpu.relations import cos_agent, nrpe_external_master


def read_detail(context: hook_context.HookContext
                ) -> Optional[hook_facts.Detail]:
    """What monitoring and the health report add to the hook's reading,
    once one of them asks: the services, the boot units, this boot's GPU
    hardware faults (while the driver runs: nvidia-smi needs it), and
    how this unit is named (the nrpe unit's host context first)."""
    if not context.detail_wanted:
        return None
    nrpe = nrpe_external_master.endpoint()
    installed = context.unit.installed
    unit = hookenv.local_unit()
    host_context = nrpe_external_master.host_context(nrpe)
    services, boot = survey.units(
        installed.services if installed else (),
        boot_units.UNITS + mig_boot.UNITS if context.host.functions else ())
    host = context.host
    return hook_facts.Detail(
        services=services, boot_units=boot,
        gpu_faults=gpu_faults.read([gpu.address for gpu in host.functions])
        if host.functions and host.driver is not None else None,
        unit='{}:{}'.format(host_context, unit) if host_context else unit,
        health_command=juju_commands.action_command(
            os.environ.get('JUJU_VERSION'), unit, 'vgpu-health'))


class Monitoring:
    """Writes the plan's monitoring document and the NRPE checks; the
    health report."""

    def __init__(self, context: hook_context.HookContext) -> None:
        self.context = context

    def health_report(self) -> Dict[str, object]:
        """The vgpu-health action's report, reading only; nvidia-smi is
        asked where the host has it."""
        self.context.want_detail()
        return verdict.report(
            self.context.plan.detail,
            survey.versions(self.context.host.nova_version,
                            self.context.host.gpus),
            nvidia_smi.vgpu_report())

    def update(self) -> bool:
        """Write the plan's monitoring document, and the checks where the
        nrpe unit is related; False (after removing them) when neither
        NRPE nor a COS agent is related."""
        nrpe = nrpe_external_master.endpoint()
        if nrpe is None:
            nrpe_external_master.remove()
            if not cos_agent.related():
                facts_file.remove()
                return False
        self.context.want_detail()
        document = self.context.plan.monitoring
        facts_file.write(document)
        if nrpe is not None:
            nrpe_external_master.update(nrpe, document, hookenv.local_unit(),
                                        self.context.config)
        return True
