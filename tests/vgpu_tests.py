"""Functional tests run by zaza against a deployed model.

Written against PyPI zaza only (zaza.model); tests.yaml names them by
dotted path. Without NVIDIA GPUs (the default) they check what every
host must do; with TEST_NVIDIA_VGPU_HOST_SW (path of the vGPU Manager
.deb) and TEST_VGPU_DEVICE_MAPPINGS set for the model's GPUs, the
hardware tests run too, and skip cleanly otherwise.
"""
import os
import re
import unittest

import zaza.model

APPLICATION = 'nova-compute-nvidia-vgpu'
PRINCIPAL = 'nova-compute'
NOVA_CONF = '/etc/nova/nova.conf'
RESOURCE = 'nvidia-vgpu-software'
# Valid on any host; addresses not on a host are left out of its config.
DEFAULT_MAPPINGS = "{'nvidia-108': ['0000:c1:00.0']}"
INVALID_MAPPINGS = "{'nvidia-108': ['0000:c1:00.0\\n[DEFAULT]\\ndebug=true']}"
VGPU_SECTION = re.compile(r'^\[(?:mdev|vgpu)_nvidia-\d+\]$', re.MULTILINE)
TYPES_OPTION = re.compile(r'^enabled_(?:mdev|vgpu)_types\s*=', re.MULTILINE)
TIMEOUT = 1800


def hardware_mappings():
    """The operator-given mappings for a model with GPUs, else None."""
    if not os.environ.get('TEST_NVIDIA_VGPU_HOST_SW'):
        return None
    return os.environ.get('TEST_VGPU_DEVICE_MAPPINGS') or None


def set_vgpu_device_mappings():
    """Configure step: the model's own mappings, or a harmless default."""
    zaza.model.set_application_config(APPLICATION, {
        'vgpu-device-mappings': hardware_mappings() or DEFAULT_MAPPINGS})
    zaza.model.block_until_all_units_idle()


def nova_conf(unit_name):
    return zaza.model.file_contents(unit_name, NOVA_CONF)


def subordinate_units():
    """Our units, by name, from the model status."""
    status = zaza.model.get_status().applications[PRINCIPAL]
    names = []
    for principal in status.units.values():
        names += [name for name in (principal.subordinates or {})
                  if name.startswith(APPLICATION + '/')]
    return sorted(names)


class VgpuSubordinateTest(unittest.TestCase):
    """What every host does, with or without NVIDIA GPUs."""

    @classmethod
    def setUpClass(cls):
        cls.units = subordinate_units()
        cls.principals = [unit.entity_id for unit in
                          zaza.model.get_units(PRINCIPAL)]
        cls.has_gpus = hardware_mappings() is not None

    def wait_ready(self):
        zaza.model.wait_for_application_states(states={
            APPLICATION: {'workload-status': 'active',
                          'workload-status-message-prefix': 'Unit is ready'},
            PRINCIPAL: {'workload-status': 'blocked',
                        'workload-status-message-prefix':
                        'Missing relations'}}, timeout=TIMEOUT)

    def test_status_says_what_was_found(self):
        self.assertTrue(self.units, 'no unit of ' + APPLICATION)
        status = zaza.model.get_status().applications[PRINCIPAL]
        for principal in status.units.values():
            for name, unit in (principal.subordinates or {}).items():
                if not name.startswith(APPLICATION + '/'):
                    continue
                self.assertEqual(unit.workload_status.status, 'active')
                message = unit.workload_status.info
                self.assertTrue(message.startswith('Unit is ready'), message)
                if not self.has_gpus:
                    self.assertIn('no NVIDIA GPU', message)

    def test_nova_conf_gets_vgpu_settings_only_where_gpus_are(self):
        for unit in self.principals:
            text = nova_conf(unit)
            if self.has_gpus:
                self.assertRegex(text, TYPES_OPTION)
            else:
                self.assertNotRegex(text, VGPU_SECTION)
                self.assertNotRegex(text, TYPES_OPTION)

    def test_invalid_mappings_block_and_leave_nova_conf_alone(self):
        before = {unit: nova_conf(unit) for unit in self.principals}
        config = zaza.model.get_application_config(APPLICATION)
        previous = config['vgpu-device-mappings']['value']
        zaza.model.set_application_config(
            APPLICATION, {'vgpu-device-mappings': INVALID_MAPPINGS})
        try:
            for unit in self.units:
                zaza.model.block_until_unit_wl_message_match(
                    unit, '^Invalid vgpu-device-mappings: ', timeout=TIMEOUT)
            zaza.model.block_until_all_units_idle()
            for unit in self.principals:
                self.assertEqual(nova_conf(unit), before[unit])
                self.assertNotIn('debug=true', nova_conf(unit))
        finally:
            zaza.model.set_application_config(
                APPLICATION, {'vgpu-device-mappings': previous})
        self.wait_ready()

    def test_pause_and_resume(self):
        unit = self.units[0]
        action = zaza.model.run_action(unit, 'pause',
                                       raise_on_failure=True)
        self.assertEqual(action.data['status'], 'completed')
        zaza.model.block_until_unit_wl_status(unit, 'maintenance')
        zaza.model.run_action(unit, 'resume', raise_on_failure=True)
        zaza.model.block_until_unit_wl_status(unit, 'active')

    def test_list_vgpu_types(self):
        action = zaza.model.run_action(self.units[0], 'list-vgpu-types',
                                       raise_on_failure=True)
        output = action.data['results']['output']
        if self.has_gpus:
            self.assertRegex(output, r'^nvidia-\d+, [0-9a-f:.]+, ')
        else:
            self.assertEqual(output, 'No NVIDIA GPU on this host.')


@unittest.skipUnless(hardware_mappings(),
                     'needs NVIDIA GPUs in the model: set '
                     'TEST_NVIDIA_VGPU_HOST_SW and TEST_VGPU_DEVICE_MAPPINGS')
class VgpuHardwareTest(unittest.TestCase):
    """On hosts with NVIDIA GPUs: the driver, a reboot, the types."""

    def test_driver_installs_and_runs_after_a_reboot(self):
        zaza.model.attach_resource(APPLICATION, RESOURCE,
                                   os.environ['TEST_NVIDIA_VGPU_HOST_SW'])
        units = subordinate_units()
        for unit in units:
            zaza.model.block_until_unit_wl_message_match(
                unit, '.*installed NVIDIA software.*', timeout=TIMEOUT)
        for unit in units:
            zaza.model.run_on_unit(unit, 'sudo shutdown -r +1')
        zaza.model.wait_for_application_states(states={
            APPLICATION: {'workload-status': 'active',
                          'workload-status-message-prefix':
                          'Unit is ready'}}, timeout=TIMEOUT)
        action = zaza.model.run_action(units[0], 'list-vgpu-types',
                                       raise_on_failure=True)
        self.assertRegex(action.data['results']['output'],
                         r'^nvidia-\d+, [0-9a-f:.]+, ')
        for unit in zaza.model.get_units(PRINCIPAL):
            self.assertRegex(nova_conf(unit.entity_id), TYPES_OPTION)
