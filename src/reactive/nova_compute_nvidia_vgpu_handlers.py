"""Reactive wiring: when these flags, call this method of the charm.

The work lives in the charm class (lib/charm/openstack/) and in the pure
modules it calls (lib/nvidia_vgpu/); handlers only route.
"""
import charms_openstack.bus
import charms_openstack.charm as charm

charms_openstack.bus.discover()

# layer:openstack's default handlers run install(), config_changed(),
# upgrade_charm() and assess_status() for us.
charm.use_defaults(
    'charm.installed',
    'config.changed',
    'update-status',
    'upgrade-charm',
)
