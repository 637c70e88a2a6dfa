"""The series upgrade's policy (nvidia_vgpu.driver.series_upgrade): the
target Juju names, series and bases both ways, and the status that
names the guests to move off, in tables."""
import pytest

from nvidia_vgpu import model
from nvidia_vgpu.driver import series_upgrade


@pytest.mark.parametrize('series,base', [
    ('bionic', 'ubuntu@18.04'),
    ('focal', 'ubuntu@20.04'),
    ('jammy', 'ubuntu@22.04'),
    ('noble', 'ubuntu@24.04'),
])
def test_series_and_bases_map_both_ways(series, base):
    assert series_upgrade.base_of(series) == base
    assert series_upgrade.series_of(base) == series


@pytest.mark.parametrize('given,series', [
    ('ubuntu@24.04/stable', 'noble'),
    (' Ubuntu@22.04 ', 'jammy'),
    ('ubuntu@26.04', None),
    ('centos@7', None),
    ('', None),
])
def test_series_of_unusual_bases(given, series):
    assert series_upgrade.series_of(given) == series


@pytest.mark.parametrize('given,base', [
    ('Noble', 'ubuntu@24.04'),
    ('xenial', None),
    ('', None),
])
def test_base_of_unusual_series(given, base):
    assert series_upgrade.base_of(given) == base


@pytest.mark.parametrize('environ,target', [
    # Juju 3 and 4 name the base, Juju 2.9 the series.
    ({'JUJU_TARGET_BASE': 'ubuntu@24.04'}, 'noble (ubuntu@24.04)'),
    ({'JUJU_TARGET_SERIES': 'noble'}, 'noble (ubuntu@24.04)'),
    ({'JUJU_TARGET_SERIES': 'focal'}, 'focal (ubuntu@20.04)'),
    # The base wins where both are there.
    ({'JUJU_TARGET_BASE': 'ubuntu@22.04', 'JUJU_TARGET_SERIES': 'noble'},
     'jammy (ubuntu@22.04)'),
    # An empty base falls back to the series.
    ({'JUJU_TARGET_BASE': '', 'JUJU_TARGET_SERIES': 'jammy'},
     'jammy (ubuntu@22.04)'),
    # A release this charm does not know is named as Juju gave it.
    ({'JUJU_TARGET_BASE': 'ubuntu@26.04'}, 'ubuntu@26.04'),
    ({'JUJU_TARGET_SERIES': 'resolute'}, 'resolute'),
    ({}, None),
    ({'JUJU_VERSION': '3.4.5'}, None),
])
def test_target_from_the_hook_environment(environ, target):
    assert series_upgrade.target(environ) == target


def _in_use(*guests):
    return [model.VgpuInUse('0000:84:00.0', 'nvidia-108', [guest])
            for guest in guests]


@pytest.mark.parametrize('in_use,holds', [
    ([], False),
    (_in_use('instance-0000002a'), True),
    (_in_use('instance-0000002a', 'instance-0000002b'), True),
])
def test_the_prepare_holds_only_for_guests_using_vgpus(in_use, holds):
    assert series_upgrade.holds_for_guests(in_use) is holds


@pytest.mark.parametrize('guests,to,message', [
    (['instance-0000002a'], 'noble (ubuntu@24.04)',
     'Series upgrade to noble (ubuntu@24.04) prepared without stopping the '
     'vGPU Manager: 1 running guest uses vGPUs here (instance-0000002a). '
     'nova-compute is paused for the upgrade, so Nova cannot move it: shut '
     'it down on this host (sudo virsh shutdown <name>), or resume '
     'nova-compute, move it, and pause nova-compute again'),
    (['instance-0000002a', 'instance-0000002b'], None,
     'Series upgrade prepared without stopping the vGPU Manager: 2 running '
     'guests use vGPUs here (instance-0000002a, instance-0000002b). '
     'nova-compute is paused for the upgrade, so Nova cannot move them: '
     'shut them down on this host (sudo virsh shutdown <name>), or resume '
     'nova-compute, move them, and pause nova-compute again'),
])
def test_the_held_status_gives_ways_out_that_work_with_nova_paused(
        guests, to, message):
    assert series_upgrade.held_message(guests, to) == message


@pytest.mark.parametrize('running,stopped,ready,message', [
    ([], [], True, 'Ready to prepare: no running guest uses a vGPU here.'),
    ([], ['instance-0000002b'], True,
     "Ready to prepare: no running guest uses a vGPU here. 1 shut-off "
     "guest keeps its vGPUs here and gets them after the upgrade's "
     "reboot, where the new release's driver offers the same types "
     "(instance-0000002b)."),
    (['instance-0000002a'], [], False,
     '1 running guest uses vGPUs here (instance-0000002a). Move it while '
     'nova-compute runs: disable the compute service, then openstack '
     'server migrate --live-migration <server> (or cold migration, '
     'shelve-offload, resize or delete), or stop it; then prepare.'),
])
def test_the_check_before_the_prepare(running, stopped, ready, message):
    assert series_upgrade.check_message(running, stopped) == (ready,
                                                              message)


def test_many_guests_are_cut_short():
    guests = ['instance-{:08x}'.format(n) for n in range(5)]
    message = series_upgrade.held_message(guests, 'noble (ubuntu@24.04)')
    assert ': 5 running guests use vGPUs here (instance-00000000, '\
        'instance-00000001, instance-00000002 and 2 more). nova-compute' \
        in message
