"""The host's NVIDIA GPUs and the vGPU types they offer, read from lspci
and sysfs: what the charm decides from, and what list-vgpu-types shows.

Reading only: nothing here changes the host, so the action can run it
without the reactive framework or charms.openstack.
"""
from typing import Dict, List, Optional

from nvidia_vgpu import kernel, mappings, pci, software, sysfs, vgpu_types


def nvidia_gpus() -> List[pci.PciFunction]:
    """This host's NVIDIA physical GPUs (one lspci): SR-IOV virtual
    functions look like GPUs to lspci and are left out."""
    functions = pci.list_functions()
    candidates = [function.address for function in functions
                  if function.is_nvidia_gpu]
    return pci.nvidia_gpus(functions, sysfs.virtual_functions(candidates))


def _sriov_records(gpu: str, vfs: List[str], hosted: List[str]
                   ) -> List[Dict[str, object]]:
    """One record per type over a GPU's VFs. Every VF of a GPU offers the
    same types: names and descriptions are read on the first VF only,
    free instances on each. hosted: the types of the vGPUs on its VFs."""
    table = sysfs.creatable_vgpu_types(vfs[0])
    if table is not None:
        tables = [table] + [sysfs.creatable_vgpu_types(vf) or {}
                            for vf in vfs[1:]]
        return vgpu_types.gpu_records(gpu, [
            [vgpu_types.VgpuType('nvidia-{}'.format(number), vf, name, '', 1)
             for number, name in sorted(table.items())]
            for vf, table in zip(vfs, tables)])
    first = sysfs.read_mdev_types(vfs[0])
    known = {found.type_id: found for found in first}
    return vgpu_types.gpu_records(gpu, [first] + [
        sysfs.read_mdev_types(vf, known) for vf in vfs[1:]], hosted)


def list_vgpu_types(gpus: List[pci.PciFunction],
                    installed: Optional[software.Installed],
                    pci_address: Optional[str] = None) -> Dict[str, object]:
    """Results of the list-vgpu-types action: a table in 'output', the
    same rows as structured data in 'types'. A wrong pci-address is a
    ValueError whose text the action fails with."""
    chosen = gpus
    if pci_address:
        wanted = pci_address.strip().lower()
        if not mappings.PCI_ADDRESS.fullmatch(wanted):
            raise ValueError(
                'pci-address {!r} is not a full PCI address such as '
                '0000:84:00.0'.format(pci_address))
        chosen = [gpu for gpu in gpus if gpu.address == wanted]
        if not chosen:
            raise ValueError('No NVIDIA GPU at {} on this host (GPUs: {})'
                             .format(wanted, ', '.join(
                                 gpu.address for gpu in gpus) or 'none'))
    if not chosen:
        return {'output': 'No NVIDIA GPU on this host.', 'types': []}
    if installed is None:
        return {'output': 'The NVIDIA vGPU host software is not '
                'installed: ' + software.ATTACH_COMMAND, 'types': []}
    if kernel.nvidia_driver_version() is None:
        return {'output': 'The NVIDIA driver is not loaded yet: reboot '
                'the host to load {} {}.'.format(
                    installed.package, installed.version), 'types': []}
    records: List[Dict[str, object]] = []
    mdevs = sysfs.mediated_devices()
    for gpu in chosen:
        vfs = sysfs.sriov_virtual_functions(gpu.address)
        if vfs:
            on_vfs = set(vfs)
            records += _sriov_records(gpu.address, vfs, [
                mdev.type_id for mdev in mdevs if mdev.parent in on_vfs])
        else:
            records += [vgpu_types.as_record(found, gpu.address)
                        for found in sysfs.read_mdev_types(gpu.address)]
    output = vgpu_types.table(records) or (
        'The NVIDIA driver offers no vGPU types on {}.'.format(
            ', '.join(gpu.address for gpu in chosen)))
    return {'output': output, 'types': records}
