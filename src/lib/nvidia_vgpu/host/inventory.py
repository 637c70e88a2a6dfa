"""The host's NVIDIA GPUs and the vGPU types they offer, read from lspci
and sysfs: what the charm decides from, and what list-vgpu-types shows.

Reading only: nothing here changes the host, so the action can run it
without the reactive framework or charms.openstack.
"""
from typing import Dict, List, Optional, Tuple

from nvidia_vgpu import vgpu_types
from nvidia_vgpu.driver import software
from nvidia_vgpu.host import kernel, pci, sysfs
from nvidia_vgpu.nova import mappings, resource_classes
from nvidia_vgpu import model


def nvidia_gpus() -> List[model.PciFunction]:
    """This host's NVIDIA physical GPUs (one lspci): SR-IOV virtual
    functions look like GPUs to lspci and are left out."""
    functions = pci.list_functions()
    candidates = [function.address for function in functions
                  if function.is_nvidia_gpu]
    return pci.nvidia_gpus(functions, sysfs.virtual_functions(candidates))


def _sriov_records(gpu: str, vfs: List[str], hosted: List[str]
                   ) -> Tuple[List[Dict[str, object]], bool]:
    """One record per type over a GPU's VFs, and whether they are on
    NVIDIA's vendor-specific VFIO driver. Every VF of a GPU offers the
    same types: names and descriptions are read on the first VF only,
    free instances on each. hosted: the types of the vGPUs on its VFs."""
    table = sysfs.creatable_vgpu_types(vfs[0])
    if table is not None:
        tables = [table] + [sysfs.creatable_vgpu_types(vf) or {}
                            for vf in vfs[1:]]
        return vgpu_types.gpu_records(gpu, [
            [model.VgpuType('nvidia-{}'.format(number), vf, name, '', 1)
             for number, name in sorted(table.items())]
            for vf, table in zip(vfs, tables)]), True
    first = sysfs.read_mdev_types(vfs[0])
    known = {found.type_id: found for found in first}
    return vgpu_types.gpu_records(gpu, [first] + [
        sysfs.read_mdev_types(vf, known) for vf in vfs[1:]], hosted), False


def _with_classes(records: List[Dict[str, object]], chosen: Optional[str],
                  vendor_vfio: bool) -> List[Dict[str, object]]:
    """Each record with its profile name, the resource class the charm
    publishes it under with this vgpu-resource-class (None: not valid),
    and the flavor property that asks for one."""
    for record in records:
        found = resource_classes.for_type(
            chosen or resource_classes.VGPU, str(record['type']),
            str(record['name'] or ''), vendor_vfio)
        record['profile'] = found.profile
        record['resource_class'] = found.resource_class if chosen else None
        record['flavor_property'] = found.flavor_property if chosen else None
    return records


def list_vgpu_types(gpus: List[model.PciFunction],
                    installed: Optional[model.Installed],
                    pci_address: Optional[str] = None,
                    resource_class: Optional[str] = None,
                    refusal: Optional[str] = None) -> Dict[str, object]:
    """Results of the list-vgpu-types action: a table in 'output', the
    same rows as structured data in 'types'. A wrong pci-address is a
    ValueError whose text the action fails with.

    resource_class: the vgpu-resource-class option; refusal: why the
    last hook found this nova unable to honour it. While either stands
    the types are still listed, without classes (none is published),
    under that problem.
    """
    problem = refusal
    try:
        chosen: Optional[str] = resource_classes.choice(resource_class)
    except resource_classes.ResourceClassError as error:
        chosen, problem = None, str(error)
    if problem:
        chosen = None
    chosen_gpus = gpus
    if pci_address:
        wanted = pci_address.strip().lower()
        if not mappings.PCI_ADDRESS.fullmatch(wanted):
            raise ValueError(
                'pci-address {!r} is not a full PCI address such as '
                '0000:84:00.0'.format(pci_address))
        chosen_gpus = [gpu for gpu in gpus if gpu.address == wanted]
        if not chosen_gpus:
            raise ValueError('No NVIDIA GPU at {} on this host (GPUs: {})'
                             .format(wanted, ', '.join(
                                 gpu.address for gpu in gpus) or 'none'))
    if not chosen_gpus:
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
    for gpu in chosen_gpus:
        vfs = sysfs.sriov_virtual_functions(gpu.address)
        if vfs:
            on_vfs = set(vfs)
            found, vendor_vfio = _sriov_records(gpu.address, vfs, [
                mdev.type_id for mdev in mdevs if mdev.parent in on_vfs])
            records += _with_classes(found, chosen, vendor_vfio)
        else:
            records += _with_classes([
                vgpu_types.as_record(found, gpu.address)
                for found in sysfs.read_mdev_types(gpu.address)],
                chosen, False)
    output = vgpu_types.table(records) or (
        'The NVIDIA driver offers no vGPU types on {}.'.format(
            ', '.join(gpu.address for gpu in chosen_gpus)))
    if problem:
        output = '{} (no resource classes shown until it is fixed)\n{}'.format(
            problem, output)
    return {'output': output, 'types': records}
