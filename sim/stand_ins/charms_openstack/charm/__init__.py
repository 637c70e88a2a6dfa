"""The names charm code imports from ``charms_openstack.charm``."""
from charms_openstack.charm.classes import OpenStackCharm
from charms_openstack.charm.core import (
    get_charm_instance,
    provide_charm_instance,
    register_os_release_selector,
)
from charms_openstack.charm.defaults import use_defaults

__all__ = (
    'OpenStackCharm',
    'get_charm_instance',
    'provide_charm_instance',
    'register_os_release_selector',
    'use_defaults',
)
