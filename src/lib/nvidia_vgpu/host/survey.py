"""What the health check reads on the host beyond the hook's snapshot,
gathered from the modules that touch it (systemd, dpkg, the kernel): the
services, the charm's boot units, the versions live migration depends on
(each GPU comes from the snapshot: hook_plan/survey.py).

Reading only: nothing here changes the host, so the vgpu-health action
and update-status can both run it.
"""
from typing import Callable, Dict, Iterable, Optional, Tuple

from nvidia_vgpu.host import dpkg, kernel, nova_conf, systemd
from nvidia_vgpu import model

LIBVIRT_PACKAGES = ('libvirt-daemon-system', 'libvirt0')
QEMU_PACKAGE = 'qemu-system-x86'


def units(services: Iterable[str], boot_units: Iterable[str]
          ) -> Tuple[Dict[str, str], Dict[str, str]]:
    """systemd's word for each of these services, and for those of these
    boot units the host has (named without '.service'), from one
    systemctl."""
    services = list(services)
    present = [name for name in boot_units if systemd.installed(name)]
    words = systemd.states(services + present)
    return ({name: words[name] for name in services},
            {name[:-len('.service')]: words[name] for name in present})


def versions(nova: Optional[str],
             gpus: Iterable[model.HostGpu] = (),
             installed: Callable[[str], Optional[str]]
             = dpkg.installed_version) -> model.Versions:
    """What live migration depends on, as installed here: the versions,
    nova-compute's post-copy setting, and these GPUs' boards (installed:
    how a package's version is asked)."""
    libvirt, qemu = libvirt_and_qemu(installed)
    return model.Versions(nova, libvirt, qemu, kernel.running_release(),
                          nova_conf.permit_post_copy(),
                          tuple(sorted({gpu.ids for gpu in gpus if gpu.ids})))


def from_status_file(also: Iterable[str] = ()
                     ) -> Callable[[str], Optional[str]]:
    """How list-vgpu-types asks the versions live migration depends on
    (libvirt's, QEMU's, and `also`): from dpkg's status file, one read
    for all (dpkg-query where dpkg has pending changes)."""
    found = dpkg.status_versions(
        tuple(also) + LIBVIRT_PACKAGES + (QEMU_PACKAGE,))
    if found is None:
        return dpkg.installed_version
    return found.get


def libvirt_and_qemu(installed: Callable[[str], Optional[str]]
                     = dpkg.installed_version
                     ) -> Tuple[Optional[str], Optional[str]]:
    """libvirt's and QEMU's Debian versions (None: not installed), which
    Nova compares with its minimums for live migration; installed: how a
    package's version is asked (the charm's remembers dpkg's answers)."""
    found = (installed(name) for name in LIBVIRT_PACKAGES)
    libvirt = next((version for version in found if version), None)
    return libvirt, installed(QEMU_PACKAGE)
