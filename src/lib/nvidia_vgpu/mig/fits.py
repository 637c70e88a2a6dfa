"""Where a MIG-backed type's vGPUs go on a GPU in MIG mode, and how many
the GPU holds: one home for the rule that the plan (what Nova gets) and
list-vgpu-types (what the operator reads) both follow.

The driver's word comes first: on the vendor-specific VFIO driver
`nvidia-smi vgpu -s -v` names the GPU instance profile by its id on the
board and says how many vGPUs share one instance (Blackwell's
time-sliced-on-MIG types: DC-1-3Q, eight to a 1g.24gb+gfx, a size its
name does not give). Only where the driver does not say is the profile
read from the type's name (H100XM-1-10C: 1g.10gb), one vGPU each.
"""
from typing import Optional

from nvidia_vgpu import model, names


def gi_profile(gpu: model.MigGpu, fit: Optional[model.GiFit],
               driver_name: Optional[str]) -> Optional[str]:
    """The GPU instance profile the type takes on this GPU: the one
    nvidia-smi names by its id (fit), else the one its name gives; None
    for a time-sliced type."""
    if fit is not None:
        found = gpu.profile_named(fit.profile_id)
        if found:
            return found
    return names.gi_profile_of(driver_name) if driver_name else None


def capacity(gpu: model.MigGpu, fit: Optional[model.GiFit],
             driver_name: Optional[str]) -> Optional[int]:
    """How many vGPUs of the type the GPU's instances hold now: its
    instances of the type's profile, times the vGPUs one instance holds
    (fit: as the driver says; 1 where it does not); None for a
    time-sliced type."""
    profile = gi_profile(gpu, fit, driver_name)
    if profile is None:
        return None
    return gpu.instances_of(profile) * (fit.per_gi if fit else 1)
