"""Policy for the NVIDIA vGPU host software resource: is this file the
right thing to install, and does it need installing?

Pure functions over facts gathered elsewhere (dpkg, hookenv), so every
verdict an operator can see is tested without a host.
"""
import fnmatch
from typing import Optional

from nvidia_vgpu import model

RESOURCE = 'nvidia-vgpu-software'
# NVIDIA names the vGPU Manager for Ubuntu KVM nvidia-vgpu-ubuntu-<branch>.
HOST_PACKAGE_PATTERN = 'nvidia-vgpu-ubuntu-*'
# What operators attach by mistake, and what it is.
KNOWN_WRONG_PACKAGES = (
    ('nvidia-linux-grid-*', 'the vGPU guest driver'),
    ('nvidia-driver-*', 'an NVIDIA desktop/datacenter driver, not vGPU'),
)
ATTACH_COMMAND = ('juju attach-resource nova-compute-nvidia-vgpu '
                  'nvidia-vgpu-software=./nvidia-vgpu-ubuntu-<branch>_'
                  '<version>_amd64.deb')


def resource_problem(resource: Optional[model.Resource],
                     pinned_sha256: str = '') -> Optional[str]:
    """Why this resource must not be installed, or None if it may be.

    Each message says what is wrong and what to do about it.
    """
    if resource is None or resource.size == 0:
        return ('NVIDIA GPU found but no vGPU host software attached: '
                + ATTACH_COMMAND)
    pinned = pinned_sha256.strip().lower()
    if pinned and resource.sha256 != pinned:
        return ('Resource {} has sha256 {}, not the {} set in '
                'nvidia-vgpu-software-sha256: attach the expected file or '
                'correct the option'.format(RESOURCE, resource.sha256[:12],
                                            pinned[:12]))
    if resource.deb is None:
        return ('Resource {} is not a Debian package (dpkg-deb cannot read '
                'it): attach NVIDIA\'s {}.deb'.format(
                    RESOURCE, HOST_PACKAGE_PATTERN))
    package = resource.deb.package
    if not fnmatch.fnmatchcase(package, HOST_PACKAGE_PATTERN):
        kind = next((what for pattern, what in KNOWN_WRONG_PACKAGES
                     if fnmatch.fnmatchcase(package, pattern)),
                    'not the vGPU host software')
        return ('Resource {} is {} {} ({}); attach the vGPU Manager for '
                'Ubuntu KVM, {}'.format(RESOURCE, package,
                                        resource.deb.version, kind,
                                        HOST_PACKAGE_PATTERN))
    return None


def needs_install(resource: model.Resource,
                  installed: Optional[model.Installed],
                  installed_version: Optional[str]) -> bool:
    """Install unless this very file is what is on the host now.

    The sha256 identifies the resource revision; the package database
    confirms the package is still there at the version it installed.
    """
    return not (installed is not None and
                installed.sha256 == resource.sha256 and
                installed_version == installed.version)


def reboot_message(installed: model.Installed, running: Optional[str]) -> str:
    """Blocked message while the installed driver is not the running one.

    Says "installed NVIDIA software", as operators' tooling waits for.
    """
    if running is None:
        why = 'the NVIDIA driver is not loaded yet'
    else:
        why = 'driver {} is still running'.format(running)
    return ('Reboot required: installed NVIDIA software {} {}, {}'.format(
        installed.package, installed.version, why))
