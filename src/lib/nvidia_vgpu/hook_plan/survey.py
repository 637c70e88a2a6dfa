"""Each GPU as the health verdict sees it, from the hook's snapshot.

Pure: the hook's status, the monitoring document and vgpu-health all
take their GPUs from here, so the three agree and none reads the host
again. Free vGPUs are what Nova could still create of a type it was
given: on a GPU without SR-IOV the driver's own count for that type
(one file, read on first use by the snapshot); on an SR-IOV GPU with
mdev each VF hosts at most one vGPU, so the driver shows 1 on every VF
without a vGPU while the GPU has room for another of the type, else 0,
which follows from the snapshot without reading 32 VFs x 40 types (a
VF whose vGPU of the type no guest uses counts as free: Nova takes it);
typed VFs of the vendor-specific VFIO driver are counted by the
verdict from the VFs' types and their guests.
"""
from typing import Dict, Mapping, Optional, Sequence

from nvidia_vgpu import model, names, vgpu_types


def gpu_state(gpu: model.HostGpu, gpu_model: str,
              offered: Mapping[str, Mapping[str, str]],
              vf_types: Mapping[str, int]) -> model.GpuState:
    """One GPU as the hook read it: the types its devices offer (free
    instances not counted: None), their names where read, its VFs'
    types."""
    devices = gpu.virtual_functions if gpu.sriov else (gpu.address,)
    types: Dict[str, Dict[str, Optional[int]]] = {}
    names: Dict[str, str] = {}
    for device in devices:
        if device in offered:
            types[device] = dict.fromkeys(offered[device], None)
            names.update((t, n) for t, n in offered[device].items() if n)
    return model.GpuState(
        gpu.address, gpu_model, gpu.total_vfs if gpu.sriov else 0,
        tuple(gpu.virtual_functions), gpu.vendor_vfio, types, names,
        {vf: vf_types.get(vf, 0) for vf in gpu.virtual_functions}
        if gpu.vendor_vfio else {})


def with_free(states: Sequence[model.GpuState], host: model.HostSnapshot,
              published: Optional[model.Mappings]
              ) -> Sequence[model.GpuState]:
    """The same GPUs, with the free vGPUs of each type Nova was given
    counted on each device it was given with."""
    by_address = {gpu.address: gpu for gpu in host.gpus}
    named = _names(states, host, published or {})
    return [state._replace(types=_counted(
        state, by_address[state.address], host, published or {}),
        names=dict(named.get(by_address[state.address].ids, {}),
                   **state.names))
        for state in states]


def _names(states: Sequence[model.GpuState], host: model.HostSnapshot,
           published: model.Mappings) -> Dict[str, Dict[str, str]]:
    """GPU model (its PCI ids) -> the driver's names of the types Nova
    was given, read on one device of one GPU of each model (every GPU of
    a model names its types alike) where the hook did not read them."""
    by_address = {gpu.address: gpu for gpu in host.gpus}
    named: Dict[str, Dict[str, str]] = {}
    for state in states:
        ids = by_address[state.address].ids
        for vgpu_type, devices in sorted(published.items()):
            if state.names.get(vgpu_type) or vgpu_type in named.get(ids, {}):
                continue
            device = next((device for device in devices
                           if vgpu_type in state.types.get(device, {})),
                          None)
            name = host.type_names.get((device, vgpu_type)) if device \
                else None
            if name:
                named.setdefault(ids, {})[vgpu_type] = name
    return named


def _counted(state: model.GpuState, gpu: model.HostGpu,
             host: model.HostSnapshot, published: model.Mappings
             ) -> Mapping[str, Mapping[str, Optional[int]]]:
    types = {device: dict(offered) for device, offered
             in state.types.items()}
    if gpu.vendor_vfio:
        return types
    for vgpu_type, devices in published.items():
        for device in devices:
            if vgpu_type not in types.get(device, {}):
                continue
            types[device][vgpu_type] = (
                _vf_count(state, gpu, host, device, vgpu_type) if gpu.sriov
                else host.available.get((device, vgpu_type)))
    return types


def _vf_count(state: model.GpuState, gpu: model.HostGpu,
              host: model.HostSnapshot, vf: str,
              vgpu_type: str) -> Optional[int]:
    """What Nova can still give a guest on one VF for the type: 1 where
    the VF hosts no vGPU and the GPU has room for another (what the
    driver shows), or where its vGPU is of the type and no guest's (Nova
    takes an unassigned vGPU before it creates one: the charm makes them
    on a GPU that mixes sizes), else 0."""
    devices = set(gpu.virtual_functions)
    here = [mdev for mdev in host.mdevs if mdev.parent == vf]
    if here:
        return int(all(mdev.type_id == vgpu_type and
                       mdev.uuid not in host.mdev_users for mdev in here))
    room = _capacity(state, gpu, host, vgpu_type)
    if room is None:
        return None
    created = sum(1 for mdev in host.mdevs
                  if mdev.parent in devices and mdev.type_id == vgpu_type)
    return 1 if created < room else 0


def _capacity(state: model.GpuState, gpu: model.HostGpu,
              host: model.HostSnapshot, vgpu_type: str) -> Optional[int]:
    """vGPUs of the type the GPU can host: one per GPU instance of its
    profile on a GPU in MIG mode, else the type's max_instance."""
    mig = (host.mig or {}).get(gpu.address)
    profile = names.gi_profile_of(state.names.get(vgpu_type, ''))
    if mig is not None and mig.enabled and profile:
        return mig.instances_of(profile)
    description = host.type_descriptions.get(gpu.address, {}).get(
        vgpu_type)
    return vgpu_types.max_instance(description) if description else None
