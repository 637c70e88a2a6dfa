"""Provides side of nrpe-external-master (the charm with checks)."""
from typing import Mapping, Optional

import yaml
from charms.reactive import Endpoint, clear_flag, set_flag, when, when_not


class NrpeExternalMasterProvides(Endpoint):
    """The nrpe subordinate on this machine, seen from the charm whose
    checks it serves."""

    @when('endpoint.{endpoint_name}.joined')
    def joined(self) -> None:
        set_flag(self.expand_name('{endpoint_name}.available'))

    @when_not('endpoint.{endpoint_name}.joined')
    def departed(self) -> None:
        clear_flag(self.expand_name('{endpoint_name}.available'))

    def nagios_hostname(self) -> Optional[str]:
        """The name the Nagios server knows this machine by, once the
        nrpe unit has said it."""
        for unit in self.all_joined_units:
            name = unit.received_raw.get('nagios_hostname')
            if name:
                return name
        return None

    def nagios_host_context(self) -> Optional[str]:
        """The nrpe unit's nagios_host_context, once it has said it."""
        for unit in self.all_joined_units:
            context = unit.received_raw.get('nagios_host_context')
            if context:
                return context
        return None

    def publish_monitors(self, monitors: Mapping[str, object]) -> bool:
        """Tell the nrpe unit which checks exist; True if that changed
        (only then is relation data set)."""
        text = yaml.safe_dump(dict(monitors), default_flow_style=False,
                              sort_keys=True)
        changed = False
        for relation in self.relations:
            if relation.to_publish_raw.get('monitors') != text:
                relation.to_publish_raw['monitors'] = text
                changed = True
        return changed
