"""The nova-compute-nvidia-vgpu charm class, one per OpenStack release family.

charms.openstack picks the class: the release selector below reads the
installed nova-common, and the newest class whose `release` is not newer
than that is instantiated for the hook.

Each hook reads the host once (host/snapshot.py), turns it and the
options into a plan (nova/plan.py), applies the plan and reports; this
class only gathers, plans, applies and reports.
"""
import functools
import os
import subprocess
import sys
from typing import Dict, List, Optional, Tuple

import charmhelpers.contrib.openstack.utils as os_utils
import charmhelpers.core.hookenv as hookenv
import charms.reactive as reactive
import charms_openstack.charm

from charm.openstack import mig_charm
from nvidia_vgpu import juju_commands, memo, model, state, status
from nvidia_vgpu.driver import (
    mig_boot, module_build, restore, software, sriov)
from nvidia_vgpu.health import verdict
from nvidia_vgpu.host import (
    boot_records, dpkg, kernel, nvidia_smi, resources,
    snapshot, survey, systemd, templates)
from nvidia_vgpu.mig import plan as mig_plan
from nvidia_vgpu.monitoring import cos_agent, upkeep
from nvidia_vgpu.nova import (
    guest_safety, mappings, nova_config, plan, releases, resource_classes)

NOVA_PACKAGE = releases.NOVA_PACKAGE
SHA256_OPTION = 'nvidia-vgpu-software-sha256'
SOFTWARE_WAITS_FLAG = 'nova-compute-nvidia-vgpu.software-waits'
EXPORTER_FLAG = 'nova-compute-nvidia-vgpu.exporter'
RELATION = 'nova-vgpu'
MDEVCTL = 'mdevctl'
BOOT_UNITS = (sriov.BOOT_UNIT, restore.UNIT)
RELATION_ENDPOINTS = ('nova-compute-nvidia-vgpu:nova-vgpu',
                      'nova-compute:nova-vgpu')


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


def installed_version(package: str) -> Optional[str]:
    """A package's installed version; dpkg is asked only when its
    database changed since it last answered (kept in unitdata)."""
    remembered = state.dpkg_versions()
    version, keep = dpkg.remembered_version(package, remembered)
    if keep != remembered:
        state.set_dpkg_versions(keep)
    return version


@functools.lru_cache(maxsize=1)
def installed_nova_version() -> Optional[str]:
    """nova-common's version, looked up once per hook (the hook's
    process)."""
    return installed_version(NOVA_PACKAGE)


@charms_openstack.charm.register_os_release_selector
def select_release() -> Optional[str]:
    """The release of the nova installed by the principal, if any yet.

    None (nova not installed yet) makes charms.openstack use the newest
    class; nothing is published to nova until nova is there anyway.
    """
    version = installed_nova_version()
    return releases.release_for_nova_version(version) if version else None


def _kernel_module_problem(deb: model.DebInfo) -> Optional[str]:
    """Before a package whose kernel module DKMS builds here: install
    what the archive has and the build needs (module_build says which),
    then say why the build, or the module's load under Secure Boot,
    would fail; None if it would not."""
    host = _module_build_host()
    missing = module_build.packages_to_install(host)
    failure = None
    if missing:
        hookenv.log('Installing {} for the kernel module of {} {}'.format(
            ', '.join(missing), deb.package, deb.version),
            level=hookenv.INFO)
        failure = dpkg.install_packages(missing)
        host = _module_build_host()
    return module_build.problem(deb, host, failure)


def _module_build_host() -> model.BuildHost:
    return resources.build_host(
        module_build.signed_only, lambda: installed_version(
            module_build.MOKUTIL_PACKAGE) is not None)


