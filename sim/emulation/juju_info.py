"""Simulated interface:juju-info (requires side), which this charm includes
for the container-scoped relation Juju requires of a subordinate. Nothing
is exchanged over it; like the published layer, it raises
<endpoint>.connected and <endpoint>.available while a principal is
joined."""
from charms.reactive import Endpoint, clear_flag, set_flag, when, when_not


class JujuInfoRequires(Endpoint):
    """Flags only: the principal's presence."""

    @when('endpoint.{endpoint_name}.joined')
    def joined(self):
        set_flag(self.expand_name('{endpoint_name}.connected'))
        set_flag(self.expand_name('{endpoint_name}.available'))

    @when_not('endpoint.{endpoint_name}.joined')
    def departed(self):
        clear_flag(self.expand_name('{endpoint_name}.connected'))
        clear_flag(self.expand_name('{endpoint_name}.available'))
