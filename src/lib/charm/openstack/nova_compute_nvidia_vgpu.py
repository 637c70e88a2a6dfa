"""The nova-compute-nvidia-vgpu charm class: it wires the collaborators.

Each hook reads the host once into the hook context
(nvidia_vgpu/apply/context.py), one pure function decides the hook's
whole plan (nvidia_vgpu/hook_plan/decide.py), the collaborators apply
their part of it (nvidia_vgpu/apply/) and the relations publish it
(nvidia_vgpu/relations/). What differs between OpenStack releases is a
row of nvidia_vgpu/nova/families.py, not a class: one class serves every
release charms.openstack selects.
"""
import functools
import os
from typing import Dict, List, Optional

import charmhelpers.contrib.openstack.utils as os_utils
import charms.reactive as reactive
import charms_openstack.charm

from nvidia_vgpu.apply import (
    boot_units, context as hook_context, guests, mig, mixed_sizes,
    monitoring, software)
from nvidia_vgpu.hook_plan import facts as hook_facts
from nvidia_vgpu.monitoring import cos_agent as exporter
from nvidia_vgpu.nova import families, releases
from nvidia_vgpu.relations import cos_agent, nova_vgpu, nrpe_external_master


def _make_charmhelpers_know_our_releases() -> None:
    """Let charms.openstack accept every release this charm knows.

    charms.openstack refuses releases that charmhelpers' OPENSTACK_RELEASES
    does not list and orders classes by that list; the charmhelpers bundled
    in a build may be older than the cloud.
    """
    extended = releases.extend_release_list(
        tuple(os_utils.OPENSTACK_RELEASES))
    if extended != tuple(os_utils.OPENSTACK_RELEASES):
        os_utils.OPENSTACK_RELEASES = extended
        os_utils.CompareOpenStackReleases._list = extended


_make_charmhelpers_know_our_releases()


@functools.lru_cache(maxsize=1)
def installed_nova_version() -> Optional[str]:
    """nova-common's version, looked up once per hook (the hook's
    process)."""
    return hook_context.remembered_version(releases.NOVA_PACKAGE)


@charms_openstack.charm.register_os_release_selector
def select_release() -> Optional[str]:
    """The release of the nova installed by the principal, if any yet.

    None (nova not installed yet) makes charms.openstack use the newest
    class; nothing is published to nova until nova is there anyway.
    """
    version = installed_nova_version()
    return releases.release_for_nova_version(version) if version else None


def read_relations() -> hook_facts.Relations:
    """What Juju says of the relations now."""
    return hook_facts.Relations(
        nova_vgpu=nova_vgpu.published(), cos_agent=cos_agent.related(),
        nrpe=nrpe_external_master.endpoint() is not None,
        juju_version=os.environ.get('JUJU_VERSION'))