class NovaComputeNvidiaVgpuCharm(mig_charm.MigCharm):
    """Queens and later: the base of every release family."""

    release = 'queens'
    name = 'nova-compute-nvidia-vgpu'
    # Nothing comes from the Ubuntu archive: the vGPU host software is the
    # operator's resource, installed only where a GPU is found.
    packages = []
    release_pkg = NOVA_PACKAGE
    # Subordinates follow the principal's cloud archive; they have no
    # openstack-origin option of their own.
    source_config_key = ''
    required_relations = []
    # install() and config_changed() both run in the first hook.
    _software_ensured = False

    # ----------------------------------------------- gather, and plan

    @memo.cached_property
    def host(self) -> model.HostSnapshot:
        """The host as this hook found it (one lspci per hook)."""
        return snapshot.read(installed_nova_version(),
                             names=self._names_needed(),
                             installed=installed_version,
                             mig=self._mig_asked())

    def _names_needed(self) -> bool:
        """The driver's names of the types: for profile names, classes
        per profile, and MIG-backed types (their GPU instance profile)."""
        return plan.needs_type_names(
            self.config.get(mappings.OPTION),
            self.config.get(resource_classes.OPTION)) or self._mig_asked()

    def host_changed(self) -> None:
        """The charm changed the host (VFs): read it again, lspci's
        answer aside, and plan again."""
        self.__dict__['host'] = snapshot.read(
            installed_nova_version(), self.host.functions,
            self._names_needed(), installed_version, self._mig_asked())
        self.__dict__.pop('nova_plan', None)
        self.__dict__.pop('mig_work', None)

    def records_changed(self) -> None:
        """The charm rewrote its boot records: what the host says of them
        now (the plan, if made, stays: it was made before the write)."""
        self.__dict__['host'] = snapshot.with_records(self.host)

    @property
    def gpus(self) -> List[model.PciFunction]:
        """This host's NVIDIA physical GPUs."""
        return list(self.host.functions)

    def nova_rules(self) -> model.NovaRules:
        """What this release's Nova takes, for the plan."""
        version = self.host.nova_version
        return model.NovaRules(
            self.nova_options,
            self.vgpu_type_limit(version) if version else None,
            self.single_type_reason)

    @memo.cached_property
    def nova_plan(self) -> model.NovaPlan:
        """This host's vGPU settings for nova.conf, checked every way."""
        return plan.plan_nova(
            self.host, self.config.get(mappings.OPTION),
            self.config.get(resource_classes.OPTION), self.nova_rules(),
            state.published_mappings(), state.published_classes())

    @property
    def installed_software(self) -> Optional[model.Installed]:
        return state.installed_software()

    @property
    def services(self) -> List[str]:
        """The systemd services the installed vGPU package declares."""
        installed = self.installed_software
        return list(installed.services) if installed else []

    @property
    def application_version(self) -> str:
        """The NVIDIA vGPU host software version; empty until installed."""
        installed = self.installed_software
        return installed.version if installed else ''

    # ------------------------------------------------------ the software

    def install(self) -> None:
        super().install()
        self.ensure_vgpu_software()

    def config_changed(self) -> None:
        self.ensure_vgpu_software()

    def upgrade_charm(self) -> None:
        """Also Juju's answer to attach-resource: a new revision installs."""
        super().upgrade_charm()
        self.assess_status()

    def ensure_vgpu_software(self) -> None:
        """Install the attached vGPU host software if this host has a GPU
        and does not have this very revision yet.

        Runs in install, start (a GPU added before a reboot), config-changed
        and upgrade-charm (Juju's answer to attach-resource). A problem is
        remembered for the status and retried at the next of those hooks,
        not in a loop. A new revision waits while guests use vGPUs on the
        host (it would replace the vGPU Manager under them): it installs
        at the first hook after none runs here, update-status included
        (the software-waits flag), or through install-vgpu-software.
        """
        if self._software_ensured:
            return
        self._software_ensured = True
        if not self.gpus:
            state.set_software_problem(None)
            self._software_waits(None)
            return
        resource, problem, needed = self._resource_to_install()
        if needed and self._replaces_vgpu_manager(resource.deb) and \
                plan.vgpus_running(self.host):
            self._software_waits(resource.deb)
            needed = False
        else:
            self._software_waits(None)
        if needed:
            problem = self._install(resource)
        elif problem is None and self.host.driver is None:
            problem = self._build_module()
        if problem:
            hookenv.log(problem, level=hookenv.WARNING)
        state.set_software_problem(problem)
        if not problem:
            self.ensure_sriov()

    def install_once_guests_are_gone(self) -> None:
        """A revision that waited for guests installs once none runs with a
        vGPU; until then nothing is read again (no hash of the file in
        every update-status)."""
        if not plan.vgpus_running(self.host):
            self.ensure_vgpu_software()

    def _resource_to_install(self) -> Tuple[Optional[model.Resource],
                                            Optional[str], bool]:
        """The attached resource, why it must not be installed (or
        None), and whether this host still needs it."""
        resource = resources.attached_resource(
            hookenv.resource_get(software.RESOURCE))
        problem = software.resource_problem(
            resource, self.config.get(SHA256_OPTION) or '')
        needed = problem is None and software.needs_install(
            resource, self.installed_software,
            installed_version(resource.deb.package))
        return resource, problem, needed

    def _replaces_vgpu_manager(self, deb: model.DebInfo) -> bool:
        """Whether installing this package would replace a vGPU Manager
        the host has (the charm's, or the same package from elsewhere)."""
        return (self.installed_software is not None or
                installed_version(deb.package) is not None)

    def _software_waits(self, deb: Optional[model.DebInfo]) -> None:
        """Remember (or forget) the revision that waits for guests."""
        state.set_waiting_software(deb)
        if deb is None:
            reactive.clear_flag(SOFTWARE_WAITS_FLAG)
            return
        hookenv.log('{} {} waits for guests using vGPUs: {}'.format(
            deb.package, deb.version, ', '.join(guest_safety.guest_names(
                plan.vgpus_running(self.host)))), level=hookenv.INFO)
        reactive.set_flag(SOFTWARE_WAITS_FLAG)

    def install_vgpu_software(self) -> str:
        """The install-vgpu-software action: install the attached
        revision now; refused while guests use vGPUs unless force=true.
        Returns what it did; raises (the action fails) saying why not."""
        if not self.gpus:
            raise RuntimeError('No NVIDIA GPU on this host: there is '
                               'nothing to install')
        resource, problem, needed = self._resource_to_install()
        if problem:
            raise RuntimeError(problem)
        deb = resource.deb
        if not needed:
            return '{} {} is already installed'.format(deb.package,
                                                       deb.version)
        self.refuse_under_running_guests('install-vgpu-software')
        failure = self._install(resource)
        state.set_software_problem(failure)
        if failure:
            # The unit shows the block now, not "Installing ..." until
            # the next hook.
            self._assess_status()
            raise RuntimeError(failure)
        self._software_waits(None)
        self.ensure_sriov()
        return ('Installed {} {}; reboot the host when the unit asks, to '
                'load its driver'.format(deb.package, deb.version))

    def _install(self, resource: model.Resource) -> Optional[str]:
        """Install the resource; why it failed, or None."""
        deb = resource.deb
        hookenv.status_set('maintenance', 'Installing NVIDIA vGPU host '
                           'software {} {}'.format(deb.package, deb.version))
        if deb.builds_kernel_module:
            problem = _kernel_module_problem(deb)
            if problem:
                return problem
        failure = dpkg.install_local_deb(
            hookenv.resource_get(software.RESOURCE))
        if failure:
            return ('apt-get could not install {} {}: {} (retried at the '
                    'next config-changed, upgrade-charm or start)'.format(
                        deb.package, deb.version, failure))
        state.set_installed_software(model.Installed(
            resource.sha256, deb.package, deb.version, deb.services,
            deb.builds_kernel_module))
        kernel.blacklist_nouveau()
        return None

    def _build_module(self) -> Optional[str]:
        """A kernel updated without its headers boots without the
        installed package's DKMS module, and no reboot helps: install
        them and have DKMS build it (module_build says when); the next
        boot loads it. Why it is still missing, or None."""
        installed, running = self.installed_software, kernel.running_kernel()
        packages = module_build.module_packages(installed, running)
        if packages is None:
            return None
        hookenv.log('Building the kernel module of {} {} for {}'.format(
            installed.package, installed.version, running.release),
            level=hookenv.INFO)
        failures = kernel.build_module(running.release, packages)
        return module_build.unbuilt_module(
            installed, kernel.running_kernel(), *failures)

    # ------------------------------------------------ boot-time units

    def ensure_sriov(self) -> None:
        """On SR-IOV GPUs, have their VFs enabled at every boot, and now.

        VFs vanish at each reboot; the boot unit recreates them after the
        vGPU Manager and before nova-compute. Where the driver already
        runs and a GPU has no VFs yet, the unit runs at once.
        """
        work = sriov.work(self.host, self.installed_software is not None)
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
            self.host_changed()

    def remove_boot_units(self) -> None:
        """The charm is going: take its boot-time units with it (and the
        metrics exporter, were it still there)."""
        for unit in (sriov.BOOT_UNIT, restore.UNIT) + mig_boot.UNITS:
            systemd.remove_unit(unit)
        cos_agent.remove_exporter()

    # Before Dalmatian Nova does not reliably recreate vGPUs at boot.
    restores_mdevs = True

    def keep_vgpus_across_reboots(self, periodic: bool = False) -> None:
        """Keep what the next boot needs to give guests their vGPUs back.

        The boot unit (python3 -m nvidia_vgpu.restore) sets VFs' vGPU
        types on the vendor-specific VFIO driver and, before Dalmatian,
        recreates the vGPUs guests use. It reads this host's expanded
        mappings (so a config change reaches the next boot) and, before
        Dalmatian, where each vGPU lives now. In update-status (periodic)
        the unit is not reinstalled, but what it reads follows the
        mappings Nova is given, and VFs take their types there too: a
        change that waited for guests applies once they are gone.
        """
        if not self.gpus or self.installed_software is None:
            return
        if self.restores_mdevs and restore.record_inventory(self.host):
            self.records_changed()
        if not periodic:
            systemd.install_unit(restore.UNIT, restore.unit_text(
                os.path.join(hookenv.charm_dir(), 'lib')))
        host_mappings = self.nova_plan.host_mappings
        if host_mappings is not None:
            vf_types = restore.vf_type_numbers(self.nova_plan.vf_types)
            boot_records.save_json(boot_records.MAPPINGS, host_mappings)
            if boot_records.save_json(boot_records.SETTINGS, {
                    'restore_mdevs': self.restores_mdevs,
                    'vf_vgpu_types': vf_types}):
                self.records_changed()
            if self.host.driver is not None:
                restore.apply_vf_types(vf_types)

    # ------------------------------------------------------ nova config

    # Nova's option names and how many types it honours: Queens to Train
    # use the first type of [devices] enabled_vgpu_types on every GPU.
    nova_options = nova_config.QUEENS
    single_type_reason = (
        'OpenStack Queens to Train use only the first type of [devices] '
        'enabled_vgpu_types')

    def vgpu_type_limit(self, nova_version: str) -> Optional[int]:
        """How many vGPU types this nova honours (None: no limit)."""
        return 1

    def nova_settings(self) -> Dict[str, object]:
        """The relation settings this host should have published now
        (no vGPU configuration while the option has a problem: Nova keeps
        what it has).

        `services` is always empty: nova-compute's pause, resume,
        openstack-upgrade and series upgrade stop or restart every service
        listed there, under running guests, from data a hook set before
        they started. The vGPU Manager is this unit's to stop (its pause
        action waits for the guests); an earlier revision's list is
        cleared by the first hook after the upgrade.
        """
        settings: Dict[str, object] = {'services': []}
        sections = self.nova_plan.sections
        if sections is not None:
            settings['subordinate_configuration'] = \
                nova_config.subordinate_configuration(sections)
        return settings

    def publish_nova_config(self, endpoint, periodic: bool = False) -> None:
        """Tell nova-compute what it needs, setting only what changed.

        Also in update-status (periodic), where a change that waited for
        guests applies once they are gone. Not while SR-IOV VFs are
        missing, in update-status or where the driver runs (a boot whose
        VFs were not enabled): no hook takes a GPU away from Nova, and
        its guests' allocations, because its VFs are not back yet. Before
        the driver first runs there are none to take.
        """
        nova_plan = self.nova_plan
        if nova_plan.waiting and (periodic or self.host.driver is not None):
            return
        state.set_class_refusal(nova_plan.class_refusal)
        settings = self.nova_settings()
        if endpoint.publish(settings):
            hookenv.log('nova-vgpu settings changed: {}'.format(
                sorted(settings)), level=hookenv.INFO)
        if nova_plan.host_mappings is not None:
            state.record_published(nova_plan.host_mappings,
                                   nova_plan.classes)

    # -------------------------------------------------------- cos-agent

    def configure_cos_agent(self, endpoint) -> None:
        """Serve the host's vGPU facts to Prometheus and tell grafana-agent
        where, with the alert rules and dashboard (monitoring/)."""
        problem = cos_agent.configure(
            endpoint, self.config.get(cos_agent.PORT_OPTION),
            hookenv.charm_dir(), sys.executable)
        if problem:   # the unit's status says a wrong port too
            hookenv.log(problem, level=hookenv.WARNING)
        reactive.set_flag(EXPORTER_FLAG)

    def remove_cos_agent(self) -> None:
        """grafana-agent is gone: stop serving the metrics."""
        cos_agent.remove_exporter()
        reactive.clear_flag(EXPORTER_FLAG)

    # ----------------------------------------------------------- status

    def custom_assess_status_check(self) -> Tuple[Optional[str],
                                                  Optional[str]]:
        """Blocked states, the one to act on first.

        Runs after charms.openstack's paused check and before its service
        check; waiting states come after both (last check).
        """
        layout_problem = self.mig_layout_problem
        if layout_problem:
            return 'blocked', layout_problem
        # Before the mappings: a MIG-backed type is not offered until the
        # GPU's MIG mode and instances are there.
        mig_problem = mig_plan.blocked_message(self.mig_work)
        if mig_problem:
            return 'blocked', mig_problem
        problem = self.nova_plan.problem
        if problem and problem[0] == 'blocked':
            return problem
        if reactive.is_flag_set('cos-agent.available'):
            port_problem = cos_agent.port_problem(
                self.config.get(cos_agent.PORT_OPTION))
            if port_problem:
                return 'blocked', port_problem
        if not self.gpus:
            return None, None
        software_problem = state.software_problem()
        if software_problem:
            return 'blocked', software_problem
        installed = self.installed_software
        if installed is None:
            return 'blocked', software.resource_problem(None)
        if self.host.driver != installed.version:
            return 'blocked', software.reboot_message(installed,
                                                      self.host.driver)
        drift = verdict.drift(self.health_facts())
        if drift:
            return 'blocked', verdict.status_message(drift)
        return None, None

    def custom_assess_status_last_check(self) -> Tuple[Optional[str],
                                                       Optional[str]]:
        """Waiting states, else ready naming what was found.

        SR-IOV GPUs without VFs are blocked before this: a reboot while
        the driver does not run, host drift once it does.
        """
        if self.nova_plan.problem:
            return self.nova_plan.problem
        if not reactive.is_flag_set(RELATION + '.connected'):
            return 'waiting', 'Waiting for the {} relation: {}'.format(
                RELATION, juju_commands.relate_command(
                    os.environ.get('JUJU_VERSION'), *RELATION_ENDPOINTS))
        endpoint = reactive.endpoint_from_flag(RELATION + '.connected')
        found = status.waiting_or_ready(
            self.host, self.nova_plan, state.waiting_software(),
            guest_safety.guest_names(plan.vgpus_running(self.host)),
            endpoint is None or endpoint.has_published(self.nova_settings()))
        mig_waits = mig_plan.held_message(self.mig_work.held)
        if not mig_waits:
            return found
        if found[0] == 'waiting':   # several wait: joined, as Nova's are
            mig_waits = found[1] + '; ' + mig_waits
        return 'waiting', mig_waits

    # ----------------------------------------------------------- health

    def health_facts(self, detail: bool = False) -> verdict.HostFacts:
        """What the health verdict is made from. Without detail (every
        hook's status) only what the hook has read already, plus the VFs'
        vGPU types and the charm's records; with it (the action) each
        device's free instances, services and boot units too."""
        host, nova_plan = self.host, self.nova_plan
        models = {gpu.address: gpu.model for gpu in host.functions}
        waiting = state.waiting_software()
        return verdict.HostFacts(
            gpus=[survey.gpu_state(
                gpu, models.get(gpu.address, ''), host.driver is not None,
                None if detail else nova_plan.offered or {})
                for gpu in host.gpus],
            driver=host.driver, installed=self.installed_software,
            published=state.published_mappings(),
            wanted=nova_plan.host_mappings,
            mdevs=[(mdev.uuid, mdev.parent, mdev.type_id)
                   for mdev in host.mdevs],
            mdev_users=host.mdev_users, pci_users=host.pci_users,
            running_guests=host.running_guests, recorded=host.recorded_mdevs,
            recorded_vf_types=host.recorded_vf_types,
            software_problem=state.software_problem(),
            waiting_software=(waiting['package'], waiting['version'])
            if waiting else None, held=nova_plan.held,
            held_whole_host=nova_plan.held_whole_host,
            nova_adds=nova_plan.nova_adds,
            config_problem=nova_plan.problem[1] if nova_plan.problem and
            nova_plan.problem[0] == 'blocked' else None,
            services=survey.services(self.services) if detail else {},
            boot_units=survey.boot_units(BOOT_UNITS + mig_boot.UNITS)
            if detail and self.gpus else {},
            paused=os_utils.is_unit_paused_set(),
            gis_missing=mig_plan.instances_missing(
                self.mig_record, host.mig),
            mig_held=self.mig_work.held,
            mig_held_message=mig_plan.held_message(self.mig_work.held))

    def vgpu_health(self) -> Dict[str, object]:
        """The vgpu-health action's report (health.report), reading
        only; nvidia-smi is asked where the host has it."""
        return verdict.report(
            self.health_facts(detail=True),
            survey.versions(installed_nova_version()),
            nvidia_smi.vgpu_report())

    # ------------------------------------------------------- monitoring

    def update_monitoring(self, nrpe_endpoint, cos_agent: bool) -> bool:
        """Refresh what NRPE checks and the exporter read, and the NRPE
        checks; remove them once nothing monitors (False then)."""
        return upkeep.update(lambda: self.health_facts(detail=True),
                             nrpe_endpoint, cos_agent, self.config)


