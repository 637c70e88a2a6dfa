"""MIG as the host reads it (nvidia_vgpu.host.mig), from nvidia-smi's
answers in NVIDIA's forms: as the simulated host prints them (on the
development machine's Python), and rows written here in those forms (on
every series' Python, where hooks parse them)."""
import pytest

from nvidia_vgpu.host import mig
from nvidia_vgpu.model import GiProfile, GpuInstance

try:
    from test_sim_mig import gpu, run, simulated  # noqa: F401 (fixture)
except (ImportError, SyntaxError):     # the simulator needs Python 3.8
    pass

host_side = pytest.mark.host_side

V100 = {'address': '0000:84:00.0', 'vendor': '10de', 'device': '1db4',
        'class': '030200', 'driver': 'nvidia'}


def answer(simulation, command):
    code, said = run(simulation, command, stdout_only=True)
    assert code == 0, said
    return said


@host_side
def test_only_mig_capable_gpus_have_a_mode(simulated):  # noqa: F811
    host = simulated(gpu(), V100, gpu('0000:c1:00.0', ampere=True,
                                      mode='enabled'))
    text = answer(host, ' '.join(mig.QUERY))
    assert mig.parse_modes(text) == [
        (0, '0000:41:00.0', 'Disabled', 'Disabled'),
        (2, '0000:c1:00.0', 'Enabled', 'Enabled')]


@host_side
def test_a_pending_mode_is_read_as_pending(simulated):  # noqa: F811
    host = simulated(gpu(ampere=True))
    answer(host, 'nvidia-smi -i 0 -mig 1')
    assert mig.parse_modes(answer(host, ' '.join(mig.QUERY))) == [
        (0, '0000:41:00.0', 'Disabled', 'Enabled')]


@host_side
def test_profiles_and_instances_are_read_from_their_tables(
        simulated):  # noqa: F811
    host = simulated(gpu(mode='enabled'))
    answer(host, 'nvidia-smi mig -cgi 19,19,9 -i 0')
    profiles = mig.parse_profiles(answer(host, 'nvidia-smi mig -lgip'))
    assert profiles[0][:2] == (GiProfile(19, '1g.10gb', 2, 7),
                               GiProfile(20, '1g.10gb+me', 1, 1))
    assert GiProfile(9, '3g.40gb', 0, 2) in profiles[0]
    instances = mig.parse_instances(answer(host, 'nvidia-smi mig -lgi'))
    assert instances == {0: (GpuInstance(1, 19, '1g.10gb', '0:1'),
                             GpuInstance(2, 19, '1g.10gb', '1:1'),
                             GpuInstance(3, 9, '3g.40gb', '4:4'))}


@host_side
def test_placements_are_read_as_the_simulated_host_lists_them(
        simulated):  # noqa: F811
    host = simulated(gpu(mode='enabled'))
    placements = mig.parse_placements(answer(host, 'nvidia-smi mig -lgipp'))
    assert placements[0][19] == ((0, 1, 2, 3, 4, 5, 6), 1)
    assert placements[0][9] == ((0, 4), 4)
    assert placements[0][0] == ((0,), 8)


# -lgipp in NVIDIA's form (MIG User Guide, "Getting Started with MIG"),
# with what may come around it.
LGIPP = ('GPU  0 Profile ID 19 Placements: {0,1,2,3,4,5,6}:1\n'
         'GPU  0 Profile ID  9 Placements: {0,4}:4\n'
         'GPU  0 Profile ID  0 Placement : {0}:8\n'
         'GPU  1 Profile ID 14 Placements: {0,1,2,3}:1\n'
         '\n'
         'No MIG-enabled devices found.\n'
         'GPU  0 Profile ID 15 Placements: {}:2\n'
         'GPU  0 Profile ID  5 Placement : {0}:0\n'
         'GPU  0 Profile ID 21 Placement : {9999}:1\n'
         'GPU  \u0660 Profile ID  3 Placement : {0}:4\n'
         'simulated nvidia-smi mig -lgipp: the simulator does not emulate\n')


def test_placements_in_nvidias_form_are_read_on_every_series():
    assert mig.parse_placements(LGIPP) == {
        0: {19: ((0, 1, 2, 3, 4, 5, 6), 1), 9: ((0, 4), 4), 0: ((0,), 8)},
        1: {14: ((0, 1, 2, 3), 1)}}
    assert mig.parse_placements('') == {}


def test_each_profile_gets_the_placements_listed_for_its_own_id():
    """By the id this GPU gives the profile: 14 is 1g.6gb on an A30."""
    profiles = (GiProfile(14, '1g.6gb', 4, 4), GiProfile(5, '2g.12gb', 2, 2))
    assert mig.with_placements(profiles, {14: ((0, 1, 2, 3), 1)}) == (
        GiProfile(14, '1g.6gb', 4, 4, (0, 1, 2, 3), 1),
        GiProfile(5, '2g.12gb', 2, 2))


