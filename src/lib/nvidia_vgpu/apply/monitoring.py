"""What monitoring reads, kept current at every hook: the monitoring
document (the health verdict with each device's free instances, the
services and the boot units), and the NRPE checks where the nrpe unit
is related; removed once nothing monitors. Also the vgpu-health
action's report, from the same facts.
"""
import os
from typing import Dict

import charmhelpers.core.hookenv as hookenv

from nvidia_vgpu import juju_commands
from nvidia_vgpu.apply import boot_units, context as hook_context
from nvidia_vgpu.driver import mig_boot
from nvidia_vgpu.health import verdict
from nvidia_vgpu.hook_plan import survey as hook_survey
from nvidia_vgpu.host import nvidia_smi, survey
from nvidia_vgpu.monitoring import facts_file, report
from nvidia_vgpu.relations import cos_agent, nrpe_external_master


class Monitoring:
    """The facts NRPE and the exporter read, and the health report."""

    def __init__(self, context: hook_context.HookContext) -> None:
        self.context = context

    def detailed_facts(self) -> verdict.HostFacts:
        """The hook's health facts, with the free vGPUs of the types Nova
        was given (hook_plan/survey.py says how they are counted), the
        vGPU Manager's services and the boot units read now (what the
        action and monitoring report)."""
        context = self.context
        host = context.host
        health = context.plan.health
        installed = context.unit.installed
        return health._replace(
            gpus=hook_survey.with_free(health.gpus, host, health.published),
            services=survey.services(installed.services if installed
                                     else ()),
            boot_units=survey.boot_units(boot_units.UNITS + mig_boot.UNITS)
            if host.functions else {})

    def health_report(self) -> Dict[str, object]:
        """The vgpu-health action's report, reading only; nvidia-smi is
        asked where the host has it."""
        return verdict.report(
            self.detailed_facts(),
            survey.versions(self.context.host.nova_version),
            nvidia_smi.vgpu_report())

    def update(self) -> bool:
        """Refresh the document and the checks; False (after removing
        them) when neither NRPE nor a COS agent is related."""
        nrpe = nrpe_external_master.endpoint()
        if nrpe is None:
            nrpe_external_master.remove()
            if not cos_agent.related():
                facts_file.remove()
                return False
        unit = hookenv.local_unit()
        host_context = nrpe_external_master.host_context(nrpe)
        document = report.document(
            self.detailed_facts(),
            '{}:{}'.format(host_context, unit) if host_context else unit,
            juju_commands.action_command(os.environ.get('JUJU_VERSION'),
                                         unit, 'vgpu-health'))
        facts_file.write(document)
        if nrpe is not None:
            nrpe_external_master.update(nrpe, document, unit,
                                        self.context.config)
        return True
