"""Where a GPU host's vGPUs do not reach Nova although nothing is refused:
the host gives Nova no vGPU at all (no entry of vgpu-device-mappings
names its GPUs: a selector of another board, addresses of another
host), or gives a mapped type none (a MIG-backed type whose GPU has no
instance of its size).

The first leaves GPUs idle that the cloud paid for: the unit blocks
naming the GPUs and the fix, and the NRPE capacity check and the COS
alert warn with the same words. The second is in the ready status and
warns the same way. A selector that matches no GPU here is no gap where
another entry does: one application's mappings serve hosts of several
boards.
"""
from typing import List, Optional

from nvidia_vgpu import model

# GPUs named in the message before "and N more".
NAMED_GPUS = 3


def type_without_vgpus(vgpu_type: str, profile: str, gpu: str) -> str:
    """Why a mapped MIG-backed type gets no VF on a GPU."""
    return '{} gets no vGPU on {}: it has no {} GPU instance ' \
        '(mig-layout)'.format(vgpu_type, gpu, profile)


def nothing_offered(snapshot: model.HostSnapshot,
                    plan: model.NovaPlan) -> Optional[str]:
    """Why this GPU host gives Nova no vGPU although the driver runs and
    the options are accepted; None where it gives some, or cannot yet
    (SR-IOV GPUs whose VFs are not there: their own status says so)."""
    mappings = plan.host_mappings
    if not snapshot.functions or snapshot.driver is None or \
            plan.waiting or mappings is None or any(mappings.values()):
        return None
    reasons = ['no GPU here matches ' + ', '.join(plan.unmatched)] \
        if plan.unmatched else []
    if plan.absent:
        reasons.append('not on this host: ' + ', '.join(plan.absent))
    reasons += [type_without_vgpus(*gap) for gap in plan.without_instances]
    gpus = ['{} (10de:{}, {})'.format(gpu.address, gpu.device_id, gpu.model)
            for gpu in snapshot.functions]
    if len(gpus) > NAMED_GPUS:
        gpus = gpus[:NAMED_GPUS] + ['{} more'.format(
            len(gpus) - NAMED_GPUS)]
    fix = ('give mig-layout GPU instances of the mapped types\' size, or '
           'map the types its instances give' if plan.without_instances
           and not (plan.unmatched or plan.absent) else 'map them in '
           'vgpu-device-mappings')
    return ('This GPU host gives Nova no vGPU: {}. Its GPUs: {}; {} '
            '(list-vgpu-types shows the types each offers)'.format(
                '; '.join(reasons) or 'vgpu-device-mappings names no type '
                'for them', ', '.join(gpus), fix))


def gaps(snapshot: model.HostSnapshot, plan: model.NovaPlan) -> List[str]:
    """What monitoring warns of: the host giving Nova nothing, else each
    mapped type that gets no vGPU on a GPU here."""
    nothing = nothing_offered(snapshot, plan)
    if nothing:
        return [nothing]
    return [type_without_vgpus(*gap) for gap in plan.without_instances]
