"""Reactive wiring: when these flags (or this hook), which collaborator
of the charm instance does what.

The decisions live in the hook's plan (lib/nvidia_vgpu/hook_plan/), the
work in the collaborators (lib/nvidia_vgpu/apply/, relations/); the
handlers only route.
"""
import charms.reactive as reactive
import charms_openstack.bus
import charms_openstack.charm as charm

charms_openstack.bus.discover()

STOPPING = 'nova-compute-nvidia-vgpu.stopping'
UPDATE_STATUS = 'is-update-status-hook'

# layer:openstack's default handlers run install(), config_changed(),
# upgrade_charm() and assess_status() for us.
charm.use_defaults(
    'charm.installed',
    'config.changed',
    'update-status',
    'upgrade-charm',
)


@reactive.hook('start', 'config-changed')
def ensure_vgpu_software():
    """Retry a failed install, or install for a GPU added while the host
    was down; config.changed alone would miss an unchanged config."""
    with charm.provide_charm_instance() as instance:
        instance.software.ensure()
        instance.assess_status()


@reactive.when('nova-compute-nvidia-vgpu.software-waits')
@reactive.when_not(STOPPING)
def install_once_guests_are_gone():
    """A revision held back for guests installs at the first hook after
    they are gone, update-status included."""
    with charm.provide_charm_instance() as instance:
        instance.software.install_once_guests_are_gone()
        instance.assess_status()


@reactive.when('nova-vgpu.connected')
def publish_nova_config():
    """Cut MIG GPUs as mig-layout asks, set up the GPUs that mix sizes,
    then hand nova-compute this host's vGPU settings (only what changed),
    in update-status too: a change that waited for guests applies there
    once they are gone."""
    with charm.provide_charm_instance() as instance:
        instance.mig.ensure(stopping=reactive.is_flag_set(STOPPING))
        instance.mixed_sizes.ensure()
        instance.nova_vgpu.publish()
        instance.assess_status()


@reactive.when('cos-agent.available')
@reactive.when_not(UPDATE_STATUS)
def configure_cos_agent():
    """Serve this host's vGPU metrics and give the agent their scrape
    job, alert rules and dashboard (a new port comes with config-changed,
    a new revision with upgrade-charm: not in update-status)."""
    with charm.provide_charm_instance() as instance:
        instance.cos_agent.configure()


@reactive.when('nova-compute-nvidia-vgpu.exporter')
@reactive.when_not('cos-agent.connected')
def remove_exporter():
    """The agent is gone: so is the metrics exporter."""
    with charm.provide_charm_instance() as instance:
        instance.cos_agent.remove()


@reactive.hook('stop')
def remove_boot_units():
    """The unit is going away: leave no boot-time unit of ours behind."""
    with charm.provide_charm_instance() as instance:
        instance.remove_boot_units()
    reactive.set_flag(STOPPING)


@reactive.when('charm.installed')
@reactive.when_not(STOPPING)
def keep_vgpus_across_reboots():
    """Keep what the next boot needs to give guests their vGPUs back."""
    with charm.provide_charm_instance() as instance:
        instance.boot_units.keep_vgpus_across_reboots(
            periodic=reactive.is_flag_set(UPDATE_STATUS))


@reactive.when('charm.series-upgrading')
@reactive.when_not('charm.paused')
def finish_series_upgrade_prepare():
    """A series upgrade's prepare that waited for guests completes at the
    first hook after they are gone (update-status included)."""
    with charm.provide_charm_instance() as instance:
        instance.finish_held_series_upgrade()
        instance.assess_status()


@reactive.when_any('nrpe-external-master.available', 'cos-agent.available',
                   'nova-compute-nvidia-vgpu.monitored')
@reactive.when_not(STOPPING)
def update_monitoring():
    """Keep what NRPE and the exporter read current at every hook, and
    remove it once no monitoring relation is left."""
    with charm.provide_charm_instance() as instance:
        monitored = instance.monitoring.update()
    reactive.toggle_flag('nova-compute-nvidia-vgpu.monitored', monitored)


@reactive.when('charm.installed')
@reactive.when_not(STOPPING, 'nova-vgpu.connected')
def ensure_mig():
    """Cut MIG GPUs as mig-layout asks, at every hook (with nova-vgpu,
    publish_nova_config does, first): a change that waited for guests
    applies at the first hook after they are gone."""
    with charm.provide_charm_instance() as instance:
        instance.mig.ensure()
        instance.assess_status()
