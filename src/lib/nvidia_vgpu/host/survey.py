"""What the health check reads on the host, gathered from the modules that
touch it (sysfs, systemd, dpkg, the kernel): each GPU's VFs, types and
free instances, VFs' vGPU types, the charm's boot units, the versions
live migration depends on.

Reading only: nothing here changes the host, so the vgpu-health action
and update-status can both run it.
"""
from typing import Callable, Dict, Iterable, Optional, Tuple

from nvidia_vgpu.host import dpkg, kernel, sysfs, systemd
from nvidia_vgpu.model import HostGpu, VgpuType
from nvidia_vgpu.names import type_id
from nvidia_vgpu import model

LIBVIRT_PACKAGES = ('libvirt-daemon-system', 'libvirt0')
QEMU_PACKAGE = 'qemu-system-x86'


def gpu_state(gpu: HostGpu, gpu_model: str, driver_running: bool,
              offered: Optional[Dict[str, Dict[str, str]]] = None
              ) -> model.GpuState:
    """One GPU as the host shows it.

    offered: the types per device the hook already read (the charm
    class's, names only where profile names are used); update-status
    passes it and nothing more is listed. Without it (the action) each
    device's types are read with their free instances.
    """
    vfs = tuple(gpu.virtual_functions)
    total = sysfs.sriov_total_vfs(gpu.address) if gpu.sriov else 0
    devices = vfs if gpu.sriov else (gpu.address,)
    types: Dict[str, Dict[str, Optional[int]]] = {}
    names: Dict[str, str] = {}
    if offered is not None:
        for device in devices:
            if device in offered:
                types[device] = dict.fromkeys(offered[device], None)
                names.update((t, n) for t, n in offered[device].items() if n)
    elif driver_running and gpu.vendor_vfio:
        for vf in vfs:
            table = sysfs.creatable_vgpu_types(vf) or {}
            types[vf] = {type_id(number): None for number in table}
            names.update((type_id(number), name)
                         for number, name in table.items())
    elif driver_running:
        known: Dict[str, VgpuType] = {}
        for device in devices:
            found = sysfs.read_mdev_types(device, known)
            known.update((vgpu_type.type_id, vgpu_type)
                         for vgpu_type in found)
            types[device] = {vgpu_type.type_id: vgpu_type.available_instances
                             for vgpu_type in found}
        names = {type_id: found.name for type_id, found in known.items()
                 if found.name}
    vf_types = ({vf: sysfs.current_vgpu_type(vf) or 0 for vf in vfs}
                if gpu.vendor_vfio else {})
    return model.GpuState(gpu.address, gpu_model, total, vfs,
                          gpu.vendor_vfio, types, names, vf_types)


def boot_units(names: Iterable[str]) -> Dict[str, str]:
    """Those of these boot units the host has, and systemd's word for
    each."""
    return {name[:-len('.service')]: systemd.state(name)
            for name in names if systemd.installed(name)}


def services(names: Iterable[str]) -> Dict[str, str]:
    """systemd's word for each of these services."""
    return {name: systemd.state(name) for name in names}


def versions(nova: Optional[str]) -> model.Versions:
    """What live migration depends on, as installed here."""
    libvirt, qemu = libvirt_and_qemu()
    return model.Versions(nova, libvirt, qemu, kernel.running_release())


def libvirt_and_qemu(installed: Callable[[str], Optional[str]]
                     = dpkg.installed_version
                     ) -> Tuple[Optional[str], Optional[str]]:
    """libvirt's and QEMU's Debian versions (None: not installed), which
    Nova compares with its minimums for live migration; installed: how a
    package's version is asked (the charm's remembers dpkg's answers)."""
    found = (installed(name) for name in LIBVIRT_PACKAGES)
    libvirt = next((version for version in found if version), None)
    return libvirt, installed(QEMU_PACKAGE)
