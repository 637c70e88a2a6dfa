"""Which VFs of each SR-IOV GPU the charm gives Nova, so that Nova counts
exactly what each GPU can host.

On an SR-IOV GPU (Ampere and later) every free VF shows one free instance
of every type until the GPU hosts its type's max_instance; Nova counts
one vGPU per VF it is given. Nova's own answer, [mdev_<type>]
max_instances (Caracal, nova 29), is one cap for the whole host, applied
first come first served in libvirt's device order (_get_gpu_inventories
and _get_supported_vgpu_types, the same in nova 29 and 34): with two A40s
(A40-2Q: 24 per GPU, 32 VFs each) and a cap of 48 the first GPU gets 32
providers and the second 16, and the 25th vGPU on the first fails at mdev
creation. So the charm gives Nova, per GPU and type, only as many VFs as
the GPU can host: each GPU's providers then add up to its capacity on
every release, Queens to today.

max_instances is therefore not published at all: with these VFs the
host's total never exceeds the sum of the GPUs' capacities, which is the
only cap the charm could give, so it could never bind; and where a GPU's
capacity cannot be read there is no number to give either. (Checked in
Nova's own driver: nova_tests/, test_max_instances_would_change_nothing.)

On a GPU in MIG mode several MIG-backed types may share the GPU, each
on VFs of its own (share_mig_gpus): every VF lists every MIG-backed
type and offers one while a GPU instance of its profile is free, so each
type is given as many VFs as it has instances. On NVIDIA's
vendor-specific VFIO driver the same holds for the VFs the charm types
(share_mig_vfio_gpus), one type alone too: a VF typed beyond the
instances would be refused by the driver. Likewise a time-sliced type
there takes at most its maximum per GPU (limit_vfio_to_capacity), which
the driver gives through nvidia-smi only.

Pure functions: data in, data out.
"""
from typing import (Callable, Collection, Dict, Iterable, List, Mapping,
                    Optional, Set, Tuple)

from nvidia_vgpu.model import HostGpu
from nvidia_vgpu.names import type_order
from nvidia_vgpu.nova.mappings import Mappings

# (GPU address, vGPU type) -> the type's max_instance on that GPU
Capacities = Mapping[Tuple[str, str], Optional[int]]


def vfs_to_publish(vfs: Iterable[str], capacity: Optional[int],
                   occupied: Collection[str]) -> List[str]:
    """The VFs of one GPU, of those mapped to one type, to give Nova.

    capacity: the type's max_instance on this GPU (None: unknown, every
    VF is given). occupied: VFs that host a vGPU, or will host a guest's
    vGPU again after a reboot; they always stay, since taking one from
    Nova would orphan the guest's allocation. Free VFs fill up the rest,
    lowest address first, so the choice is the same at every hook.
    """
    listed = sorted(set(vfs))
    if capacity is None:
        return listed
    kept = [vf for vf in listed if vf in occupied]
    free = [vf for vf in listed if vf not in occupied]
    return sorted(kept + free[:max(0, capacity - len(kept))])


def limit_to_capacity(host_mappings: Mappings, gpus: Iterable[HostGpu],
                      capacities: Capacities,
                      occupied: Collection[str]) -> Mappings:
    """The host's mappings with each SR-IOV GPU's VFs cut down, per
    type, to what the GPU can host. Devices that are no mdev VF (GPUs
    without SR-IOV, VFs on the vendor-specific VFIO driver:
    limit_vfio_to_capacity) stay as they are."""
    return _cut_to_capacity(host_mappings, {
        vf: gpu.address for gpu in gpus if gpu.sriov and not gpu.vendor_vfio
        for vf in gpu.virtual_functions}, capacities,
        lambda vgpu_type: occupied)


