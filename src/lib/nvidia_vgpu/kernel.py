"""The running kernel's modules, and the modules loaded at boot."""
import subprocess
from typing import Optional, Set

from nvidia_vgpu.hostfs import host_path, write_if_changed

PROC_MODULES = '/proc/modules'
NVIDIA_MODULE = 'nvidia'
NVIDIA_MODULE_VERSION = '/sys/module/nvidia/version'
OSRELEASE = '/proc/sys/kernel/osrelease'
# The open-source driver claims NVIDIA GPUs at boot unless it is kept out;
# the vGPU Manager cannot start while it holds them.
NOUVEAU_BLACKLIST = '/etc/modprobe.d/nvidia-vgpu-disable-nouveau.conf'
NOUVEAU_BLACKLIST_CONTENT = (
    '# Written by the nova-compute-nvidia-vgpu charm: the NVIDIA vGPU\n'
    '# Manager needs the GPUs, which nouveau would otherwise claim at boot.\n'
    'blacklist nouveau\n'
    'options nouveau modeset=0\n')


def loaded_modules() -> Set[str]:
    """Names of the modules loaded now (the first column of /proc/modules)."""
    try:
        with open(host_path(PROC_MODULES)) as stream:
            return {line.split(' ', 1)[0] for line in stream if line.strip()}
    except FileNotFoundError:
        return set()


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


def running_release() -> Optional[str]:
    """The running kernel's release (uname -r), read from /proc so a
    test host can set it; None if it cannot be read."""
    try:
        with open(host_path(OSRELEASE)) as stream:
            return stream.read().strip() or None
    except OSError:
        return None


def blacklist_nouveau() -> bool:
    """Keep nouveau out of the next boot; True if anything changed.

    The initramfs also loads modules, so it is rebuilt when the blacklist
    is first written (or altered), and only then.
    """
    if not write_if_changed(NOUVEAU_BLACKLIST, NOUVEAU_BLACKLIST_CONTENT):
        return False
    subprocess.run(['update-initramfs', '-u'], check=True,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return True
