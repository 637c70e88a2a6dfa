"""Running guests come first.

What counts depends on what the operation does to a vGPU:

- Stopping the NVIDIA vGPU Manager (pause, restart-services, a series
  upgrade's prepare) or replacing it (a new vGPU software revision)
  breaks the vGPU of every guest that RUNS: its QEMU process loses the
  device under it. A guest that is shut off runs no vGPU, and finds it
  again when it starts: Nova's power_on (_hard_reboot) puts the mdev
  UUIDs of the guest's definition back in the new domain, and the mdev
  is there again after the reboot a new driver needs, as after any
  reboot (Nova's persistent mdevs from 30.0.0 Dalmatian; before that
  _recreate_assigned_mediated_devices at nova-compute's start, and this
  charm's boot unit). So stopping a guest frees its vGPU for these.
- Retyping a GPU (vgpu-device-mappings giving a device in use another
  type, or taking it out; a vgpu-resource-class change) counts every
  guest DEFINED with one of its vGPUs, running or shut off: Nova keeps
  a stopped guest's mdev and its Placement allocation, and a GPU runs
  one type at a time, so once the GPU is retyped the guest's vGPU
  cannot be created there again (through 31.x, where Nova recreates
  guests' mdevs at its start, _recreate_assigned_mediated_devices even
  stops nova-compute with InvalidLibvirtMdevConfig). Only moving the
  guest off the GPU (live or cold migration, resize), shelve-offloading
  or deleting it frees its vGPU for a retype.

So each of these waits for the guests that count (or an explicit
force=true), and this module says which vGPUs are in use, what must
wait, and how to tell the operator.

Pure functions over what sysfs and libvirt's files say.
"""
from typing import (AbstractSet, Dict, Iterable, List, Mapping, Optional,
                    Sequence, Tuple)
from nvidia_vgpu import model
# The words shared with the rooms below nova (mig/, driver/).
from nvidia_vgpu.guest_words import RETYPE_FREES, STOP_FREES, named
from nvidia_vgpu.names import type_id

# One entry per vGPU in use: (the GPU or VF it lives on, its guests).
InUse = Sequence[Tuple[str, Sequence[str]]]
Mappings = Dict[str, List[str]]


# The actions that replace the vGPU Manager rather than stop it.
REPLACES = ('install-vgpu-software',)


def refusal(action: str, in_use: InUse) -> Optional[str]:
    """Why this action must not stop (or, installing, replace) the vGPU
    Manager now, or None; in_use: the vGPUs running guests use."""
    if not in_use:
        return None
    doing = 'replacing' if action in REPLACES else 'stopping'
    gpus = sorted({parent for parent, _ in in_use})
    guests = sorted({name for _, names in in_use for name in names})
    one = len(guests) == 1
    return (
        'Refusing to {action}: {count} vGPU{s} on {gpus} in use by '
        '{who} ({guests}); {doing} the vGPU Manager would break {it}. '
        '{frees} {those} first, or run {action} with force=true').format(
            action=action, count=len(in_use),
            s='' if len(in_use) == 1 else 's', gpus=', '.join(gpus),
            who='running guest' if one else '{} running guests'.format(
                len(guests)), guests=named(guests), doing=doing,
            it='it' if len(in_use) == 1 else 'them',
            frees=STOP_FREES[0].upper() + STOP_FREES[1:],
            those='the guest' if one else 'those guests')


def vgpus_in_use(mdevs: Iterable[Tuple[str, str, str]],
                 mdev_users: Mapping[str, Sequence[str]],
                 vf_types: Mapping[str, int],
                 pci_users: Mapping[str, Sequence[str]]
                 ) -> List[model.VgpuInUse]:
    """Every vGPU a guest uses now, on either driver model.

    mdevs: (uuid, parent, type) of each mediated device; mdev_users:
    uuid -> guests whose definition has it. On NVIDIA's vendor-specific
    VFIO driver a vGPU is a VF with a non-zero current_vgpu_type
    (vf_types: VF -> that number) that a guest has as a PCI hostdev
    (pci_users: address -> guests).
    """
    found = [model.VgpuInUse(parent, vgpu_type, sorted(mdev_users[uuid]))
             for uuid, parent, vgpu_type in mdevs if uuid in mdev_users]
    found += [model.VgpuInUse(vf, type_id(number),
                              sorted(pci_users[vf]))
              for vf, number in sorted(vf_types.items())
              if number and vf in pci_users]
    return sorted(found)


def running(vgpus: Iterable[model.VgpuInUse],
            running_guests: Optional[AbstractSet[str]]
            ) -> List[model.VgpuInUse]:
    """The vGPUs a running guest uses, each with only its running guests:
    what stopping or replacing the vGPU Manager breaks. running_guests:
    the guests libvirt runs (None: not known, every guest counts)."""
    if running_guests is None:
        return list(vgpus)
    kept = []
    for vgpu in vgpus:
        guests = [name for name in vgpu.guests if name in running_guests]
        if guests:
            kept.append(vgpu._replace(guests=guests))
    return kept


