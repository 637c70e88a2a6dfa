"""Several time-sliced sizes on one GPU, on the host: the GPU put in
NVIDIA's mixed-size mode, and a vGPU made at its placement on each VF
Nova is given, before Nova is told (nova/mixed_sizes.py says why and
what). The mode is runtime state: the restore unit sets it again at
every boot (driver/restore.py).
"""
from typing import Set

import charmhelpers.core.hookenv as hookenv

from nvidia_vgpu import model
from nvidia_vgpu.apply import context as hook_context
from nvidia_vgpu.host import mixed_size, sysfs


class MixedSizes:
    """Applies the plan's mixed-size work."""

    def __init__(self, context: hook_context.HookContext) -> None:
        self.context = context

    def ensure(self) -> None:
        """Remove what blocks the mode, set it, and make the vGPUs Nova
        will take, each at its placement; a failure is logged, and the
        plan read again gives Nova none of the GPU's sizes."""
        context = self.context
        if not context.host.functions:
            return
        work = context.plan.nova.mixed_work
        if not any(work):
            return
        for gone in work.remove:
            try:
                sysfs.remove_mdev(gone)
            except OSError as error:
                _warn('cannot remove vGPU {}: {}'.format(gone, error))
        unset = self._set_modes(work)
        for vf, vgpu_type, start in work.create:
            if vf not in unset:
                _make(vf, vgpu_type, start)
        for placed, start in work.place:
            try:
                sysfs.set_placement(placed, start)
            except OSError as error:
                _warn('cannot place vGPU {} at {}: {}'.format(
                    placed, start, error))
        context.host_changed()

    def _set_modes(self, work: model.MixedWork) -> Set[str]:
        """Each GPU into mixed-size mode or out of it; the VFs of those
        whose mode could not be set (no vGPU is made there)."""
        unset: Set[str] = set()
        for gpu, enabled in [(gpu, True) for gpu in work.set_mode] + [
                (gpu, False) for gpu in work.unset_mode]:
            failure = mixed_size.set_mode(gpu, enabled)
            if failure:
                _warn('mixed-size mode of {}: {}'.format(gpu, failure))
                if enabled:
                    unset.update(*(found.virtual_functions
                                   for found in self.context.host.gpus
                                   if found.address == gpu))
                continue
            hookenv.log('Put {} in {} mode'.format(
                gpu, 'NVIDIA\'s mixed-size' if enabled else 'equal-size'),
                level=hookenv.INFO)
        return unset


def _make(vf: str, vgpu_type: str, start: int) -> None:
    """A vGPU for Nova to take, at its placement."""
    try:
        made = mixed_size.make_placed(vf, vgpu_type, start)
    except OSError as error:
        _warn('cannot make a {} vGPU at placement {} on {}: {}'.format(
            vgpu_type, start, vf, error))
        return
    hookenv.log('Made vGPU {} ({} at placement {}) on {} for Nova to '
                'take'.format(made, vgpu_type, start, vf),
                level=hookenv.INFO)


def _warn(message: str) -> None:
    hookenv.log(message, level=hookenv.WARNING)
