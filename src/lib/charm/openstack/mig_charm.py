"""mig-layout on the charm: which GPU instances each MIG-capable GPU is
cut into, applied where nothing uses the GPU and at every boot.

The hook's snapshot says what the GPUs are now (nvidia-smi, only where a
layout is to be applied or undone); mig/plan.py decides; this class
applies the plan, writes the boot units' record and installs them. A
change that would take vGPUs from guests waits for them (the status
names them) and applies at the first hook after they are gone.

The concrete charm class gives `host`, `gpus`, `installed_software` and
`host_changed()`.
"""
import os
from typing import Dict, List, Optional

import charmhelpers.core.hookenv as hookenv
import charms.reactive as reactive

from charm.openstack import guests_first
from nvidia_vgpu import memo, model
from nvidia_vgpu.driver import mig_boot
from nvidia_vgpu.host import boot_records, systemd
from nvidia_vgpu.mig import layout as mig_layout, plan as mig_plan

# Set by the stop hook: its boot units are gone and must stay so.
STOPPING = 'nova-compute-nvidia-vgpu.stopping'


class MigCharm(guests_first.GuestsFirstCharm):
    """A charm that cuts MIG GPUs as mig-layout asks."""

    abstract_class = True

    @memo.cached_property
    def mig_record(self) -> Dict[str, List[str]]:
        """The boot units' record of this host's GPU instances (what the
        charm made), read once a hook."""
        return boot_records.load_json(boot_records.MIG)

    def _mig_asked(self) -> bool:
        """A layout to apply, or one applied before to undo."""
        return bool((self.config.get(mig_layout.OPTION) or '').strip()
                    or self.mig_record)

    @memo.cached_property
    def mig_layout_problem(self) -> Optional[str]:
        """Why mig-layout cannot be read (then nothing of MIG changes)."""
        try:
            mig_layout.parse(self.config.get(mig_layout.OPTION))
        except mig_layout.LayoutError as error:
            return str(error)
        return None

    @memo.cached_property
    def mig_work(self) -> model.MigPlan:
        """What mig-layout asks of this host now, and what waits."""
        if self.mig_layout_problem or not self._mig_asked():
            return model.MigPlan()
        return mig_plan.plan(
            mig_layout.parse(self.config.get(mig_layout.OPTION)),
            self.host.gpus, self.host.mig, mig_plan.users_by_gpu(self.host),
            applied=sorted(self.mig_record))

    def ensure_mig(self) -> None:
        """Cut the MIG GPUs as mig-layout asks, now where nothing uses
        them and at every boot (boot units and their record)."""
        if (not self.gpus or self.installed_software is None or
                self.mig_layout_problem or not self._mig_asked() or
                reactive.is_flag_set(STOPPING)):   # the unit is going
            return
        work = self.mig_work
        record = mig_plan.boot_record(work, self.mig_record)
        boot_records.save_json(boot_records.MIG, record)
        self.__dict__['mig_record'] = record
        texts = mig_boot.unit_texts(os.path.join(hookenv.charm_dir(), 'lib'))
        for unit in mig_boot.UNITS:
            if record:
                systemd.install_unit(unit, texts[unit])
            else:
                systemd.remove_unit(unit)
        if work.destroy or work.disable or work.enable or work.create:
            for failure in mig_boot.apply(work):
                hookenv.log('MIG: ' + failure, level=hookenv.WARNING)
            self.host_changed()
