"""MIG at every boot (nvidia_vgpu.driver.mig_boot): the mode before the
VFs, the GPU instances after them, only what is missing, from the
charm's record alone; nvidia-smi is the boundary."""
import json
import os

import pytest

from nvidia_vgpu.driver import mig_boot, restore, sriov
from nvidia_vgpu.host import boot_records
from nvidia_vgpu.host.hostfs import host_path

H100 = '0000:41:00.0'
H100_B = '0000:c1:00.0'
QUERY = ('0, 00000000:41:00.0, Enabled, Enabled\n'
         '1, 00000000:C1:00.0, Disabled, Disabled\n')
ONE_GI = ('|   0  MIG 3g.40gb       9        1          0:4     |\n')


@pytest.fixture
def record(tmp_path, monkeypatch):
    monkeypatch.setenv('NVIDIA_VGPU_HOST_ROOT', str(tmp_path))

    def write(layout):
        os.makedirs(os.path.dirname(host_path(boot_records.MIG)),
                    exist_ok=True)
        with open(host_path(boot_records.MIG), 'w') as stream:
            json.dump(layout, stream)
    return write


def test_the_mode_is_set_on_every_gpu_of_the_record(record, fake_commands):
    record({H100: ['3g.40gb'], H100_B: ['7g.80gb']})
    fake_commands.set('nvidia-smi', stdout='Enabled MIG Mode for GPU\n')
    assert mig_boot.main(['mig_boot', 'mode']) == 0
    assert fake_commands.calls == [
        ['nvidia-smi', '-i', '00000000:41:00.0', '-mig', '1'],
        ['nvidia-smi', '-i', '00000000:c1:00.0', '-mig', '1']]


def test_instances_are_made_where_missing_and_a_gpu_out_of_mode_fails(
        record, fake_commands):
    record({H100: ['3g.40gb', '1g.10gb', '1g.10gb'], H100_B: ['7g.80gb']})
    fake_commands.set('nvidia-smi', by_last_argument={
        '--format=csv,noheader': {'stdout': QUERY},
        '-lgi': {'stdout': ONE_GI}})
    assert mig_boot.main(['mig_boot', 'instances']) == 1
    made = [call for call in fake_commands.calls if '-cgi' in call]
    assert made == [['nvidia-smi', 'mig', '-i', '00000000:41:00.0', '-cgi',
                     '1g.10gb,1g.10gb']]


@pytest.mark.parametrize('wanted,existing,left', [
    (['3g.40gb', '1g.10gb'], [], ['3g.40gb', '1g.10gb']),
    (['3g.40gb', '1g.10gb'], ['1g.10gb'], ['3g.40gb']),
    (['3g.40gb', '1g.10gb'], ['3g.40gb', '1g.10gb'], []),
    # GIs the layout does not have: the charm's to change, not the boot's.
    (['3g.40gb', '1g.10gb'], ['7g.80gb'], []),
])
def test_only_what_is_missing_is_made(wanted, existing, left):
    assert mig_boot.missing(wanted, existing) == left


def test_the_units_run_in_the_order_mig_needs():
    """Mode, then VFs (sriov-manage -e destroys GPU instances), then the
    GPU instances, then the guests' vGPUs and nova-compute."""
    texts = mig_boot.unit_texts('/var/lib/juju/agents/unit-x-0/charm/lib')
    mode, instances = (texts[name].splitlines() for name in mig_boot.UNITS)
    assert 'Before={} nova-compute.service'.format(sriov.BOOT_UNIT) in mode
    assert 'After={} {}'.format(mig_boot.MODE_UNIT,
                                sriov.BOOT_UNIT) in instances
    assert 'Before={} nova-compute.service libvirtd.service'.format(
        restore.UNIT) in instances
    assert ('ExecStart=/usr/bin/python3 -m nvidia_vgpu.driver.mig_boot '
            'instances') in instances


def test_a_wrong_phase_is_refused(record):
    assert mig_boot.main(['mig_boot', 'all']) == 2
