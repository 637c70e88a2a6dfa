"""The nova-compute-nvidia-vgpu charm class, one per OpenStack release family.

charms.openstack picks the class: the release selector below reads the
installed nova-common, and the newest class whose `release` is not newer
than that is instantiated for the hook.
"""
import functools
import hashlib
import os
from typing import List, Optional, Tuple

import charmhelpers.contrib.openstack.utils as os_utils
import charmhelpers.core.hookenv as hookenv
import charmhelpers.core.unitdata as unitdata
import charms_openstack.charm

from nvidia_vgpu import dpkg, kernel, pci, releases, software, sysfs

NOVA_PACKAGE = 'nova-common'
SHA256_OPTION = 'nvidia-vgpu-software-sha256'
# unitdata keys; kept across charm upgrades, so renaming one loses state.
INSTALLED_KEY = 'nvidia-vgpu.installed'
PROBLEM_KEY = 'nvidia-vgpu.software-problem'


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


@charms_openstack.charm.register_os_release_selector
def select_release() -> Optional[str]:
    """The release of the nova installed by the principal, if any yet.

    None (nova not installed yet) makes charms.openstack use the newest
    class; nothing is published to nova until nova is there anyway.
    """
    version = dpkg.installed_version(NOVA_PACKAGE)
    return releases.release_for_nova_version(version) if version else None


class NovaComputeNvidiaVgpuCharm(charms_openstack.charm.OpenStackCharm):
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

    # ---------------------------------------------------------- the host

    @functools.cached_property
    def gpus(self) -> List[pci.PciFunction]:
        """This host's NVIDIA physical GPUs (one lspci per hook)."""
        functions = pci.list_functions()
        candidates = [function.address for function in functions
                      if function.is_nvidia_gpu]
        return pci.nvidia_gpus(functions,
                               sysfs.virtual_functions(candidates))

    @property
    def installed_software(self) -> Optional[software.Installed]:
        return software.Installed.from_dict(unitdata.kv().get(INSTALLED_KEY))

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
        and upgrade-charm (Juju's answer to attach-resource); never in
        update-status. A problem is remembered for the status and retried
        at the next of those hooks, not in a loop.
        """
        if self._software_ensured:
            return
        self._software_ensured = True
        kv = unitdata.kv()
        if not self.gpus:
            kv.unset(PROBLEM_KEY)
            return
        resource = self._attached_resource()
        problem = software.resource_problem(
            resource, self.config.get(SHA256_OPTION) or '')
        if problem is None and software.needs_install(
                resource, self.installed_software,
                dpkg.installed_version(resource.deb.package)):
            problem = self._install(resource)
        if problem:
            hookenv.log(problem, level=hookenv.WARNING)
            kv.set(PROBLEM_KEY, problem)
        else:
            kv.unset(PROBLEM_KEY)

    def _attached_resource(self) -> Optional[software.Resource]:
        path = hookenv.resource_get(software.RESOURCE)
        if not path or not os.path.isfile(path):
            return None
        size = os.path.getsize(path)
        digest = hashlib.sha256()
        with open(path, 'rb') as stream:
            for block in iter(lambda: stream.read(1 << 20), b''):
                digest.update(block)
        return software.Resource(size, digest.hexdigest(),
                                 dpkg.read_deb(path) if size else None)

    def _install(self, resource: software.Resource) -> Optional[str]:
        deb = resource.deb
        hookenv.status_set('maintenance', 'Installing NVIDIA vGPU host '
                           'software {} {}'.format(deb.package, deb.version))
        failure = dpkg.install_local_deb(
            hookenv.resource_get(software.RESOURCE))
        if failure:
            return ('apt-get could not install {} {}: {} (retried at the '
                    'next config-changed, upgrade-charm or start)'.format(
                        deb.package, deb.version, failure))
        unitdata.kv().set(INSTALLED_KEY, software.Installed(
            resource.sha256, deb.package, deb.version,
            deb.services).to_dict())
        kernel.blacklist_nouveau()
        return None

    # ----------------------------------------------------------- status

    def custom_assess_status_check(self) -> Tuple[Optional[str],
                                                  Optional[str]]:
        """Blocked states an operator has to act on, most urgent first."""
        if not self.gpus:
            return None, None
        problem = unitdata.kv().get(PROBLEM_KEY)
        if problem:
            return 'blocked', problem
        installed = self.installed_software
        if installed is None:
            return 'blocked', software.resource_problem(None)
        running = kernel.nvidia_driver_version()
        if running != installed.version:
            return 'blocked', software.reboot_message(installed, running)
        return None, None

    def custom_assess_status_last_check(self) -> Tuple[Optional[str],
                                                       Optional[str]]:
        """Ready, naming what was found (after the service checks)."""
        found = pci.describe_gpus(self.gpus)
        if not self.gpus:
            found += ' on this host'
        return 'active', 'Unit is ready: ' + found

    # ---------------------------------------------------------- actions

    def list_vgpu_types(self, pci_address: Optional[str] = None) -> dict:
        """Results of the list-vgpu-types action (action-set keys)."""
        raise NotImplementedError(
            'list-vgpu-types is not implemented in this revision')