def limit_vfio_to_capacity(host_mappings: Mappings, gpus: Iterable[HostGpu],
                           capacities: Capacities, typed: Mapping[str, str],
                           mig_gpus: Collection[str]) -> Mappings:
    """The host's mappings with the VFs of each GPU on NVIDIA's
    vendor-specific VFIO driver, not in MIG mode, cut down per type to
    the most vGPUs of it the GPU holds: there the driver takes a
    time-sliced type on at most that many VFs, and a VF beyond them
    could never be typed, so Nova would offer a vGPU no guest can get.
    VFs typed with it now (typed: VF -> its type) stay, free ones fill
    up lowest address first; where the maximum is not known every VF
    named stays. GPUs in MIG mode: share_mig_vfio_gpus."""
    return _cut_to_capacity(host_mappings, {
        vf: gpu.address for gpu in gpus
        if gpu.vendor_vfio and gpu.address not in mig_gpus
        for vf in gpu.virtual_functions}, capacities,
        lambda vgpu_type: {vf for vf, held in typed.items()
                           if held == vgpu_type})


def _cut_to_capacity(host_mappings: Mappings, gpu_of: Mapping[str, str],
                     capacities: Capacities,
                     occupied: Callable[[str], Collection[str]]
                     ) -> Mappings:
    """Each type's VFs of these GPUs (VF -> its GPU) cut down to the
    type's capacity there (vfs_to_publish, occupied(type) kept); other
    devices stay."""
    limited: Mappings = {}
    for vgpu_type, devices in host_mappings.items():
        kept = [device for device in devices if device not in gpu_of]
        by_gpu: Dict[str, List[str]] = {}
        for device in devices:
            if device in gpu_of:
                by_gpu.setdefault(gpu_of[device], []).append(device)
        for gpu, vfs in sorted(by_gpu.items()):
            kept += vfs_to_publish(vfs, capacities.get((gpu, vgpu_type)),
                                   occupied(vgpu_type))
        limited[vgpu_type] = sorted(kept)
    return limited


def per_gpu(host_mappings: Mappings,
            gpus: Iterable[HostGpu]) -> Dict[str, Dict[str, int]]:
    """type -> {SR-IOV GPU: how many vGPUs of it Nova will offer there}
    (the VFs given), for the status: on mdev GPUs and on the
    vendor-specific VFIO driver alike, whose VFs the charm counts out
    too."""
    gpu_of = {vf: gpu.address for gpu in gpus if gpu.sriov
              for vf in gpu.virtual_functions}
    counts: Dict[str, Dict[str, int]] = {}
    for vgpu_type, devices in host_mappings.items():
        for device in devices:
            if device in gpu_of:
                per_type = counts.setdefault(vgpu_type, {})
                gpu = gpu_of[device]
                per_type[gpu] = per_type.get(gpu, 0) + 1
    return counts


def occupants(existing: Iterable[Tuple[str, str, str]],
              guest_uuids: Iterable[str],
              recorded: Mapping[str, Tuple[str, str]]) -> Dict[str, str]:
    """Device -> the type of the vGPU it hosts now, or will again for a
    guest.

    existing: (uuid, parent, type) of every mdev there is now, used by a
    guest or not (it holds a share of its GPU either way). recorded:
    where the charm last saw each mdev (uuid -> (parent, type)); a
    guest's vGPU that is gone (a reboot) goes back there, so that VF
    stays too.
    """
    found = {parent: vgpu_type for _, parent, vgpu_type in existing}
    now = {uuid for uuid, _, _ in existing}
    for uuid in guest_uuids:
        if uuid not in now and uuid in recorded:
            parent, vgpu_type = recorded[uuid]
            found.setdefault(parent, vgpu_type)
    return found


