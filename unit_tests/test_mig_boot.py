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


# An H100's profiles and their placements, as nvidia-smi lists them.
PROFILES = ('|   0  MIG 1g.10gb       19     7/7        9.75       No     '
            '16     1     0   |\n'
            '|   0  MIG 3g.40gb        9     2/2        39.25      No     '
            '60     3     0   |\n')
PLACEMENTS = ('GPU  0 Profile ID 19 Placements: {0,1,2,3,4,5,6}:1\n'
              'GPU  0 Profile ID  9 Placements: {0,4}:4\n')


@pytest.mark.parametrize('existing,made', [
    # Each at the start computed from the placements, so the layout does
    # not rest on where the driver would put them.
    ('', ['9:4,19:0,19:1,19:2,19:3']),
    ('|   0  MIG 1g.10gb      19        1          0:1     |\n',
     ['9:4,19:1,19:2,19:3']),
    # Made already: running again changes nothing.
    (''.join('|   0  MIG 1g.10gb      19        {}          {}:1     |\n'
             .format(number, number - 1) for number in range(1, 5)) +
     '|   0  MIG 3g.40gb       9        5          4:4     |\n', []),
])
def test_instances_are_made_at_computed_placements(record, fake_commands,
                                                   existing, made):
    record({H100: ['3g.40gb'] + ['1g.10gb'] * 4})
    fake_commands.set('nvidia-smi', by_last_argument={
        '--format=csv,noheader': {'stdout': QUERY.splitlines()[0] + '\n'},
        '-lgip': {'stdout': PROFILES}, '-lgipp': {'stdout': PLACEMENTS},
        '-lgi': {'stdout': existing}})
    assert mig_boot.main(['mig_boot', 'instances']) == 0
    assert [call[-1] for call in fake_commands.calls
            if '-cgi' in call] == made


def test_instances_that_do_not_fit_beside_those_there_are_not_made(
        record, fake_commands, capsys):
    """A 3g.40gb at 0 leaves room for three 1g.10gb: the boot makes
    none, and says so (the next hook remakes them)."""
    record({H100: ['3g.40gb'] + ['1g.10gb'] * 4})
    fake_commands.set('nvidia-smi', by_last_argument={
        '--format=csv,noheader': {'stdout': QUERY.splitlines()[0] + '\n'},
        '-lgip': {'stdout': PROFILES}, '-lgipp': {'stdout': PLACEMENTS},
        '-lgi': {'stdout': '|   0  MIG 3g.40gb       9        1          '
                           '0:4     |\n'}})
    assert mig_boot.main(['mig_boot', 'instances']) == 1
    assert [call for call in fake_commands.calls if '-cgi' in call] == []
    assert ('GPU 0000:41:00.0: the GPU instances missing do not fit beside '
            'those there; none made') in capsys.readouterr().err


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


def test_idle_typed_vfs_are_cleared_before_the_instances_go(
        record, fake_commands, tmp_path):
    vfs = ('0000:41:00.4', '0000:41:00.5')
    for vf in vfs:
        typed = tmp_path / 'sys' / 'bus' / 'pci' / 'devices' / vf / 'nvidia'
        typed.mkdir(parents=True)
        (typed / 'current_vgpu_type').write_text('1130\n')
    fake_commands.set('nvidia-smi', stdout='Successfully destroyed GPU '
                      'instance ID  1 from GPU  0\n')
    work = mig_boot.model.MigPlan(destroy={H100: (1,)},
                                  untype={H100: (vfs[1],)})
    assert mig_boot.apply(work) == []
    current = tmp_path / 'sys' / 'bus' / 'pci' / 'devices'
    assert [(current / vf / 'nvidia' / 'current_vgpu_type').read_text()
            for vf in vfs] == ['1130\n', '0']
    assert fake_commands.calls[0][-3:] == ['-dgi', '-gi', '1']
