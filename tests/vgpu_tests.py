"""Functional tests run by zaza against a deployed model.

They use only PyPI zaza (zaza.model); tests.yaml names them by dotted path.
"""
import unittest

import zaza.model

APPLICATION = 'nova-compute-nvidia-vgpu'
READY_PREFIX = 'Unit is ready'


class VgpuSubordinateReadyTest(unittest.TestCase):
    """Every unit of the charm settles, GPU or not, with a ready status."""

    def test_units_ready(self):
        status = zaza.model.get_status().applications[APPLICATION]
        units = {}
        for principal in status.units.values():
            units.update(principal.subordinates or {})
        self.assertTrue(units, 'no unit of {}'.format(APPLICATION))
        for name, unit in units.items():
            if not name.startswith(APPLICATION + '/'):
                continue
            self.assertEqual(unit.workload_status.status, 'active', name)
            self.assertTrue(
                unit.workload_status.info.startswith(READY_PREFIX), name)
