"""Provides side of the nova-vgpu relation (the vGPU subordinate)."""
import json
from typing import Any, Dict, Mapping

from charms.reactive import Endpoint, clear_flag, set_flag, when, when_not


def canonical_json(value: Any) -> str:
    """Serialise so that equal data always gives byte-identical text.

    Relation data is compared as strings by Juju and by nova-compute's
    restart logic; sorted keys and fixed separators make an unchanged
    setting an unchanged string.
    """
    return json.dumps(value, sort_keys=True, separators=(',', ':'))


class NovaVgpuProvides(Endpoint):
    """nova-compute's vGPU subordinate, seen from the subordinate."""

    @when('endpoint.{endpoint_name}.joined')
    def joined(self) -> None:
        set_flag(self.expand_name('{endpoint_name}.connected'))

    @when_not('endpoint.{endpoint_name}.joined')
    def departed(self) -> None:
        clear_flag(self.expand_name('{endpoint_name}.connected'))

    def publish(self, settings: Mapping[str, Any]) -> bool:
        """Publish each setting as canonical JSON where it differs.

        Returns whether anything changed, so callers can tell an operator
        that nova-compute will pick up new settings.
        """
        changed = False
        for relation in self.relations:
            for key, value in sorted(settings.items()):
                text = canonical_json(value)
                if relation.to_publish_raw.get(key) != text:
                    relation.to_publish_raw[key] = text
                    changed = True
        return changed

    def has_published(self, settings: Mapping[str, Any]) -> bool:
        """Whether every relation already carries exactly these settings
        (what publish would leave unchanged)."""
        return all(relation.to_publish_raw.get(key) == canonical_json(value)
                   for relation in self.relations
                   for key, value in settings.items())

    def publish_releases_packages_map(
            self, releases_packages_map: Dict[str, Any]) -> None:
        """Hook used by layer:openstack for subordinates' package maps."""
        self.publish({'releases-packages-map': releases_packages_map})
