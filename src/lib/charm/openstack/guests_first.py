"""charms.openstack's service operations, with running guests first.

pause, restart-services and a series upgrade's prepare stop the NVIDIA
vGPU Manager, which breaks the vGPU of every running guest. This class
puts its guard in front of each: an action is refused while running
guests use vGPUs here (force=true overrides), and a prepare stops
nothing they use, says which guests to stop or move, and completes (the
vGPU Manager stops, as charms.openstack's prepare would have stopped it)
at the first hook after none runs here any more.

The concrete charm class gives `host`, the hook's snapshot of the host.
"""
import os
from typing import Optional, Tuple

import charmhelpers.contrib.openstack.utils as os_utils
import charmhelpers.core.hookenv as hookenv
import charms.reactive as reactive
import charms_openstack.charm

from nvidia_vgpu import model, state
from nvidia_vgpu.driver import series_upgrade
from nvidia_vgpu.nova import guest_safety, plan


class GuestsFirstCharm(charms_openstack.charm.OpenStackCharm):
    """The service operations of an OpenStackCharm, guarded for guests."""

    abstract_class = True
    host: model.HostSnapshot

    def refuse_under_running_guests(self, action: str) -> None:
        """Raise (the action fails) if stopping (or replacing) the vGPU
        Manager would break running guests' vGPUs, unless force=true."""
        problem = guest_safety.refusal(action, [
            (v.device, v.guests) for v in plan.vgpus_running(self.host)])
        if problem and not hookenv.action_get('force'):
            raise RuntimeError(problem)

    def pause(self) -> None:
        """Stop the vGPU Manager, unless that would break guests' vGPUs."""
        self.refuse_under_running_guests('pause')
        super().pause()

    def restart_services(self) -> None:
        """layer:openstack's restart-services stops and starts the vGPU
        Manager: the same guard as pause."""
        self.refuse_under_running_guests('restart-services')
        super().restart_services()

    def series_upgrade_prepare(self) -> None:
        """pre-series-upgrade: as charms.openstack (mark the unit
        upgrading, pause it), unless running guests use vGPUs here: then
        it is marked upgrading, so nothing restarts it, but nothing they
        use is stopped, and the status names them, to stop or move off."""
        in_use = plan.vgpus_running(self.host)
        if not series_upgrade.holds_for_guests(in_use):
            super().series_upgrade_prepare()
            return
        to = series_upgrade.target(os.environ)
        reactive.set_flag('charm.series-upgrading')
        os_utils.set_unit_upgrading()
        state.set_series_upgrade_held(True, to)
        hookenv.log(series_upgrade.held_message(
            guest_safety.guest_names(in_use), to), level=hookenv.WARNING)
        self.assess_status()

    def finish_held_series_upgrade(self) -> None:
        """A prepare that waited for guests pauses the unit, as
        charms.openstack's prepare does, at the first hook after no
        running guest uses a vGPU here: do-release-upgrade then finds
        the vGPU Manager stopped, and the completion resumes it."""
        if (state.series_upgrade_held() is None or
                plan.vgpus_running(self.host)):
            return
        state.set_series_upgrade_held(False)
        reactive.set_flag('charm.paused')
        self.run_pause_or_resume('pause')
        hookenv.log('Series upgrade prepare completed: no running guest '
                    'uses a vGPU here any more', level=hookenv.INFO)

    def series_upgrade_complete(self) -> None:
        """post-series-upgrade: resume as charms.openstack does; where
        the prepare stopped nothing, only its marks go."""
        if state.series_upgrade_held() is None:
            super().series_upgrade_complete()
            return
        state.set_series_upgrade_held(False)
        reactive.clear_flag('charm.series-upgrading')
        os_utils.clear_unit_upgrading()
        self.assess_status()

    def check_if_paused(self) -> Tuple[Optional[str], Optional[str]]:
        """While a series upgrade waits for guests, which to move."""
        held = state.series_upgrade_held()
        guests = guest_safety.guest_names(plan.vgpus_running(self.host))
        if held is not None and guests:
            return 'blocked', series_upgrade.held_message(
                guests, held['target'])
        return super().check_if_paused()
