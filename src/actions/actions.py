#!/usr/bin/env python3
"""Entry point of this charm's own actions (pause/resume: layer:openstack).

list-vgpu-types only reads the host (lspci, sysfs, the unit's record of
the installed software), so it runs without the reactive framework or
charms.openstack: asking a large GPU server costs little more than
reading its sysfs files. install-vgpu-software, vgpu-health,
check-series-upgrade and preview-config need the charm instance
(through charms.openstack) as the hooks do: the health check compares
the host with what that release's Nova was given, and the preview runs
the hooks' own decision.
"""
import json
import os
import sys

sys.path.append('lib')

from charms.layer import basic  # noqa: E402

basic.bootstrap_charm_deps()

import charmhelpers.core.hookenv as hookenv  # noqa: E402
import charmhelpers.core.unitdata as unitdata  # noqa: E402

from nvidia_vgpu import state  # noqa: E402
from nvidia_vgpu.host import (  # noqa: E402
    inventory, kernel, snapshot, survey)
from nvidia_vgpu.nova import (  # noqa: E402
    releases, resource_classes, type_listing)


def list_vgpu_types() -> None:
    """action-set the vGPU types this host's GPUs offer."""
    driver = kernel.nvidia_driver_version()
    gpus, results = type_listing.choose(
        inventory.nvidia_gpus(), state.installed_software(), driver,
        pci_address=hookenv.action_get('pci-address') or None)
    if results is None:
        host = snapshot.read_listing(tuple(gpus), driver)
        # Versions for live migration, read as a file: no dpkg-query.
        installed = survey.from_status_file([releases.NOVA_PACKAGE])
        listed = {gpu.address for gpu in gpus}
        results = type_listing.listing(
            type_listing.offered_types(host),
            resource_class=hookenv.config().get(resource_classes.OPTION),
            refusal=state.class_refusal(),
            mig={address: gpu for address, gpu in (host.mig or {}).items()
                 if address in listed},
            versions=survey.versions(
                installed(releases.NOVA_PACKAGE), host.gpus, installed),
            driver=driver, mixed_size=host.mixed_size, gi_fits=host.gi_fits)
    hookenv.action_set({key: value if isinstance(value, str)
                        else json.dumps(value, sort_keys=True)
                        for key, value in results.items()})


def install_vgpu_software() -> None:
    """Install the attached revision now (force=true under guests)."""
    import charms_openstack.bus
    import charms_openstack.charm as charm
    charms_openstack.bus.discover()
    try:
        with charm.provide_charm_instance() as instance:
            message = instance.install_vgpu_software()
            hookenv.action_set({'message': message})
            # Not deferred to a hook's exit, as layer:openstack's own
            # actions do: the unit's status shows the install at once.
            instance._assess_status()
    finally:
        unitdata.kv().flush()


def vgpu_health() -> None:
    """Report the host's health; fail, naming the reasons, when it is
    not healthy. Reads only: nothing is installed, started or set."""
    import charms_openstack.bus
    import charms_openstack.charm as charm
    from nvidia_vgpu.health import verdict
    charms_openstack.bus.discover()
    with charm.provide_charm_instance() as instance:
        result = instance.vgpu_health()
    results = {'output': verdict.table(result),
               'health': json.dumps(result, sort_keys=True)}
    if result['nvidia_smi'] is not None:
        results['nvidia-smi'] = result['nvidia_smi']
    hookenv.action_set(results)
    failure = verdict.failure(result)
    if failure:
        hookenv.action_fail(failure)


def check_series_upgrade() -> None:
    """Before a series upgrade's prepare: fails, naming the running
    guests to move while nova-compute still runs, where the prepare
    would wait for them. Reads only."""
    import charms_openstack.bus
    import charms_openstack.charm as charm
    charms_openstack.bus.discover()
    with charm.provide_charm_instance() as instance:
        results = instance.check_series_upgrade()
    hookenv.action_set(results)
    if results['ready'] != 'true':
        hookenv.action_fail(results['message'])


def preview_config() -> None:
    """What the unit would do with these option values, changing
    nothing: fails with the refusal the status would show."""
    import charms_openstack.bus
    import charms_openstack.charm as charm
    charms_openstack.bus.discover()
    values = hookenv.action_get() or {}
    with charm.provide_charm_instance() as instance:
        found = instance.context.preview(values)
    if found.refused:
        hookenv.action_fail(found.refused)
        return
    hookenv.action_set(found.results)


ACTIONS = {
    'check-series-upgrade': check_series_upgrade,
    'install-vgpu-software': install_vgpu_software,
    'list-vgpu-types': list_vgpu_types,
    'preview-config': preview_config,
    'vgpu-health': vgpu_health,
}


def main(argv) -> int:
    """Run the action named by argv[0]; turn any failure into action-fail."""
    name = os.path.basename(argv[0])
    action = ACTIONS.get(name)
    if action is None:
        hookenv.action_fail('Action {} is not defined'.format(name))
        return 0
    try:
        action()
    except Exception as error:
        hookenv.action_fail(str(error))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
