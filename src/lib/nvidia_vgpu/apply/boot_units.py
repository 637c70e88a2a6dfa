"""What the next boot needs, kept on the host: the SR-IOV unit that
enables VFs, the restore unit and what it reads (the mappings Nova is
given, the VFs' vGPU types, where each vGPU lives), and mdevctl where
Nova keeps vGPUs itself. The plan says what; this applies it.
"""
import os
import subprocess

import charmhelpers.core.hookenv as hookenv

from nvidia_vgpu import state
from nvidia_vgpu.apply import context as hook_context
from nvidia_vgpu.driver import mig_boot, restore, sriov
from nvidia_vgpu.host import (
    boot_records, dpkg, mdevctl, systemd, templates)

MDEVCTL = 'mdevctl'
UNITS = (sriov.BOOT_UNIT, restore.UNIT)


class BootUnits:
    """The charm's boot-time units and their records."""

    def __init__(self, context: hook_context.HookContext) -> None:
        self.context = context

    def ensure_sriov(self) -> None:
        """On SR-IOV GPUs, have their VFs enabled at every boot, and now.

        VFs vanish at each reboot; the boot unit recreates them after the
        vGPU Manager and before nova-compute. Where the driver already
        runs and a GPU has no VFs yet, the unit runs at once.
        """
        work = self.context.plan.boot.sriov
        if work.boot_unit:
            systemd.install_unit(sriov.BOOT_UNIT,
                                 templates.render(sriov.BOOT_UNIT))
        if work.enable_now:
            hookenv.log('Enabling SR-IOV VFs on {}'.format(
                ', '.join(work.enable_now)), level=hookenv.INFO)
            try:
                systemd.run_unit(sriov.BOOT_UNIT)
            except subprocess.CalledProcessError:
                # The unit's status shows the GPUs without VFs (health).
                hookenv.log('{} failed: see journalctl -b -u {}'.format(
                    sriov.BOOT_UNIT, sriov.BOOT_UNIT), level=hookenv.WARNING)
            self.context.host_changed()

    def keep_vgpus_across_reboots(self, periodic: bool = False) -> None:
        """Keep what the next boot needs to give guests their vGPUs back.

        The restore unit (python3 -m nvidia_vgpu.restore) sets VFs' vGPU
        types on the vendor-specific VFIO driver and, where the release
        needs it, recreates the vGPUs guests use. It reads this host's
        mappings (so a config change reaches the next boot) and where
        each vGPU lives now. In update-status (periodic) the unit is not
        reinstalled, but what it reads follows the mappings Nova is
        given, and VFs take their types there too: a change that waited
        for guests applies once they are gone.

        Where Nova keeps vGPUs itself (Dalmatian on), mdevctl is
        installed and the vGPUs guests use that Nova did not define
        (those made before an OpenStack upgrade) are defined first, in
        any hook: the first one after the upgrade may come only from
        update-status. Until they are, the restore unit stays on.
        """
        context = self.context
        if not context.host.functions or context.unit.installed is None:
            return
        if context.plan.family.nova_persists_mdevs:
            self._ensure_mdevctl()
            self._define_transient()
        boot = context.plan.boot
        if boot.restores_mdevs and restore.record_inventory(context.host):
            context.records_changed()
        if not periodic:
            systemd.install_unit(restore.UNIT, restore.unit_text(
                os.path.join(hookenv.charm_dir(), 'lib')))
        if boot.host_mappings is not None:
            boot_records.save_json(boot_records.MAPPINGS, boot.host_mappings)
            settings = {'restore_mdevs': boot.restores_mdevs,
                        'vf_vgpu_types': boot.vf_types}
            if boot.vf_type_names:
                settings['vf_vgpu_type_names'] = boot.vf_type_names
            if boot.placements:
                settings['mixed_sizes'] = boot.placements
            if boot_records.save_json(boot_records.SETTINGS, settings):
                context.records_changed()
            if context.host.driver is not None and \
                    restore.apply_vf_types(boot.vf_types):
                context.host_changed()

    def _define_transient(self) -> None:
        """Make the vGPUs guests use persistent where Nova did not (see
        restore_plan.to_define); one that cannot be stays the restore
        unit's to recreate."""
        mdevs = self.context.plan.boot.to_define
        if not mdevs or self.context.installed_version(MDEVCTL) is None:
            return
        defined = False
        for mdev in mdevs:
            failure = mdevctl.define(mdev)
            if failure:
                hookenv.log('vGPU {} stays transient (the restore unit '
                            'recreates it at boot): {}'.format(
                                mdev.uuid, failure), level=hookenv.WARNING)
                continue
            defined = True
            hookenv.log('Defined vGPU {} ({} on {}) to persist across '
                        'reboots'.format(mdev.uuid, mdev.type_id,
                                         mdev.parent), level=hookenv.INFO)
        if defined:
            self.context.host_changed()

    def _ensure_mdevctl(self) -> None:
        """Nova keeps vGPUs through libvirt, which needs mdevctl on the
        host (instances fail to start without it)."""
        if self.context.installed_version(MDEVCTL) is not None:
            return
        failure = dpkg.install_packages([MDEVCTL])
        if failure:
            state.set_software_problem(
                'apt-get could not install {} (Nova needs it to keep '
                'vGPUs across reboots): {}'.format(MDEVCTL, failure))
            self.context.unit_changed()

    @staticmethod
    def remove_all() -> None:
        """The charm is going: take its boot-time units with it."""
        for unit in UNITS + mig_boot.UNITS:
            systemd.remove_unit(unit)
