"""Running guests first: the service operations that stop the vGPU
Manager (pause, restart-services, a series upgrade's prepare) break the
vGPU of every running guest, so each is refused, or held, while running
guests use vGPUs here.

An action is refused (force=true overrides). A prepare stops nothing
they use and names them; it completes (the vGPU Manager stops, as
charms.openstack's prepare would have stopped it) at the first hook
after none runs here any more.
"""
import os
from typing import Callable, Dict

import charmhelpers.contrib.openstack.utils as os_utils
import charmhelpers.core.hookenv as hookenv
import charms.reactive as reactive

from nvidia_vgpu import state
from nvidia_vgpu.apply import context as hook_context
from nvidia_vgpu.driver import series_upgrade
from nvidia_vgpu.nova import guest_safety, plan as nova_plan

UPGRADING = 'charm.series-upgrading'


class Guests:
    """The guard in front of everything that stops the vGPU Manager."""

    def __init__(self, context: hook_context.HookContext) -> None:
        self.context = context

    def refuse_under_running_guests(self, action: str) -> None:
        """Raise (the action fails) if stopping (or replacing) the vGPU
        Manager would break running guests' vGPUs, unless force=true."""
        problem = guest_safety.refusal(action, [
            (v.device, v.guests) for v in self.context.plan.running])
        if problem and not hookenv.action_get('force'):
            raise RuntimeError(problem)

    def series_upgrade_check(self) -> Dict[str, str]:
        """Before a series upgrade's prepare, while nova-compute still
        runs and Nova can move guests: the running guests that would hold
        it, and the shut-off ones that stay. Reads only."""
        running = guest_safety.guest_names(self.context.plan.running)
        stopped = sorted(set(guest_safety.guest_names(
            nova_plan.vgpus_in_use(self.context.host))) - set(running))
        ready, message = series_upgrade.check_message(running, stopped)
        return {'ready': 'true' if ready else 'false',
                'running-guests': ' '.join(running),
                'shut-off-guests': ' '.join(stopped),
                'message': message}

    def hold_series_upgrade(self) -> bool:
        """pre-series-upgrade while running guests use vGPUs here: mark
        the unit upgrading, so nothing restarts it, stop nothing they use,
        name them. False (nothing done) where none does."""
        running = self.context.plan.running
        if not series_upgrade.holds_for_guests(running):
            return False
        to = series_upgrade.target(os.environ)
        reactive.set_flag(UPGRADING)
        os_utils.set_unit_upgrading()
        state.set_series_upgrade_held(True, to)
        self.context.unit_changed()
        hookenv.log(series_upgrade.held_message(
            guest_safety.guest_names(running), to), level=hookenv.WARNING)
        return True

    def finish_held_series_upgrade(self, pause: Callable[[], None]) -> None:
        """A prepare that waited for guests pauses the unit (pause), as
        charms.openstack's prepare does, at the first hook after no
        running guest uses a vGPU here: do-release-upgrade then finds the
        vGPU Manager stopped, and the completion resumes it."""
        if (self.context.unit.series_upgrade_held is None or
                self.context.plan.running):
            return
        state.set_series_upgrade_held(False)
        self.context.unit_changed()
        reactive.set_flag('charm.paused')
        pause()
        hookenv.log('Series upgrade prepare completed: no running guest '
                    'uses a vGPU here any more', level=hookenv.INFO)

    def complete_held_series_upgrade(self) -> bool:
        """post-series-upgrade after a prepare that stopped nothing: only
        its marks go. False where the prepare was charms.openstack's."""
        if self.context.unit.series_upgrade_held is None:
            return False
        state.set_series_upgrade_held(False)
        self.context.unit_changed()
        reactive.clear_flag(UPGRADING)
        os_utils.clear_unit_upgrading()
        return True
