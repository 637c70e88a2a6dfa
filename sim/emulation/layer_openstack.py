"""Simulated layer:openstack reactive handlers (reactive/layer_openstack.py).

The default handlers a charm opts into with charms_openstack's
use_defaults(), re-created from their documented behaviour
(reactive-anatomy.md section b). Certificates and storage-backend
handlers are left out: this charm has neither relation.
"""
import charmhelpers.contrib.openstack.utils as os_utils
import charmhelpers.core.hookenv as hookenv
import charmhelpers.core.unitdata as unitdata
import charms.reactive as reactive

import charms_openstack.bus
import charms_openstack.charm as charm

charms_openstack.bus.discover()

RELEASE_KEY = 'charmers.openstack-release-version'


@reactive.when('charms.openstack.do-default-charm.installed')
@reactive.when_not('charm.installed')
def default_install():
    unitdata.kv().unset(RELEASE_KEY)
    with charm.provide_charm_instance() as instance:
        instance.install()
    reactive.set_flag('charm.installed')
    if hookenv.is_subordinate():
        reactive.set_flag('charm.is-subordinate')


@reactive.when('config.changed', 'charms.openstack.do-default-config.changed')
def default_config_changed():
    with charm.provide_charm_instance() as instance:
        instance.config_changed()
        instance.assess_status()


@reactive.hook('upgrade-charm')
def default_upgrade_charm():
    reactive.set_flag('run-default-upgrade-charm')
    if hookenv.is_subordinate():
        reactive.set_flag('charm.is-subordinate')


@reactive.when('charms.openstack.do-default-upgrade-charm',
               'run-default-upgrade-charm')
def run_default_upgrade_charm():
    with charm.provide_charm_instance() as instance:
        instance.upgrade_charm()
    reactive.clear_flag('run-default-upgrade-charm')


@reactive.hook('update-status')
def default_update_status():
    reactive.set_flag('run-default-update-status')
    reactive.set_flag('is-update-status-hook')
    hookenv.atexit(lambda: reactive.clear_flag('is-update-status-hook'))


@reactive.when('is-update-status-hook')
def check_really_is_update_status():
    if hookenv.hook_name() != 'update-status':
        reactive.clear_flag('is-update-status-hook')


@reactive.when('charms.openstack.do-default-update-status',
               'run-default-update-status')
def run_default_update_status():
    with charm.provide_charm_instance() as instance:
        instance.assess_status()
    reactive.clear_flag('run-default-update-status')


@reactive.hook('pre-series-upgrade')
def default_pre_series_upgrade():
    with charm.provide_charm_instance() as instance:
        instance.series_upgrade_prepare()


@reactive.hook('post-series-upgrade')
def default_post_series_upgrade():
    with charm.provide_charm_instance() as instance:
        instance.series_upgrade_complete()


@reactive.when('charms.openstack.do-default-config-rendered')
@reactive.when_not('charm.paused', 'config.rendered')
def default_config_not_rendered():
    with charm.provide_charm_instance() as instance:
        instance.disable_services()
        instance.assess_status()


@reactive.when('charms.openstack.do-default-config-rendered',
               'config.rendered')
@reactive.when_not('charm.paused')
def default_config_rendered():
    with charm.provide_charm_instance() as instance:
        instance.enable_services()
        instance.assess_status()


@reactive.when('charm.is-subordinate')
def subordinate_maybe_publish_releases_packages_map():
    for endpoint_name in os_utils.container_scoped_relations():
        if not reactive.is_flag_set(endpoint_name + '.connected'):
            continue
        if hookenv.hook_name() not in (
                'upgrade-charm', endpoint_name + '-relation-joined',
                endpoint_name + '-relation-changed'):
            continue
        endpoint = reactive.endpoint_from_name(endpoint_name)
        publish = getattr(endpoint, 'publish_releases_packages_map', None)
        if publish is None:
            continue
        with charm.provide_charm_instance() as instance:
            publish(instance.releases_packages_map)
