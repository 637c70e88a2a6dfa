"""The nova-compute-nvidia-vgpu charm class, one per OpenStack release family.

charms.openstack picks the class: the release selector below reads the
installed nova-common, and the newest class whose `release` is not newer
than that is instantiated for the hook.
"""
from typing import Optional

import charmhelpers.contrib.openstack.utils as os_utils
import charms_openstack.charm

from nvidia_vgpu import dpkg, releases

NOVA_PACKAGE = 'nova-common'


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
    services = []
    required_relations = []

    @property
    def application_version(self) -> str:
        """The NVIDIA vGPU host software version; empty until installed."""
        return ''

    def list_vgpu_types(self, pci_address: Optional[str] = None) -> dict:
        """Results of the list-vgpu-types action (action-set keys)."""
        raise NotImplementedError(
            'list-vgpu-types is not implemented in this revision')
