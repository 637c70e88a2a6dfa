"""nova-vgpu: nova-compute, the principal, takes this host's vGPU
configuration from here (`subordinate_configuration`, `services`).

Only what changed is set, so an unchanged hook restarts nothing; a
change that waits for guests, or VFs not back after a boot, publishes
nothing (the plan's `publish`).
"""
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

import charmhelpers.core.hookenv as hookenv
import charms.reactive as reactive

from nvidia_vgpu import state
from nvidia_vgpu.hook_plan import decide
from nvidia_vgpu.host.hostfs import parse_json

CONNECTED = 'nova-vgpu.connected'


def endpoint() -> Optional[Any]:
    """The endpoint while nova-compute is related, else None."""
    if not reactive.is_flag_set(CONNECTED):
        return None
    return reactive.endpoint_from_flag(CONNECTED)


def published() -> Optional[Tuple[Mapping[str, Any], ...]]:
    """What this unit has set on each nova-vgpu relation, decoded; None
    while nova-compute is not related. An action sees the flag but no
    endpoint (the reactive bus does not run there): nothing to compare,
    so nothing is said to be missing."""
    if not reactive.is_flag_set(CONNECTED):
        return None
    related = reactive.endpoint_from_flag(CONNECTED)
    if related is None:
        return ()
    return tuple(_decoded(relation.to_publish_raw)
                 for relation in related.relations)


def _decoded(raw: Mapping[str, str]) -> Dict[str, Any]:
    """The settings as set: canonical JSON, read back (what cannot be
    read stays as text, which no setting equals)."""
    found = {}
    for key, text in raw.items():
        try:
            found[key] = parse_json(text)
        except (TypeError, ValueError):
            found[key] = text
    return found


class NovaVgpu:
    """Hands nova-compute the plan's settings. plan: the hook's plan now;
    published: told once what Nova was given is remembered (the unit's
    records changed)."""

    def __init__(self, plan: Callable[[], decide.HookPlan],
                 published: Callable[[], None]) -> None:
        self._plan = plan
        self._published = published

    def publish(self) -> None:
        """Set what changed, and remember what Nova was given (what a
        GPU whose change waits for guests keeps)."""
        related = endpoint()
        plan = self._plan()
        if related is None or not plan.publish:
            return
        nova = plan.nova
        state.set_class_refusal(nova.class_refusal)
        if related.publish(plan.settings):
            hookenv.log('nova-vgpu settings changed: {}'.format(
                sorted(plan.settings)), level=hookenv.INFO)
        if nova.host_mappings is not None:
            state.record_published(nova.host_mappings, nova.classes)
        self._published()
