"""What mig-layout asks of this host: which GPUs to put in MIG mode and
which GPU instances (GIs) to make or remove on each, now or once their
guests are gone.

Guests come first. Changing a GPU's mode, or removing a GI, takes the
vGPUs on it from the guests defined there (a stopped guest could not
start again: its vGPU lived on that GI), so such a change waits until no
guest's definition uses a vGPU of that GPU. Adding the GIs a layout asks
for beside those that exist disturbs nobody and happens at once.

Each GI is made at a start computed from the placements the GPU lists
(mig/instances.py), those that exist staying where they are, so a layout
the GPU can hold comes up whole whatever its driver would choose; one it
cannot hold is refused before anything is destroyed (layout.fit).

On NVIDIA's vendor-specific VFIO driver a vGPU is a VF given a type,
and a VF given a MIG-backed type holds a GI of its profile: a VF typed
for no guest is cleared first where its GPU's mode or GIs change (the
driver refuses to change what a vGPU holds), and the hook types VFs
again from the new GIs (the Nova plan gives each type one VF per GI).

Pure: the parsed layout, the host's GPUs and MIG state, and the guests
per GPU in; a MigPlan out.
"""
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from nvidia_vgpu import guest_words, model
from nvidia_vgpu.mig import instances as gpu_instances, layout as mig_layout


def for_host(layout: mig_layout.Layout,
             gpus: Sequence[model.HostGpu]) -> Dict[str, Dict[str, int]]:
    """Each GPU of this host the layout names, with its GIs: an address
    names that GPU, a selector every GPU of that model; an address wins
    over a selector for its GPU."""
    found: Dict[str, Dict[str, int]] = {}
    for gpu in gpus:
        if gpu.address in layout:
            found[gpu.address] = dict(layout[gpu.address])
            continue
        for key, instances in sorted(layout.items()):
            if gpu.matches(key):
                found[gpu.address] = dict(instances)
                break
    return found


def ordered(instances: Mapping[str, int]) -> Tuple[str, ...]:
    """Each GI a layout asks for, largest first."""
    by_size = sorted(instances.items(), key=lambda item: (
        -mig_layout.slices(item[0]), item[0]))
    return tuple(profile for profile, count in by_size
                 for _ in range(count))


def plan(layout: mig_layout.Layout, gpus: Sequence[model.HostGpu],
         mig: Optional[Mapping[str, model.MigGpu]],
         users: Mapping[str, Sequence[str]],
         applied: Sequence[str] = (),
         idle_typed: Mapping[str, Sequence[str]] = {}) -> model.MigPlan:
    """The MIG work for this host.

    mig: the MIG-capable GPUs as the driver reports them (None: the
    driver does not run yet, nothing can be read or done); users: GPU ->
    guests whose definitions use a vGPU on it; applied: the GPUs the
    charm put in MIG mode before (one left out of the layout goes back);
    idle_typed: GPU -> its VFs given a vGPU type that no guest uses
    (vendor-specific VFIO).
    """
    wanted = for_host(layout, gpus)
    if mig is None:
        return model.MigPlan(wanted={gpu: ordered(instances)
                                     for gpu, instances in wanted.items()})
    work = _Work()
    for address, instances in sorted(wanted.items()):
        if address not in mig:
            work.refused[address] = (
                'GPU {} is not MIG-capable; mig-layout leaves it as it '
                'is'.format(address))
        else:
            work.gpu(mig[address], instances, list(users.get(address, ())))
    for address in sorted(set(applied) - set(wanted)):
        if address in mig and mig[address].enabled:
            work.leave(mig[address], list(users.get(address, ())))
    return work.result(idle_typed)


class _Work:
    """The plan as it is made, GPU by GPU."""

    def __init__(self) -> None:
        self.wanted: Dict[str, Tuple[str, ...]] = {}
        self.enable: List[str] = []
        self.disable: List[str] = []
        self.destroy: Dict[str, Tuple[int, ...]] = {}
        self.create: Dict[str, Tuple[str, ...]] = {}
        self.reset_pending: List[str] = []
        self.held: Dict[str, Tuple[str, ...]] = {}
        self.refused: Dict[str, str] = {}

    def gpu(self, gpu: model.MigGpu, instances: Mapping[str, int],
            guests: List[str]) -> None:
        problem = (mig_layout.fit(gpu.address, instances, gpu.profiles)
                   if gpu.profiles else None)
        if problem:
            self.refused[gpu.address] = problem
            return
        self.wanted[gpu.address] = ordered(instances)
        if not gpu.enabled:
            if gpu.pending.lower() == 'enabled':
                self.reset_pending.append(gpu.address)
            elif guests:
                self.held[gpu.address] = tuple(sorted(guests))
            else:
                self.enable.append(gpu.address)
            return
        wanted = self.wanted[gpu.address]
        beside = gpu_instances.to_make(wanted, gpu)
        if beside is None and guests:
            self.held[gpu.address] = tuple(sorted(guests))
            return
        if beside is None:
            # Instances the layout does not have, or the missing ones do
            # not fit beside those there: remake them all, each at its
            # own start (fit() found them room on the GPU emptied).
            beside = gpu_instances.to_make(wanted, gpu, keep=False) or ()
            self.destroy[gpu.address] = tuple(sorted(
                instance.id for instance in gpu.instances))
        if beside:
            self.create[gpu.address] = beside

    def leave(self, gpu: model.MigGpu, guests: List[str]) -> None:
        """A GPU the charm put in MIG mode, no longer in the layout."""
        if guests:
            self.held[gpu.address] = tuple(sorted(guests))
            return
        if gpu.instances:
            self.destroy[gpu.address] = tuple(sorted(
                instance.id for instance in gpu.instances))
        self.disable.append(gpu.address)

    def result(self, idle_typed: Mapping[str, Sequence[str]]
               ) -> model.MigPlan:
        """The plan, with the idle typed VFs of each GPU whose mode or
        GPU instances change, to clear first."""
        changing = set(self.enable) | set(self.disable) | set(self.destroy)
        return model.MigPlan(
            self.wanted, tuple(self.enable), tuple(self.disable),
            self.destroy, self.create, tuple(self.reset_pending),
            self.held, self.refused, untype={
                gpu: tuple(sorted(vfs))
                for gpu, vfs in sorted(idle_typed.items())
                if gpu in changing and vfs})


