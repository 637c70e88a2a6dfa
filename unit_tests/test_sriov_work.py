"""What the host must do for its SR-IOV GPUs (driver/sriov.work): the
boot unit that enables VFs at every boot, and running it now."""
import pytest

from nvidia_vgpu import model
from nvidia_vgpu.driver import sriov

A100 = '0000:41:00.0'
VFS = ('0000:41:00.4', '0000:41:00.5')
V100 = model.HostGpu('0000:84:00.0', False)


def host(gpus, driver='550.54.16'):
    return model.HostSnapshot((), tuple(gpus), driver, '3:29.0.0')


@pytest.mark.parametrize('case,gpus,driver,installed,expected', [
    ('no SR-IOV GPU: nothing', [V100], '550.54.16', True,
     model.SriovWork()),
    ('before the install: nothing', [model.HostGpu(A100, True)],
     '550.54.16', False, model.SriovWork()),
    ('installed, driver not loaded yet: the unit, for the next boot',
     [model.HostGpu(A100, True)], None, True,
     model.SriovWork(boot_unit=True)),
    ('driver runs, VFs missing: run the unit now',
     [model.HostGpu(A100, True), V100], '550.54.16', True,
     model.SriovWork(True, [A100])),
    ('VFs there: keep the unit, run nothing',
     [model.HostGpu(A100, True, VFS)], '550.54.16', True,
     model.SriovWork(boot_unit=True)),
])
def test_sriov_work(case, gpus, driver, installed, expected):
    assert sriov.work(host(gpus, driver), installed) == expected, case
