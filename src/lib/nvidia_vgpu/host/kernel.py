"""The running kernel: its release, its headers, its modules, and the
modules loaded at boot."""
import os
import re
import subprocess
from typing import List, Optional, Set, Tuple

from nvidia_vgpu import model
from nvidia_vgpu.host import dpkg, templates
from nvidia_vgpu.host.hostfs import host_path, write_if_changed

PROC_MODULES = '/proc/modules'
# What `uname -r` prints.
OSRELEASE = '/proc/sys/kernel/osrelease'
# Where a kernel's headers are found by what builds modules for it (DKMS,
# kbuild): /lib/modules/<release>/build, a link into /usr/src that the
# linux-headers-<release> package installs.
MODULE_BUILD_DIR = '/lib/modules/{}/build'
NVIDIA_MODULE = 'nvidia'
# Where a kernel's modules are: DKMS installs what it builds under it
# (Ubuntu: updates/dkms/), compressed on newer releases (.ko.zst).
MODULES_DIR = '/lib/modules/{}'
# The module file of `nvidia` itself: the kernel's own nvidia-wmi-*,
# i2c-nvidia-gpu and the like are other drivers.
NVIDIA_MODULE_FILE = re.compile(r'^nvidia\.ko(\.[a-z]+)?$')
NVIDIA_MODULE_VERSION = '/sys/module/nvidia/version'
# The open-source driver claims NVIDIA GPUs at boot unless it is kept out;
# the vGPU Manager cannot start while it holds them. Its text is
# templates/nvidia-vgpu-disable-nouveau.conf.
NOUVEAU_BLACKLIST = '/etc/modprobe.d/nvidia-vgpu-disable-nouveau.conf'


def loaded_modules() -> Set[str]:
    """Names of the modules loaded now (the first column of /proc/modules)."""
    try:
        with open(host_path(PROC_MODULES)) as stream:
            return {line.split(' ', 1)[0] for line in stream if line.strip()}
    except FileNotFoundError:
        return set()


def running_release() -> str:
    """The release of the kernel running now (uname -r), which DKMS
    builds a package's module for when the package is installed."""
    try:
        with open(host_path(OSRELEASE)) as stream:
            release = stream.read().strip()
    except FileNotFoundError:
        release = ''
    return release or os.uname().release


def headers_installed(release: str) -> bool:
    """Whether a kernel's headers are where DKMS looks for them: its
    build link leads to a tree with include/ (DKMS's postinst helper
    tests that directory; a dangling link, as left by removed headers,
    does not count)."""
    return os.path.isdir(os.path.join(
        host_path(MODULE_BUILD_DIR.format(release)), 'include'))


def nvidia_module_built(release: str) -> bool:
    """Whether a kernel has an nvidia module file to load at boot (DKMS
    built one for it); its headers' links are not followed."""
    for _, directories, files in os.walk(host_path(
            MODULES_DIR.format(release))):
        directories[:] = [name for name in directories
                          if name not in ('build', 'source')]
        if any(NVIDIA_MODULE_FILE.match(name) for name in files):
            return True
    return False


def running_kernel() -> model.RunningKernel:
    """The running kernel's release, whether its headers are installed
    and whether it has an nvidia module: read only where the driver is
    not loaded (a walk of its modules' tree)."""
    release = running_release()
    return model.RunningKernel(release, headers_installed(release),
                               nvidia_module_built(release))


def build_module(release: str, packages: List[str]
                 ) -> Tuple[Optional[str], Optional[str]]:
    """Have DKMS build its modules for a kernel: install `packages` (its
    headers, whose installation has DKMS build already), then `dkms
    autoinstall -k <release>`, which builds what is still missing and
    is a no-op otherwise. Nothing is loaded: the next boot does that.
    Returns (apt's reason, dkms's reason), None for what did not fail;
    dkms does not run when apt failed."""
    if packages:
        failure = dpkg.install_packages(packages)
        if failure:
            return failure, None
    done = subprocess.run(['dkms', 'autoinstall', '-k', release],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if done.returncode == 0:
        return None, None
    lines = [line.strip() for line in (done.stderr + done.stdout)
             .splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith('Error!')]
    return None, (errors or lines[-1:] or [
        'dkms exited with {}'.format(done.returncode)])[0]


def nvidia_driver_version() -> Optional[str]:
    """Version of the NVIDIA kernel driver running now, None if none is.

    A newly installed driver only runs after a reboot; until then the
    loaded module keeps the old version (or nouveau holds the GPU).
    """
    if NVIDIA_MODULE not in loaded_modules():
        return None
    try:
        with open(host_path(NVIDIA_MODULE_VERSION)) as stream:
            return stream.read().strip() or None
    except FileNotFoundError:
        return None


def blacklist_nouveau() -> bool:
    """Keep nouveau out of the next boot; True if anything changed.

    The initramfs also loads modules, so it is rebuilt when the blacklist
    is first written (or altered), and only then.
    """
    if not write_if_changed(NOUVEAU_BLACKLIST, templates.render(
            os.path.basename(NOUVEAU_BLACKLIST))):
        return False
    subprocess.run(['update-initramfs', '-u'], check=True,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return True