def users_by_gpu(host: model.HostSnapshot) -> Dict[str, List[str]]:
    """GPU -> the guests whose definitions use a vGPU on it (on one of
    its VFs): running or not, every one loses it when the GPU's mode or
    instances change."""
    gpu_of = {vf: gpu.address for gpu in host.gpus
              for vf in gpu.virtual_functions}
    gpu_of.update((gpu.address, gpu.address) for gpu in host.gpus)
    parents = {uuid: parent for uuid, (parent, _) in
               host.recorded_mdevs.items()}
    parents.update((mdev.uuid, mdev.parent) for mdev in host.mdevs)
    users: Dict[str, List[str]] = {}
    for uuid, guests in host.mdev_users.items():
        gpu = gpu_of.get(parents.get(uuid, ''))
        if gpu:
            users.setdefault(gpu, []).extend(guests)
    for address, guests in host.pci_users.items():
        if address in gpu_of:
            users.setdefault(gpu_of[address], []).extend(guests)
    return {gpu: sorted(set(guests)) for gpu, guests in users.items()}


def idle_typed_vfs(host: model.HostSnapshot) -> Dict[str, List[str]]:
    """GPU -> its VFs on the vendor-specific VFIO driver that have a
    vGPU type no guest's definition uses."""
    idle: Dict[str, List[str]] = {}
    for gpu in host.gpus:
        vfs = [vf for vf in gpu.virtual_functions
               if host.vf_current_types.get(vf) and vf not in host.pci_users]
        if vfs:
            idle[gpu.address] = vfs
    return idle


def boot_record(work: model.MigPlan,
                previous: Mapping[str, Sequence[str]]) -> Dict[str, List[str]]:
    """What the boot units make at the next boot: the layout where it
    applies; where a change waits for guests or a GPU's layout is refused,
    what was made before (the guests' vGPUs live on those instances)."""
    record = {gpu: list(instances) for gpu, instances in work.wanted.items()
              if gpu not in work.held}
    for gpu, instances in previous.items():
        if gpu in work.held or gpu in work.refused:
            record[gpu] = list(instances)
    return dict(sorted(record.items()))


def held_message(held: Mapping[str, Sequence[str]]) -> Optional[str]:
    """The status line while MIG changes wait for guests; None if none."""
    if not held:
        return None
    return ('Change of mig-layout waits for guests using vGPUs: {}; it '
            'applies once they are gone ({})'.format('; '.join(
                '{} for {}'.format(gpu, guest_words.named(list(guests)))
                for gpu, guests in sorted(held.items())),
                guest_words.RETYPE_FREES))


def blocked_message(work: model.MigPlan) -> Optional[str]:
    """The blocked status for what mig-layout cannot do here: a GPU's
    layout that cannot apply (the first, and how many more), else a
    mode that waits for a reboot; None if neither."""
    if work.refused:
        more = len(work.refused) - 1
        return 'Invalid mig-layout: {}{}'.format(
            sorted(work.refused.items())[0][1],
            ' (and {} more GPUs)'.format(more) if more else '')
    if work.reset_pending:
        return ('Reboot required: MIG mode of {} applies at the next boot '
                '(A100 and A30 switch only at a GPU reset or '
                'reboot)'.format(', '.join(work.reset_pending)))
    return None


def instances_missing(record: Mapping[str, Sequence[str]],
                      mig: Optional[Mapping[str, model.MigGpu]]
                      ) -> Dict[str, List[str]]:
    """GPU in MIG mode -> the GPU instances the boot record says it has
    and the driver does not list (host drift after a boot)."""
    missing = {}
    for address, wanted in sorted(record.items()):
        gpu = (mig or {}).get(address)
        if gpu is None or not gpu.enabled:
            continue
        left, _ = gpu_instances.compare(
            wanted, [instance.profile for instance in gpu.instances])
        if left:
            missing[address] = left
    return missing