def share_mig_gpus(host_mappings: Mappings, gpus: Iterable[HostGpu],
                   capacities: Capacities, occupied: Mapping[str, str],
                   mig_gpus: Collection[str]) -> Mappings:
    """The host's mappings with the VFs of each GPU in MIG mode shared
    out among the MIG-backed types mapped to it, none given twice.

    Every VF of such a GPU lists every MIG-backed type, and offers one
    while a GPU instance of its profile is free: so a type gets its own
    VFs, as many as it has instances (its capacity), and Nova counts one
    vGPU per instance. A VF hosting a vGPU stays with that vGPU's type
    and is given no other; free VFs go out lowest address first, types
    in numeric order, so the choice is the same at every hook. Where a
    type's instances are not known it gets no VF beside other types
    (Nova refuses a device under two types). A GPU with one type mapped
    is left to limit_to_capacity.
    """
    return _share_out(host_mappings, {
        gpu.address: set(gpu.virtual_functions) for gpu in gpus
        if gpu.address in mig_gpus and not gpu.vendor_vfio},
        capacities, occupied, fewest_types=2)


def share_mig_vfio_gpus(host_mappings: Mappings, gpus: Iterable[HostGpu],
                        capacities: Capacities, typed: Mapping[str, str],
                        mig_gpus: Collection[str]) -> Mappings:
    """The host's mappings with the VFs of each GPU in MIG mode on
    NVIDIA's vendor-specific VFIO driver given out among the MIG-backed
    types mapped to it, as share_mig_gpus does, one type alone too.

    There a VF takes a MIG-backed type only while a GPU instance of its
    profile is free, and holds one once typed (typed: VF -> its type),
    so a VF given beyond the instances could never be typed and Nova
    would offer a vGPU that no guest can get. Where a type's instances
    are not known it keeps only its typed VFs. Other GPUs keep the VFs
    the operator named.
    """
    return _share_out(host_mappings, {
        gpu.address: set(gpu.virtual_functions) for gpu in gpus
        if gpu.address in mig_gpus and gpu.vendor_vfio},
        capacities, typed, fewest_types=1)


def _share_out(host_mappings: Mappings, vfs_of: Mapping[str, Set[str]],
               capacities: Capacities, occupied: Mapping[str, str],
               fewest_types: int) -> Mappings:
    """Each of these GPUs' VFs (GPU -> its VFs) to one MIG-backed type
    mapped to it, as many as the type's instances, where it has at least
    `fewest_types` types: VFs occupied by a type first, then free ones
    lowest address first, types in numeric order."""
    shared: Mappings = {vgpu_type: list(devices)
                        for vgpu_type, devices in host_mappings.items()}
    for gpu, vfs in sorted(vfs_of.items()):
        types = sorted((vgpu_type for vgpu_type, devices
                        in host_mappings.items() if vfs & set(devices)),
                       key=type_order)
        if len(types) < fewest_types:
            continue
        given = set(vf for vf in vfs if vf in occupied)
        for vgpu_type in types:
            listed = sorted(vfs & set(host_mappings[vgpu_type]))
            mine = [vf for vf in listed if occupied.get(vf) == vgpu_type]
            free = [vf for vf in listed if vf not in given]
            wanted = capacities.get((gpu, vgpu_type)) or 0
            chosen = free[:max(0, wanted - len(mine))]
            given.update(chosen)
            shared[vgpu_type] = sorted(
                [device for device in host_mappings[vgpu_type]
                 if device not in vfs] + mine + chosen)
    return shared


def summary(counts: Dict[str, Dict[str, int]]) -> List[str]:
    """Status phrases: 'nvidia-557: 24 vGPUs per GPU on 2 GPUs'."""
    phrases = []
    for vgpu_type, by_gpu in counts.items():
        values = sorted(set(by_gpu.values()))
        if len(by_gpu) == 1:
            phrases.append('{}: {} on 1 GPU'.format(
                vgpu_type, _vgpus(values[0])))
        elif len(values) == 1:
            phrases.append('{}: {} per GPU on {} GPUs'.format(
                vgpu_type, _vgpus(values[0]), len(by_gpu)))
        else:
            phrases.append('{}: {} vGPUs on {} GPUs'.format(
                vgpu_type, '+'.join(str(by_gpu[gpu])
                                    for gpu in sorted(by_gpu)), len(by_gpu)))
    return phrases


def _vgpus(count: int) -> str:
    return '{} vGPU{}'.format(count, '' if count == 1 else 's')