def guest_names(vgpus: Iterable[model.VgpuInUse]) -> List[str]:
    """The guests using any of these vGPUs, each once, sorted."""
    return sorted({name for vgpu in vgpus for name in vgpu.guests})


def hold_for_guests(wanted: Mappings, published: Optional[Mappings],
                    vgpus: Iterable[model.VgpuInUse],
                    gpu_of: Mapping[str, str]
                    ) -> Tuple[Mappings, List[model.HeldGpu]]:
    """The mappings to publish now, and the GPUs whose change waits.

    A GPU hosting vGPUs that guests use keeps, in what Nova is given,
    exactly what it was last given (published) when the wanted mappings
    would give one of those vGPUs' devices another type or none; its
    other devices go with it, as a GPU runs one type at a time. Every
    other GPU gets the change. With no record of what was published (the
    charm is new on a host with guests), the in-use devices keep their
    vGPUs' types and the GPU's other devices are left out meanwhile.

    gpu_of: device (GPU or VF) -> its physical GPU.
    """
    def on(mappings: Mappings, gpu: str) -> Mappings:
        return _on_gpu(mappings, gpu, gpu_of)

    types_wanted = _types_of(wanted)
    by_gpu: Dict[str, List[model.VgpuInUse]] = {}
    for vgpu in vgpus:
        by_gpu.setdefault(gpu_of.get(vgpu.device, vgpu.device),
                          []).append(vgpu)
    effective = {vgpu_type: list(devices)
                 for vgpu_type, devices in wanted.items()}
    held: List[model.HeldGpu] = []
    for gpu, on_gpu in sorted(by_gpu.items()):
        if all(vgpu.vgpu_type in types_wanted.get(vgpu.device, ())
               for vgpu in on_gpu):
            continue
        if published is not None:
            keep = on(published, gpu)
        else:
            keep = {}
            for vgpu in on_gpu:
                keep.setdefault(vgpu.vgpu_type, []).append(vgpu.device)
        for vgpu_type, devices in on(wanted, gpu).items():
            effective[vgpu_type] = [d for d in effective[vgpu_type]
                                    if d not in devices]
        for vgpu_type, devices in keep.items():
            effective.setdefault(vgpu_type, []).extend(devices)
        held.append(model.HeldGpu(
            gpu, tuple(sorted(t for t, d in keep.items() if d)),
            tuple(sorted(t for t, d in on(wanted, gpu).items() if d)),
            guest_names(on_gpu)))
    return ({vgpu_type: sorted(set(devices))
             for vgpu_type, devices in sorted(effective.items())
             if devices}, held)


def _types_of(mappings: Mappings) -> Dict[str, List[str]]:
    """Device -> its type; before a GPU in MIG mode's VFs are shared out
    among its types (capacity.share_mig_gpus), its types."""
    types: Dict[str, List[str]] = {}
    for vgpu_type, devices in mappings.items():
        for device in devices:
            types.setdefault(device, []).append(vgpu_type)
    return types


def _on_gpu(mappings: Mappings, gpu: str,
            gpu_of: Mapping[str, str]) -> Mappings:
    """The part of the mappings on one physical GPU."""
    return {vgpu_type: [d for d in devices if gpu_of.get(d, d) == gpu]
            for vgpu_type, devices in mappings.items()}


def held_message(held: Sequence[model.HeldGpu],
                 whole_host: bool = False) -> str:
    """The status line for mapping changes that wait for guests;
    whole_host: the release takes one type per host, so every GPU waits
    with the held ones."""
    parts = []
    for gpu in held:
        parts.append('{} keeps {} for {} (wanted: {})'.format(
            gpu.gpu, ', '.join(gpu.keeps) or 'its vGPUs',
            named(gpu.guests), ', '.join(gpu.wants) or 'out of the mapping'))
    return ('Change of vgpu-device-mappings waits for guests using vGPUs: {}; '
            '{}it applies once they are gone ({})'.format(
                '; '.join(parts), 'with one vGPU type per host on this '
                'release the whole host waits; ' if whole_host else '',
                RETYPE_FREES))


def software_waits_message(package: str, version: str,
                           guests: Sequence[str]) -> str:
    """The status line for a vGPU software revision held back; guests:
    the running guests using vGPUs here."""
    one = len(guests) == 1
    return ('Attached vGPU software {} {} waits for {} guest{} using vGPUs '
            '({}): it installs once {} here ({} {}), or run '
            'install-vgpu-software with force=true'.format(
                package, version, len(guests), '' if one else 's',
                named(guests), 'it no longer runs' if one else
                'they no longer run', STOP_FREES, 'it' if one else 'them'))
