"""The host's NVIDIA GPUs, from one lspci and their VFs' links: what
every reader of the host starts from (host/snapshot.py reads the rest, at
the level a hook, list-vgpu-types or the health check needs).

Reading only: nothing here changes the host, so the action can run it
without the reactive framework or charms.openstack.
"""
from typing import List

from nvidia_vgpu import model
from nvidia_vgpu.host import pci, sysfs


def nvidia_gpus() -> List[model.PciFunction]:
    """This host's NVIDIA physical GPUs (one lspci): SR-IOV virtual
    functions look like GPUs to lspci and are left out."""
    functions = pci.list_functions()
    candidates = [function.address for function in functions
                  if function.is_nvidia_gpu]
    return pci.nvidia_gpus(functions, sysfs.virtual_functions(candidates))
