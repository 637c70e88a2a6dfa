"""The vGPU host software on this host: install the attached revision
where a GPU is, wait for running guests before replacing a vGPU Manager,
build its kernel module for a kernel updated without headers.

A problem is remembered for the status (unitdata) and retried at the
next install, start, config-changed or upgrade-charm, not in a loop.
"""
from typing import Callable, Optional, Tuple

import charmhelpers.core.hookenv as hookenv
import charms.reactive as reactive

from nvidia_vgpu import model, state
from nvidia_vgpu.apply import context as hook_context
from nvidia_vgpu.driver import module_build, software
from nvidia_vgpu.host import dpkg, kernel, resources
from nvidia_vgpu.nova import guest_safety

SHA256_OPTION = 'nvidia-vgpu-software-sha256'
WAITS_FLAG = 'nova-compute-nvidia-vgpu.software-waits'


class Software:
    """Installs the attached vGPU Manager; tells the hook context when
    the unit's records changed. after_install: what the host needs once
    the software is there (its SR-IOV VFs)."""

    def __init__(self, context: hook_context.HookContext,
                 after_install: Callable[[], None]) -> None:
        self.context = context
        self.after_install = after_install
        self._ensured = False   # install and config-changed: one hook

    @property
    def installed(self) -> Optional[model.Installed]:
        return self.context.unit.installed

    def ensure(self) -> None:
        """Install the attached software if this host has a GPU and does
        not have this very revision yet; a new revision waits while
        running guests use vGPUs here (it would replace the vGPU Manager
        under them) and installs at the first hook after none does (the
        waits flag), or through install-vgpu-software."""
        if self._ensured:
            return
        self._ensured = True
        if not self.context.host.functions:
            self._set_problem(None)
            self._waits(None)
            return
        resource, problem, needed = self._resource_to_install()
        if needed and self._replaces_vgpu_manager(resource.deb) and \
                self.context.plan.running:
            self._waits(resource.deb)
            needed = False
        else:
            self._waits(None)
        if needed:
            problem = self._install(resource)
        elif problem is None and self.context.host.driver is None:
            problem = self._build_module()
        if problem:
            hookenv.log(problem, level=hookenv.WARNING)
        self._set_problem(problem)
        if not problem:
            self.after_install()

    def install_once_guests_are_gone(self) -> None:
        """A revision that waited for guests installs once none runs with
        a vGPU; until then nothing is read again (no hash of the file in
        every update-status)."""
        if not self.context.plan.running:
            self.ensure()

    def install_now(self, refuse_under_running_guests: Callable[[str], None],
                    show_status: Callable[[], None]) -> str:
        """The install-vgpu-software action: install the attached revision
        now; refused while guests use vGPUs unless force=true. What it
        did; raises (the action fails) saying why not, after showing a
        failed install's status (show_status)."""
        if not self.context.host.functions:
            raise RuntimeError('No NVIDIA GPU on this host: there is '
                               'nothing to install')
        resource, problem, needed = self._resource_to_install()
        if problem:
            raise RuntimeError(problem)
        deb = resource.deb
        if not needed:
            return '{} {} is already installed'.format(deb.package,
                                                       deb.version)
        refuse_under_running_guests('install-vgpu-software')
        failure = self._install(resource)
        self._set_problem(failure)
        if failure:
            # The unit shows the block now, not "Installing ..." until
            # the next hook.
            show_status()
            raise RuntimeError(failure)
        self._waits(None)
        self.after_install()
        return ('Installed {} {}; reboot the host when the unit asks, to '
                'load its driver'.format(deb.package, deb.version))

    def _set_problem(self, problem: Optional[str]) -> None:
        state.set_software_problem(problem)
        self.context.unit_changed()

    def _resource_to_install(self) -> Tuple[Optional[model.Resource],
                                            Optional[str], bool]:
        """The attached resource, why it must not be installed (or
        None), and whether this host still needs it."""
        resource = resources.attached_resource(
            hookenv.resource_get(software.RESOURCE))
        problem = software.resource_problem(
            resource, self.context.config.get(SHA256_OPTION) or '')
        needed = problem is None and software.needs_install(
            resource, self.installed,
            self.context.installed_version(resource.deb.package))
        return resource, problem, needed

    def _replaces_vgpu_manager(self, deb: model.DebInfo) -> bool:
        """Whether installing this package would replace a vGPU Manager
        the host has (the charm's, or the same package from elsewhere)."""
        return (self.installed is not None or
                self.context.installed_version(deb.package) is not None)

    def _waits(self, deb: Optional[model.DebInfo]) -> None:
        """Remember (or forget) the revision that waits for guests."""
        state.set_waiting_software(deb)
        self.context.unit_changed()
        if deb is None:
            reactive.clear_flag(WAITS_FLAG)
            return
        hookenv.log('{} {} waits for guests using vGPUs: {}'.format(
            deb.package, deb.version, ', '.join(guest_safety.guest_names(
                self.context.plan.running))), level=hookenv.INFO)
        reactive.set_flag(WAITS_FLAG)

    def _install(self, resource: model.Resource) -> Optional[str]:
        """Install the resource; why it failed, or None."""
        deb = resource.deb
        hookenv.status_set('maintenance', 'Installing NVIDIA vGPU host '
                           'software {} {}'.format(deb.package, deb.version))
        if deb.builds_kernel_module:
            problem = self._kernel_module_problem(deb)
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
        self.context.unit_changed()
        kernel.blacklist_nouveau()
        return None

    def _kernel_module_problem(self, deb: model.DebInfo) -> Optional[str]:
        """Before a package whose kernel module DKMS builds here: install
        what the archive has and the build needs (module_build says
        which), then say why the build, or the module's load under
        Secure Boot, would fail; None if it would not."""
        host = self._build_host()
        missing = module_build.packages_to_install(host)
        failure = None
        if missing:
            hookenv.log('Installing {} for the kernel module of {} {}'.format(
                ', '.join(missing), deb.package, deb.version),
                level=hookenv.INFO)
            failure = dpkg.install_packages(missing)
            host = self._build_host()
        return module_build.problem(deb, host, failure)

    def _build_host(self) -> model.BuildHost:
        return resources.build_host(
            module_build.signed_only, lambda: self.context.installed_version(
                module_build.MOKUTIL_PACKAGE) is not None)

    def _build_module(self) -> Optional[str]:
        """A kernel updated without its headers boots without the
        installed package's DKMS module, and no reboot helps: install
        them and have DKMS build it (module_build says when); the next
        boot loads it. Why it is still missing, or None."""
        installed, running = self.installed, kernel.running_kernel()
        packages = module_build.module_packages(installed, running)
        if packages is None:
            return None
        hookenv.log('Building the kernel module of {} {} for {}'.format(
            installed.package, installed.version, running.release),
            level=hookenv.INFO)
        failures = kernel.build_module(running.release, packages)
        return module_build.unbuilt_module(
            installed, kernel.running_kernel(), *failures)
