"""What mig-layout asks of this host: which GPUs to put in MIG mode and
which GPU instances (GIs) to make or remove on each, now or once their
guests are gone.

Guests come first. Changing a GPU's mode, or removing a GI, takes the
vGPUs on it from the guests defined there (a stopped guest could not
start again: its vGPU lived on that GI), so such a change waits until no
guest's definition uses a vGPU of that GPU. Adding the GIs a layout asks
for beside those that exist disturbs nobody and happens at once.

Pure: the parsed layout, the host's GPUs and MIG state, and the guests
per GPU in; a MigPlan out.
"""
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from nvidia_vgpu import model
from nvidia_vgpu.mig import layout as mig_layout

ENABLED = 'enabled'


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
         applied: Sequence[str] = ()) -> model.MigPlan:
    """The MIG work for this host.

    mig: the MIG-capable GPUs as the driver reports them (None: the
    driver does not run yet, nothing can be read or done); users: GPU ->
    guests whose definitions use a vGPU on it; applied: the GPUs the
    charm put in MIG mode before (one left out of the layout goes back).
    """
    wanted = for_host(layout, gpus)
    if mig is None:
        return model.MigPlan(wanted={gpu: ordered(instances)
                                     for gpu, instances in wanted.items()})
    by_address = {gpu.address: gpu for gpu in gpus}
    work = _Work()
    for address, instances in sorted(wanted.items()):
        gpu = by_address[address]
        if gpu.vendor_vfio:
            work.refused.append(
                'GPU {} runs NVIDIA\'s vendor-specific VFIO driver, whose '
                'MIG-backed vGPUs this charm does not set up; mig-layout '
                'leaves it as it is'.format(address))
        elif address not in mig:
            work.refused.append(
                'GPU {} is not MIG-capable; mig-layout leaves it as it '
                'is'.format(address))
        else:
            work.gpu(mig[address], instances, list(users.get(address, ())))
    for address in sorted(set(applied) - set(wanted)):
        if address in mig and mig[address].mode.lower() == ENABLED:
            work.leave(mig[address], list(users.get(address, ())))
    return work.result()


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
        self.refused: List[str] = []

    def gpu(self, gpu: model.MigGpu, instances: Mapping[str, int],
            guests: List[str]) -> None:
        problem = (mig_layout.fit(gpu.address, instances, gpu.profiles)
                   if gpu.profiles else None)
        if problem:
            self.refused.append(problem)
            return
        self.wanted[gpu.address] = ordered(instances)
        if gpu.mode.lower() != ENABLED:
            if gpu.pending.lower() == ENABLED:
                self.reset_pending.append(gpu.address)
            elif guests:
                self.held[gpu.address] = tuple(sorted(guests))
            else:
                self.enable.append(gpu.address)
            return
        have = sorted(instance.profile for instance in gpu.instances)
        extra = list(have)
        for profile in self.wanted[gpu.address]:
            if profile in extra:
                extra.remove(profile)
        if extra and guests:
            self.held[gpu.address] = tuple(sorted(guests))
            return
        missing = list(self.wanted[gpu.address])
        if extra:
            # Remake them all, largest first: the free slices then fit.
            self.destroy[gpu.address] = tuple(sorted(
                instance.id for instance in gpu.instances))
        else:
            for profile in have:
                missing.remove(profile)
        if missing:
            self.create[gpu.address] = tuple(missing)

    def leave(self, gpu: model.MigGpu, guests: List[str]) -> None:
        """A GPU the charm put in MIG mode, no longer in the layout."""
        if guests:
            self.held[gpu.address] = tuple(sorted(guests))
            return
        if gpu.instances:
            self.destroy[gpu.address] = tuple(sorted(
                instance.id for instance in gpu.instances))
        self.disable.append(gpu.address)

    def result(self) -> model.MigPlan:
        return model.MigPlan(
            self.wanted, tuple(self.enable), tuple(self.disable),
            self.destroy, self.create, tuple(self.reset_pending),
            self.held, tuple(self.refused))
