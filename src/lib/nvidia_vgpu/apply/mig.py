"""mig-layout on the host: cut each MIG-capable GPU into the GPU
instances the plan says, now where nothing uses the GPU and at every
boot (the MIG boot units and their record). A change that would take
vGPUs from guests waits in the plan; it applies at the first hook after
they are gone.
"""
import os

import charmhelpers.core.hookenv as hookenv

from nvidia_vgpu.apply import context as hook_context
from nvidia_vgpu.driver import mig_boot
from nvidia_vgpu.host import boot_records, systemd
from nvidia_vgpu.mig import layout as mig_layout


class Mig:
    """Applies the plan's MIG work and keeps its boot units."""

    def __init__(self, context: hook_context.HookContext) -> None:
        self.context = context

    def ensure(self, stopping: bool = False) -> None:
        """Cut the MIG GPUs as mig-layout asks, now where nothing uses
        them and at every boot; nothing once the unit is going."""
        context = self.context
        if (stopping or not context.host.functions or
                context.unit.installed is None or
                not context.config_asks_mig()):
            return
        plan = context.plan
        if plan.layout_problem:
            return
        work, record = plan.mig, plan.boot.mig_record
        boot_records.save_json(boot_records.MIG, record)
        context.unit_changed()
        texts = mig_boot.unit_texts(os.path.join(hookenv.charm_dir(), 'lib'))
        for unit in mig_boot.UNITS:
            if record:
                systemd.install_unit(unit, texts[unit])
            else:
                systemd.remove_unit(unit)
        if work.destroy or work.disable or work.enable or work.create:
            for failure in mig_boot.apply(work):
                hookenv.log('MIG: ' + failure, level=hookenv.WARNING)
            context.host_changed()

    def undo_for_removal(self) -> None:
        """The unit is going: GPUs it put in MIG mode go back to normal
        mode where no guest uses them, as an empty mig-layout would do
        (an A100 or A30 keeps MIG mode across reboots, with nothing left
        to cut it). One a guest still uses is left as it is, and said
        in the log (the guide says how to undo it later)."""
        context = self.context
        if not context.host.functions or not context.unit.mig_record:
            return
        context.with_options({mig_layout.OPTION: ''})
        work = context.plan.mig
        if work.destroy or work.disable:
            for failure in mig_boot.apply(work):
                hookenv.log('MIG: ' + failure, level=hookenv.WARNING)
        for gpu, guests in sorted(work.held.items()):
            hookenv.log('MIG mode of {} stays on: {} use vGPUs on it (undo '
                        'it once they are gone: nvidia-smi -i <index> -mig '
                        '0)'.format(gpu, ', '.join(guests)),
                        level=hookenv.WARNING)
