"""Test double for ``charms_openstack.charm.defaults``.

``use_defaults`` switches on stock behaviour.  Most defaults only set a
``charms.openstack.do-default-*`` flag: the handlers that react to those
flags live in layer:openstack (reactive code may only be loaded from a
charm's reactive/ directory), so the flag names must match exactly.
"""
from typing import Callable, Dict, Optional

import charmhelpers.contrib.openstack.utils as os_utils
import charmhelpers.core.hookenv as hookenv
import charmhelpers.core.unitdata as unitdata
import charms.reactive as reactive

from charms_openstack.charm import core

ALLOWED_DEFAULT_HANDLERS = [
    'charm.installed',
    'amqp.connected',
    'shared-db.connected',
    'identity-service.connected',
    'identity-service.available',
    'config.changed',
    'config.rendered',
    'charm.default-select-release',
    'charm.default-select-package-type',
    'update-status',
    'upgrade-charm',
    'certificates.available',
    'storage-backend.connected',
    'cluster.available',
]

# Default name -> flag that tells layer:openstack to run its handler.
# Note 'config.rendered': its flag uses a dash where the name has a dot.
_DEFAULT_FLAGS = {
    'charm.installed': 'charms.openstack.do-default-charm.installed',
    'amqp.connected': 'charms.openstack.do-default-amqp.connected',
    'shared-db.connected': 'charms.openstack.do-default-shared-db.connected',
    'identity-service.connected':
        'charms.openstack.do-default-identity-service.connected',
    'identity-service.available':
        'charms.openstack.do-default-identity-service.available',
    'config.changed': 'charms.openstack.do-default-config.changed',
    'config.rendered': 'charms.openstack.do-default-config-rendered',
    'update-status': 'charms.openstack.do-default-update-status',
    'upgrade-charm': 'charms.openstack.do-default-upgrade-charm',
    'certificates.available':
        'charms.openstack.do-default-certificates.available',
    'storage-backend.connected':
        'charms.openstack.do-default-storage-backend.connected',
    'cluster.available': 'charms.openstack.do-default-cluster.available',
}


def _install_default_release_selector() -> None:
    """Register the stock way of finding the unit's OpenStack release."""

    @core.register_os_release_selector
    def default_select_release() -> Optional[str]:
        """Release from the kv cache, else from packages, else guessed.

        A subordinate never uses or fills the cache: its principal may be
        upgraded without this charm being told, so it must look again in
        every hook.
        """
        subordinate = hookenv.is_subordinate()
        release = None
        if not subordinate:
            release = unitdata.kv().get(core.OPENSTACK_RELEASE_KEY, None)
        if release is not None:
            return release
        try:
            charm = core.get_charm_instance()
            if charm.release_pkg is None:
                raise RuntimeError("release_pkg is not set")
            release = charm.get_os_codename_package(
                charm.release_pkg, charm.package_codenames,
                apt_cache_sufficient=not charm.source_config_key)
            if release is None:
                # A codename map without this version does not raise even
                # with fatal=True; treat it like any other lookup failure.
                raise ValueError
        except (AttributeError, ValueError):
            try:
                package = (
                    os_utils.get_installed_semantic_versioned_packages()[0])
            except IndexError:
                # os_release() then tries its other ways of finding out.
                package = 'dummy-package'
            release = os_utils.os_release(
                package, source_key=charm.source_config_key)
        if not subordinate:
            unitdata.kv().set(core.OPENSTACK_RELEASE_KEY, release)
        return release


def _flag_setter(flag: str) -> Callable[[], None]:
    """Handler for a default that only needs its flag set."""
    def _set() -> None:
        reactive.set_flag(flag)
    return _set


_HANDLERS: Dict[str, Callable[[], None]] = {
    name: _flag_setter(flag) for name, flag in _DEFAULT_FLAGS.items()}
_HANDLERS['charm.default-select-release'] = _install_default_release_selector
# 'charm.default-select-package-type' (snap installs) is allowed but has
# no handler in this stand-in, so using it fails loudly.


def use_defaults(*defaults: str) -> None:
    """Switch on the named stock behaviours, in the order given.

    An unknown name is a charm bug, so it raises instead of being ignored.
    """
    for name in defaults:
        if name not in ALLOWED_DEFAULT_HANDLERS:
            raise RuntimeError(
                "There is no default handler called '{}'".format(name))
        handler = _HANDLERS.get(name)
        if handler is None:
            raise RuntimeError(
                "Default '{}' is allowed but this charms_openstack stand-in "
                "does not implement it".format(name))
        handler()
