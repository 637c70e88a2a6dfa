"""What Nova's own driver does with vGPUs when nova-compute starts, on
which the charm's handling of an OpenStack upgrade rests
(docs/reference.md, "Guests' vGPUs after a reboot"):

- before Dalmatian (nova 29 and older) init_host recreates the vGPUs
  guests' definitions name, and defines nothing;
- from Dalmatian (nova 30) it starts only the *defined* inactive vGPUs
  where libvirt is 7.3.0 or newer (every Ubuntu release Dalmatian runs
  on), and from Flamingo (nova 32) it has no recreate path at all.

Nova's fake libvirt keeps no node-device definitions (its
nodeDeviceDefineXML does nothing, and listAllDevices lists no mdevs), so
it cannot replay a boot with the definitions the charm leaves; these
tests run the real driver's start-up pieces and record which libvirt
calls they make instead. The simulator's scenarios/openstack-upgrade/
show the boot itself, with mdevctl's definitions modelled.
"""
import inspect
from unittest import mock

import pytest
from nova.tests import fixtures as nova_fixtures
from nova.tests.fixtures import libvirt as fakelibvirt
from nova.virt.libvirt import driver as libvirt_driver

import nova.version

NOVA_MAJOR = int(nova.version.version_info.version_string().split('.')[0])
DALMATIAN, FLAMINGO = 30, 32
Driver = libvirt_driver.LibvirtDriver


def _started_vgpus():
    """Run the driver's start of inactive vGPUs with a libvirt that
    lists one defined, inactive vGPU; the flags it listed with and the
    devices it started."""
    inactive = mock.Mock()
    inactive.name.return_value = 'mdev_4b20d080_1b54_4048_85b3_a6a62d165c01'
    driver = Driver.__new__(Driver)
    driver._host = mock.Mock()
    driver._host.list_all_devices.return_value = [inactive]
    # The driver's libvirt module is Nova's fake one, as in its tests.
    with nova_fixtures.LibvirtFixture():
        driver._start_inactive_mediated_devices()
    flags = driver._host.list_all_devices.call_args[0][0]
    started = [call[0][0] for call in driver._host.device_start.call_args_list]
    return flags, started, inactive


@pytest.mark.skipif(NOVA_MAJOR < DALMATIAN, reason='nova 30 and later')
def test_from_dalmatian_only_defined_inactive_vgpus_are_started():
    flags, started, inactive = _started_vgpus()
    # Inactive node devices are the defined ones: a transient vGPU that
    # a reboot removed is no node device at all, so it is not started.
    assert flags & fakelibvirt.VIR_CONNECT_LIST_NODE_DEVICES_INACTIVE
    assert flags & fakelibvirt.VIR_CONNECT_LIST_NODE_DEVICES_CAP_MDEV
    assert started == [inactive]


@pytest.mark.skipif(NOVA_MAJOR < FLAMINGO, reason='nova 32 and later')
def test_from_flamingo_starting_nova_compute_recreates_no_vgpu():
    # init_host starts defined vGPUs, and has nothing that recreates a
    # missing one (nova 30 and 31 recreate only below libvirt 7.3.0,
    # older than any Ubuntu release they run on).
    assert not hasattr(Driver, '_recreate_assigned_mediated_devices')
    assert '_start_inactive_mediated_devices()' in inspect.getsource(
        Driver.init_host)


@pytest.mark.skipif(NOVA_MAJOR >= DALMATIAN, reason='before nova 30')
def test_before_dalmatian_nova_recreates_and_starts_no_definitions():
    assert '_recreate_assigned_mediated_devices()' in inspect.getsource(
        Driver.init_host)
    assert not hasattr(Driver, '_start_inactive_mediated_devices')