class UssuriNovaComputeNvidiaVgpuCharm(NovaComputeNvidiaVgpuCharm):
    """Ussuri: per-type [vgpu_<type>] groups, but only the first type.

    Every nova 21.x registers the per-type groups after the driver has
    read them, so all but the first type are ignored (fixed in 22.2.1).
    """

    release = 'ussuri'
    nova_options = nova_config.USSURI
    single_type_reason = (
        'nova 21 (Ussuri) and 22 before 22.2.1 use only the first type '
        '(Nova bug fixed in 22.2.1)')


class VictoriaNovaComputeNvidiaVgpuCharm(UssuriNovaComputeNvidiaVgpuCharm):
    """Victoria and Wallaby: several types from nova 22.2.1 on."""

    release = 'victoria'

    def vgpu_type_limit(self, nova_version: str) -> Optional[int]:
        fixed = releases.upstream_tuple(nova_version) >= (22, 2, 1)
        return None if fixed else 1


class XenaNovaComputeNvidiaVgpuCharm(VictoriaNovaComputeNvidiaVgpuCharm):
    """Xena and later: the generic mdev option names."""

    release = 'xena'
    nova_options = nova_config.XENA

    def vgpu_type_limit(self, nova_version: str) -> Optional[int]:
        return None


class CaracalNovaComputeNvidiaVgpuCharm(XenaNovaComputeNvidiaVgpuCharm):
    """Caracal and later: Nova adds [mdev_<type>] max_instances, which the
    charm does not need: each SR-IOV GPU already gets only as many VFs as
    it can host (nvidia_vgpu.nova.capacity says why)."""

    release = 'caracal'
    nova_options = nova_config.CARACAL


class DalmatianNovaComputeNvidiaVgpuCharm(CaracalNovaComputeNvidiaVgpuCharm):
    """Dalmatian and later: Nova persists vGPUs through libvirt itself,
    which needs mdevctl on the host (instances fail to start without it).
    """

    release = 'dalmatian'
    restores_mdevs = False

    def keep_vgpus_across_reboots(self, periodic: bool = False) -> None:
        super().keep_vgpus_across_reboots(periodic)
        if periodic or not self.gpus or self.installed_software is None:
            return
        if installed_version(MDEVCTL) is None:
            failure = dpkg.install_packages([MDEVCTL])
            if failure:
                state.set_software_problem(
                    'apt-get could not install {} (Nova needs it to keep '
                    'vGPUs across reboots): {}'.format(MDEVCTL, failure))


class EpoxyNovaComputeNvidiaVgpuCharm(DalmatianNovaComputeNvidiaVgpuCharm):
    """Epoxy and later: VFs typed by NVIDIA's vendor-specific VFIO driver
    are offered through PCI passthrough ([pci] device_spec, managed: no).
    """

    release = 'epoxy'
    nova_options = nova_config.EPOXY