def test_bus_ids_are_written_as_lspci_writes_addresses():
    assert mig.address_of('00000000:4F:00.0') == '0000:4f:00.0'
    assert mig.address_of('0000:4f:00.0') == '0000:4f:00.0'


def test_rows_of_other_tables_and_noise_are_not_read():
    assert mig.parse_modes('index, pci.bus_id\nNo devices were found\n') == []
    assert mig.parse_profiles('No MIG-enabled devices found.\n') == {}
    assert mig.parse_instances('+---+\n| GPU instances: |\n') == {}


def test_rows_in_nvidias_columns_are_read_on_every_series():
    modes = ('0, 00000000:41:00.0, Enabled, Enabled\n'
             '1, 00000000:84:00.0, [N/A], [N/A]\n')
    assert mig.parse_modes(modes) == [(0, '0000:41:00.0', 'Enabled',
                                       'Enabled')]
    profiles = ('|   0  MIG 1g.10gb       19     7/7        9.75       No     '
                '16     1     0   |\n'
                '|                                                          '
                ' 1     0     0   |\n')
    assert mig.parse_profiles(profiles) == {0: (
        GiProfile(19, '1g.10gb', 7, 7),)}
    instances = ('|   0  MIG 3g.40gb       9        2          4:4     |\n')
    assert mig.parse_instances(instances) == {0: (
        GpuInstance(2, 9, '3g.40gb', '4:4'),)}


def _gpu(mode, pending, instances=(), profiles=()):
    from nvidia_vgpu.model import MigGpu
    return MigGpu('0000:41:00.0', 0, mode, pending, tuple(profiles),
                  tuple(instances))


@pytest.mark.parametrize('gpu,line', [
    (_gpu('Enabled', 'Enabled', [GpuInstance(1, 19, '1g.10gb', '0:1'),
                                 GpuInstance(3, 9, '3g.40gb', '4:4'),
                                 GpuInstance(2, 19, '1g.10gb', '1:1')]),
     'MIG on 0000:41:00.0: enabled; GPU instances: 3g.40gb x1, 1g.10gb x2'),
    (_gpu('Enabled', 'Enabled'),
     'MIG on 0000:41:00.0: enabled; GPU instances: none (no MIG-backed '
     'type is offered until some exist)'),
    (_gpu('Disabled', 'Enabled'),
     'MIG on 0000:41:00.0: disabled (enabled after the next GPU reset or '
     'reboot)'),
])
def test_list_vgpu_types_shows_each_mig_gpus_mode_and_instances(gpu, line):
    from nvidia_vgpu.nova import type_listing
    results = type_listing.listing([], 'VGPU', mig={gpu.address: gpu})
    assert results['output'].splitlines()[-1] == line
    assert results['mig'][gpu.address]['mode'] == gpu.mode.lower()
    assert type_listing.listing([], 'VGPU').get('mig') is None


def test_list_vgpu_types_says_which_types_each_instance_size_gives():
    from nvidia_vgpu.model import GpuTypes, VgpuType
    from nvidia_vgpu.nova import type_listing
    gpu = _gpu('Enabled', 'Enabled', [GpuInstance(1, 19, '1g.10gb', '0:1'),
                                      GpuInstance(2, 9, '3g.40gb', '4:4')])
    # Three VFs each show one free instance of both types; a vGPU of the
    # 3g.40gb type is on a fourth.
    per_vf = [[VgpuType('nvidia-1130', vf, 'NVIDIA H100XM-1-10C',
                        'max_instance=7', 1),
               VgpuType('nvidia-1133', vf, 'NVIDIA H100XM-3-40C',
                        'max_instance=2', 1)]
              for vf in ('0000:41:00.4', '0000:41:00.5', '0000:41:00.6')]
    offered = [GpuTypes(gpu.address, per_vf, ['nvidia-1133'], sriov=True)]
    results = type_listing.listing(offered, 'VGPU', mig={gpu.address: gpu})
    assert results['output'].splitlines()[-1] == (
        'MIG on 0000:41:00.0: enabled; GPU instances: 3g.40gb x1 giving '
        'H100XM-3-40C (nvidia-1133), 1g.10gb x1 giving H100XM-1-10C '
        '(nvidia-1130)')
    # One vGPU per GPU instance, whatever the VFs show.
    available = {record['type']: record['available_instances']
                 for record in results['types']}
    assert available == {'nvidia-1130': 1, 'nvidia-1133': 0}