class NovaComputeNvidiaVgpuCharm(charms_openstack.charm.OpenStackCharm):
    """Every release from Queens: the plan reads the release's rules."""

    release = 'queens'
    name = 'nova-compute-nvidia-vgpu'
    # Nothing comes from the Ubuntu archive: the vGPU host software is the
    # operator's resource, installed only where a GPU is found.
    packages = []
    release_pkg = releases.NOVA_PACKAGE
    # Subordinates follow the principal's cloud archive; they have no
    # openstack-origin option of their own.
    source_config_key = ''
    required_relations = []

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.context = hook_context.HookContext(
            self.config, read_relations,
            update_status=reactive.is_flag_set('is-update-status-hook'),
            nova_version=installed_nova_version(),
            read_detail=monitoring.read_detail)
        self.boot_units = boot_units.BootUnits(self.context)
        self.software = software.Software(self.context,
                                          self.boot_units.ensure_sriov)
        self.mig = mig.Mig(self.context)
        self.mixed_sizes = mixed_sizes.MixedSizes(self.context)
        self.guests = guests.Guests(self.context)
        self.monitoring = monitoring.Monitoring(self.context)
        self.nova_vgpu = nova_vgpu.NovaVgpu(lambda: self.context.plan,
                                            self.context.unit_changed)
        self.cos_agent = cos_agent.CosAgent(self.config)

    @property
    def services(self) -> List[str]:
        """The systemd services the installed vGPU package declares."""
        installed = self.context.unit.installed
        return list(installed.services) if installed else []

    @property
    def application_version(self) -> str:
        """The NVIDIA vGPU host software version; empty until installed."""
        installed = self.context.unit.installed
        return installed.version if installed else ''

    # ------------------------------------------- charms.openstack's hooks

    def install(self) -> None:
        super().install()
        self.software.ensure()

    def config_changed(self) -> None:
        self.software.ensure()

    def upgrade_charm(self) -> None:
        """Also Juju's answer to attach-resource: a new revision installs."""
        super().upgrade_charm()
        self.assess_status()

    # -------------------------------------------------- the actions

    def install_vgpu_software(self) -> str:
        """The install-vgpu-software action (force=true under guests)."""
        return self.software.install_now(
            self.guests.refuse_under_running_guests, self._assess_status)

    def vgpu_health(self) -> Dict[str, object]:
        return self.monitoring.health_report()

    def check_series_upgrade(self) -> Dict[str, str]:
        """The check-series-upgrade action: which guests to move before
        the prepare pauses nova-compute."""
        return self.guests.series_upgrade_check()

    def remove_boot_units(self) -> None:
        """The charm is going: take its boot-time units with it (and the
        metrics exporter, were it still there), and put the GPUs it cut
        for MIG back in normal mode where no guest uses them."""
        self.mig.undo_for_removal()
        self.boot_units.remove_all()
        exporter.remove_exporter()

    # ------------------------------- service operations, guests first

    def pause(self) -> None:
        """Stop the vGPU Manager, unless that would break guests' vGPUs."""
        self.guests.refuse_under_running_guests('pause')
        super().pause()
        self.context.unit_changed()

    def resume(self) -> None:
        super().resume()
        self.context.unit_changed()

    def restart_services(self) -> None:
        """layer:openstack's restart-services stops and starts the vGPU
        Manager: the same guard as pause."""
        self.guests.refuse_under_running_guests('restart-services')
        super().restart_services()

    def series_upgrade_prepare(self) -> None:
        """As charms.openstack (mark the unit upgrading, pause it), unless
        running guests use vGPUs here: then nothing they use stops."""
        if self.guests.hold_series_upgrade():
            self.assess_status()
            return
        super().series_upgrade_prepare()

    def finish_held_series_upgrade(self) -> None:
        self.guests.finish_held_series_upgrade(
            lambda: self.run_pause_or_resume('pause'))

    def series_upgrade_complete(self) -> None:
        """Resume as charms.openstack does; where the prepare stopped
        nothing, only its marks go."""
        if self.guests.complete_held_series_upgrade():
            self.assess_status()
            return
        super().series_upgrade_complete()

    # ------------------------------------------------------------ status

    def check_if_paused(self):
        """While a series upgrade waits for guests, which to move."""
        held = self.context.plan.status.held_upgrade
        return held if held[0] else super().check_if_paused()

    def custom_assess_status_check(self):
        return self.context.plan.status.blocked

    def custom_assess_status_last_check(self):
        return self.context.plan.status.last


def _register_release_families() -> None:
    """One class per row of families.FAMILIES, with nothing but its
    release: charms.openstack registers each, and publishes them all to
    nova-compute as the releases-packages-map (kept as earlier revisions
    published it, so an upgrade of the charm changes no relation data).
    Every rule comes from the row the installed nova falls in."""
    for family in families.FAMILIES[1:]:
        type('{}NovaComputeNvidiaVgpuCharm'.format(family.release.title()),
             (NovaComputeNvidiaVgpuCharm,), {
                 'release': family.release, '__module__': __name__,
                 '__doc__': 'From {}: the rules of its row.'.format(
                     family.release.title())})


_register_release_families()
