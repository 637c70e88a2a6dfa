"""One hook's context: the facts it read and the plan decided from
them, kept together and cleared together.

Every collaborator of the charm reads the plan from here. One that
changes the host (VFs, MIG instances, VF types) calls host_changed(),
one that changes what the unit remembers calls unit_changed(): the next
look at the plan reads what changed again and decides again, so no
derived value goes stale.
"""
from typing import Any, Callable, Mapping, Optional

import charmhelpers.contrib.openstack.utils as os_utils
import charmhelpers.core.hookenv as hookenv

from nvidia_vgpu import model, state
from nvidia_vgpu.hook_plan import decide, facts as hook_facts, preview
from nvidia_vgpu.host import boot_records, dpkg, snapshot


def remembered_version(package: str) -> Optional[str]:
    """A package's installed version; dpkg is asked only when its
    database changed since it last answered (kept in unitdata)."""
    remembered = state.dpkg_versions()
    version, keep = dpkg.remembered_version(package, remembered)
    if keep != remembered:
        state.set_dpkg_versions(keep)
    return version


class HookContext:
    """The facts and the plan of the running hook (or action)."""

    def __init__(self, config: Mapping[str, Any],
                 read_relations: Callable[[], hook_facts.Relations],
                 update_status: bool = False,
                 installed_version: Callable[[str], Optional[str]]
                 = remembered_version,
                 nova_version: Optional[str] = None,
                 read_detail: Optional[Callable[
                     ['HookContext'], Optional[hook_facts.Detail]]] = None
                 ) -> None:
        self.config = config
        self._read_detail = read_detail
        self._read_relations = read_relations
        self._update_status = update_status
        self.installed_version = installed_version
        self._nova_version = nova_version
        self._host = None
        self._unit = None
        self._plan = None
        self._reading = None   # how much of the host to read, if not all
        self._detail = None    # services, boot units: read once asked
        self.detail_wanted = False   # monitoring or vgpu-health asked

    @property
    def unit(self) -> hook_facts.UnitState:
        """What the unit remembers, read once until it changes."""
        if self._unit is None:
            self._unit = read_unit_state()
        return self._unit

    @property
    def host(self) -> model.HostSnapshot:
        """The host as this hook found it (one lspci per hook)."""
        if self._host is None:
            needs = self._reading or decide.reading(self.config, self.unit)
            self._host = snapshot.read(
                self._nova_version, names=needs.names,
                installed=self.installed_version, mig=needs.mig)
            for ignored in self._host.ignored:
                hookenv.log('Ignored: ' + ignored, level=hookenv.WARNING)
        return self._host

    def facts(self) -> hook_facts.HookFacts:
        """The host and Juju as the hook finds them now."""
        return hook_facts.HookFacts(self.host, self._read_relations(),
                                    self._update_status, self.detail())

    def detail(self) -> Optional[hook_facts.Detail]:
        """The services and boot units, read once monitoring or the health
        action asks for them (want_detail; None until then), late in the
        hook: nothing the hook does after changes them."""
        if self._detail is None and self._read_detail is not None:
            self._detail = self._read_detail(self)
        return self._detail

    def want_detail(self) -> None:
        """Monitoring or the health action: read the detail, and decide
        again with it (once: the hooks' other work does not need it)."""
        if not self.detail_wanted:
            self.detail_wanted = True
            self._plan = None

    @property
    def plan(self) -> decide.HookPlan:
        """The hook's whole plan, from what it has read."""
        if self._plan is None:
            self._plan = decide.decide(self.facts(), self.config, self.unit)
        return self._plan

    def preview(self, values: Mapping[str, Any]) -> preview.Preview:
        """The plan with these option values instead (preview-config):
        the host read once, as far as either plan needs; nothing set, not
        even the unit's memory of dpkg's answers."""
        self.installed_version = dpkg.installed_version
        self._reading = preview.reading(self.config, values, self.unit)
        return preview.preview(self.facts(), self.config, values,
                               self.unit)

    def with_options(self, values: Mapping[str, Any]) -> None:
        """Decide from here on as if the options had these values (the
        unit is going: its layout is undone as an empty mig-layout
        would undo it). The host as read stays: what a hook reads does
        not depend on the values (a layout to undo is read as one to
        apply)."""
        self.config = dict(self.config, **values)
        self._plan = None

    def config_asks_mig(self) -> bool:
        """A layout to apply, or one applied before to undo."""
        return decide.mig_asked(self.config, self.unit)

    def host_changed(self) -> None:
        """The charm changed the host: read it again (lspci's answer
        aside: GPUs do not come or go during a hook) and decide again."""
        needs = decide.reading(self.config, self.unit)
        self._host = snapshot.read(
            self._nova_version, self.host.functions, needs.names,
            self.installed_version, needs.mig)
        self._plan = None

    def records_changed(self) -> None:
        """The charm rewrote its boot records: what the host says of them
        now; the plan stays (it was made before the write)."""
        self._host = snapshot.with_records(self.host)

    def unit_changed(self) -> None:
        """The unit's records changed: read them again, decide again."""
        self._unit = None
        self._plan = None


def read_unit_state() -> hook_facts.UnitState:
    """What the unit remembers, from unitdata and the boot records."""
    return hook_facts.UnitState(
        installed=state.installed_software(),
        software_problem=state.software_problem(),
        waiting_software=state.waiting_software(),
        published_mappings=state.published_mappings(),
        published_classes=state.published_classes(),
        series_upgrade_held=state.series_upgrade_held(),
        mig_record=boot_records.recorded_mig(),
        paused=os_utils.is_unit_paused_set())
