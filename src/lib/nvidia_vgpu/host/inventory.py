"""The host's NVIDIA GPUs and the vGPU types they offer, read from lspci
and sysfs: what list-vgpu-types shows (nova/type_listing.py says how).

Reading only: nothing here changes the host, so the action can run it
without the reactive framework or charms.openstack.
"""
from typing import List

from nvidia_vgpu import model
from nvidia_vgpu.names import type_id
from nvidia_vgpu.host import pci, sysfs


def nvidia_gpus() -> List[model.PciFunction]:
    """This host's NVIDIA physical GPUs (one lspci): SR-IOV virtual
    functions look like GPUs to lspci and are left out."""
    functions = pci.list_functions()
    candidates = [function.address for function in functions
                  if function.is_nvidia_gpu]
    return pci.nvidia_gpus(functions, sysfs.virtual_functions(candidates))


def any_sriov(gpus: List[model.PciFunction]) -> bool:
    """Whether any of these GPUs can have VFs (every MIG-capable GPU
    can: they are Ampere and later datacenter GPUs)."""
    return any(sysfs.sriov_total_vfs(gpu.address) for gpu in gpus)


def offered_types(gpus: List[model.PciFunction]) -> List[model.GpuTypes]:
    """What each GPU offers now, device by device."""
    mdevs = sysfs.mediated_devices()
    found = []
    for gpu in gpus:
        vfs = sysfs.sriov_virtual_functions(gpu.address)
        if not vfs:
            found.append(model.GpuTypes(
                gpu.address, [sysfs.read_mdev_types(gpu.address)]))
            continue
        on_vfs = set(vfs)
        hosted = [mdev.type_id for mdev in mdevs if mdev.parent in on_vfs]
        found.append(_sriov_types(gpu.address, vfs, hosted))
    return found


def _sriov_types(gpu: str, vfs: List[str], hosted: List[str]
                 ) -> model.GpuTypes:
    """An SR-IOV GPU's types over its VFs. Every VF of a GPU offers the
    same types: names and descriptions are read on the first VF only,
    free instances on each; on NVIDIA's vendor-specific VFIO driver each
    VF's own table of what it can still take."""
    table = sysfs.creatable_vgpu_types(vfs[0])
    if table is not None:
        tables = [table] + [sysfs.creatable_vgpu_types(vf) or {}
                            for vf in vfs[1:]]
        return model.GpuTypes(gpu, [
            [model.VgpuType(type_id(number), vf, name, '', 1)
             for number, name in sorted(table.items())]
            for vf, table in zip(vfs, tables)], sriov=True, vendor_vfio=True)
    first = sysfs.read_mdev_types(vfs[0])
    known = {vgpu_type.type_id: vgpu_type for vgpu_type in first}
    return model.GpuTypes(gpu, [first] + [
        sysfs.read_mdev_types(vf, known) for vf in vfs[1:]], hosted,
        sriov=True)
