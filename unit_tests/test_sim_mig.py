"""MIG on the simulated host behaves as NVIDIA documents it (contract,
../shared/spec/simulator.md; the rules and their sources: sim/README.md,
"MIG"): the fake nvidia-smi sets the mode (pending while the GPU is in
use, and on Ampere until a reset or a reboot), lists, creates and
destroys GPU instances in seven slices, and the host follows: GPU
instances never survive a reboot or sriov-manage -e, an Ampere GPU
keeps its mode across a reboot and a Hopper one does not, and a VF
offers a MIG-backed vGPU type while a GPU instance of its profile is
free."""
import contextlib
import copy
import io
import os

import pytest

from sim import boot, host, mig
from sim.fakebin.host_commands import nvidia_smi
from simulation import run_yaml, simulations

GPU = '0000:41:00.0'
BUS = '00000000:41:00.0'
VFS = host.vf_addresses(GPU, 4)
DRIVER = {'nvidia-vgpu-ubuntu-550': '550.54.16'}
# GPU instance profiles of an 80 GB A100 or H100, as -lgip lists them,
# with their placements in its 8 memory slices as -lgipp lists them
# (../shared/reference/lifecycle-facts.md section 3).
PROFILES = [
    {'id': 19, 'name': '1g.10gb', 'max': 7, 'placements': list(range(7)),
     'size': 1},
    {'id': 20, 'name': '1g.10gb+me', 'max': 1, 'placements': list(range(7)),
     'size': 1},
    {'id': 15, 'name': '1g.20gb', 'max': 4, 'placements': [0, 2, 4, 6],
     'size': 2},
    {'id': 14, 'name': '2g.20gb', 'max': 3, 'placements': [0, 2, 4],
     'size': 2},
    {'id': 9, 'name': '3g.40gb', 'max': 2, 'placements': [0, 4], 'size': 4},
    {'id': 5, 'name': '4g.40gb', 'max': 1, 'placements': [0], 'size': 4},
    {'id': 0, 'name': '7g.80gb', 'max': 1, 'placements': [0], 'size': 8}]
# The same as a driver without -lgipp lists them: compute slices only.
COUNTED = [{key: value for key, value in profile.items()
            if key in ('id', 'name', 'max')} for profile in PROFILES]
DESCRIPTION = ('num_heads=1, frl_config=60, framebuffer={}M, '
               'max_resolution=4096x2160, max_instance={}')
MIG_TYPES = {
    '1g.10gb': {'nvidia-1130': {'name': 'NVIDIA H100XM-1-10C',
                                'available_instances': 1,
                                'description': DESCRIPTION.format(10240, 7)}},
    '3g.40gb': {'nvidia-1133': {'name': 'NVIDIA H100XM-3-40C',
                                'available_instances': 1,
                                'description': DESCRIPTION.format(40960, 2)}}}
TIME_SLICED = {'nvidia-1100': {'name': 'NVIDIA H100XM-4C',
                               'available_instances': 1,
                               'description': DESCRIPTION.format(4096, 20)}}
UUID_A = '4b20d080-1b54-4048-85b3-a6a62d165c01'
UUID_B = '9f1c2a7e-3d5b-4e8f-a0c6-1b2d3e4f5a6b'


def gpu(address=GPU, device='2330', ampere=False, mode='disabled',
        counted=False):
    """An 80 GB MIG-capable GPU with SR-IOV: H100 (Hopper) by default,
    A100 (Ampere: its mode survives a reboot) with ampere; with counted,
    one whose scenario gives no placements (compute slices only)."""
    return {'address': address, 'vendor': '10de',
            'device': '20b5' if ampere else device, 'class': '030200',
            'driver': 'nvidia',
            'sriov': {'total_vfs': 4, 'vf_mdev_types': TIME_SLICED},
            'mig': {'mode': mode, 'mode_survives_reboot': ampere,
                    'gpu_instance_profiles': COUNTED if counted
                    else PROFILES,
                    'vgpu_types': MIG_TYPES}}


@pytest.fixture
def simulated(tmp_path):
    """A set-up simulation of a host with these GPUs and the driver
    loaded (no hook run yet)."""
    with simulations(tmp_path) as make:
        yield lambda *gpus, **extra: make({'host': dict(
            {'pci': list(gpus), 'packages': dict(DRIVER),
             'kernel_modules': ['nvidia']}, **extra)})


def run(simulation, command, stdout_only=False):
    """A command line as a hook would run it: its exit code and what it
    printed (stdout and stderr; with stdout_only, stdout alone)."""
    printed = io.StringIO()
    errors = '/dev/null' if stdout_only else '&3'
    with contextlib.redirect_stderr(printed):
        code = simulation.run_program(
            ['/bin/sh', '-c', 'exec 3>&2; ({}) 2>{} 1>&3'.format(
                command, errors)], bare=True)
    return code, printed.getvalue().split('\n', 1)[1]


def modes(simulation, gpu_id='0'):
    code, said = run(simulation, 'nvidia-smi -i {} --query-gpu=mig.mode.'
                     'current,mig.mode.pending --format=csv,noheader'.format(
                         gpu_id))
    assert code == 0, said
    return said.strip()


def mig_state(simulation, address=GPU):
    return simulation._load()['host']['mig'][address]


def offered(simulation, vf, type_id):
    """A VF's available_instances of a type; None where it is not
    listed."""
    path = os.path.join(simulation.host_root, 'sys', 'class', 'mdev_bus',
                        vf, 'mdev_supported_types', type_id,
                        'available_instances')
    if not os.path.exists(path):
        return None
    with open(path) as stream:
        return int(stream.read())


def lgip(simulation):
    """Profile name -> Free/Total as -lgip lists them."""
    code, said = run(simulation, 'nvidia-smi mig -lgip')
    assert code == 0, said
    return {line.split()[3]: line.split()[5] for line in said.splitlines()
            if line.startswith('|   0  MIG ')}


# ------------------------------------------------------------------ mode

def test_an_idle_hopper_gpu_changes_mode_at_once(simulated):
    simulation = simulated(gpu())
    assert modes(simulation) == 'Disabled, Disabled'
    code, said = run(simulation, 'nvidia-smi -i 0 -mig 1')
    assert (code, said) == (0, 'Enabled MIG Mode for GPU {}\nAll done.\n'
                            .format(BUS))
    assert modes(simulation) == 'Enabled, Enabled'
    code, said = run(simulation, 'nvidia-smi -i 0 --query-gpu=pci.bus_id,'
                     'mig.mode.current --format=csv')
    assert said == 'pci.bus_id, mig.mode.current\n{}, Enabled\n'.format(BUS)


@pytest.mark.parametrize('gpu_id', ['0', BUS, GPU, BUS.lower()])
def test_a_gpu_is_named_by_index_or_pci_bus_id(simulated, gpu_id):
    simulation = simulated(gpu(), gpu('0000:81:00.0', mode='enabled'))
    assert modes(simulation, gpu_id) == 'Disabled, Disabled'
    assert modes(simulation, '1') == 'Enabled, Enabled'
    code, said = run(simulation, 'nvidia-smi -i 2 -mig 1')
    assert code == 6 and 'simulated nvidia-smi: no GPU 2' in said


def test_mode_stays_pending_while_a_vgpu_uses_the_gpu(simulated):
    simulation = simulated(gpu(), mdevs=[
        {'uuid': UUID_A, 'parent': GPU, 'type': 'nvidia-1100'}])
    code, said = run(simulation, 'nvidia-smi -i 0 -mig 1')
    assert code == 255
    assert said.splitlines()[0] == (
        'Warning: MIG mode is in pending enable state for GPU {}:In use by '
        'another client'.format(BUS))
    assert said.splitlines()[-1] == 'All done.'
    assert modes(simulation) == 'Disabled, Enabled'
    # The reset that would apply it is refused too while the vGPU is there.
    code, said = run(simulation, 'nvidia-smi -i 0 -r')
    assert code == 255 and 'in use (vGPU {}'.format(UUID_A) in said
    simulation.run_step({'guests': {'mdevs': []}})
    assert run(simulation, 'nvidia-smi -i 0 -r')[0] == 0
    assert modes(simulation) == 'Enabled, Enabled'


def test_mig_cannot_be_disabled_while_vfs_are_enabled(simulated):
    simulation = simulated(gpu(mode='enabled'))
    assert run(simulation, 'sriov-manage -e ALL')[0] == 0
    code, said = run(simulation, 'nvidia-smi -i 0 -mig 0')
    assert code == 255
    assert said.startswith('Warning: MIG mode is in pending disable state '
                           'for GPU {}:In use by another client'.format(BUS))
    assert modes(simulation) == 'Enabled, Disabled'
    # Asking for the mode the GPU has cancels what was pending.
    assert run(simulation, 'nvidia-smi -i 0 -mig 1')[0] == 0
    assert modes(simulation) == 'Enabled, Enabled'


def test_a_typed_vf_used_by_a_guest_keeps_the_mode_pending(simulated):
    l40_like = dict(gpu(), sriov={'total_vfs': 4, 'vf_vgpu_types': {
        1148: 'NVIDIA H100-2Q'}})
    # Its MIG-backed types in the vendor-specific VFIO form
    # (unit_tests/test_sim_mig_vfio.py).
    l40_like['mig'] = dict(l40_like['mig'], vgpu_types={
        '1g.10gb': {1130: 'NVIDIA H100XM-1-10C'}})
    simulation = simulated(l40_like, vf_vgpu_types={VFS[0]: 1148},
                           libvirt_domains=[{'name': 'g', 'pci': [VFS[0]]}])
    assert run(simulation, 'sriov-manage -e ALL')[0] == 0
    code, said = run(simulation, 'nvidia-smi -i 0 -mig 1')
    assert code == 255 and 'In use by another client' in said


def test_an_ampere_gpu_needs_a_reset_for_its_mode(simulated):
    simulation = simulated(gpu(ampere=True))
    code, said = run(simulation, 'nvidia-smi -i 0 -mig 1')
    assert (code, said.splitlines()) == (0, [
        'Warning: MIG mode is in pending enable state for GPU {}:Not '
        'Supported'.format(BUS),
        'Reboot the system or try nvidia-smi --gpu-reset to make MIG mode '
        'effective on GPU {}'.format(BUS), 'All done.'])
    assert modes(simulation) == 'Disabled, Enabled'
    code, said = run(simulation, 'nvidia-smi --gpu-reset -i 0')
    assert code == 0
    assert modes(simulation) == 'Enabled, Enabled'


def test_a_gpu_without_mig_says_so(simulated):
    v100 = {'address': '0000:84:00.0', 'vendor': '10de', 'device': '1db4',
            'class': '030200', 'driver': 'nvidia'}
    simulation = simulated(gpu(), v100)
    code, said = run(simulation, 'nvidia-smi -i 1 -mig 1')
    assert code == 3 and 'is not MIG-capable' in said
    assert modes(simulation, '1') == '[N/A], [N/A]'
    # The report names only the MIG-capable GPUs.
    assert list(simulation.report()['host']['mig']) == [GPU]


# ------------------------------------------------------- GPU instances

def test_gpu_instances_need_mig_mode(simulated):
    simulation = simulated(gpu())
    code, said = run(simulation, 'nvidia-smi mig -cgi 19')
    assert code == 3 and 'MIG mode is not enabled on GPU' in said
    assert run(simulation, 'nvidia-smi mig -lgip')[0] == 6
    assert mig_state(simulation)['gpu_instances'] == []


def test_gpu_instances_are_created_listed_and_destroyed(simulated):
    simulation = simulated(gpu(mode='enabled', counted=True))
    code, said = run(simulation, 'nvidia-smi mig -cgi 9,3g.40gb -C')
    assert (code, said.splitlines()) == (0, [
        'Successfully created GPU instance ID  1 on GPU  0 using profile '
        'MIG 3g.40gb (ID  9)',
        'Successfully created compute instance ID  0 on GPU  0 GPU instance '
        'ID  1 using profile MIG 3g.40gb (ID  2)',
        'Successfully created GPU instance ID  2 on GPU  0 using profile '
        'MIG 3g.40gb (ID  9)',
        'Successfully created compute instance ID  0 on GPU  0 GPU instance '
        'ID  2 using profile MIG 3g.40gb (ID  2)'])
    assert run(simulation, 'nvidia-smi mig -i 0 -cgi "MIG 1g.10gb"')[0] == 0
    code, said = run(simulation, 'nvidia-smi mig -lgi -i {}'.format(BUS))
    rows = [line for line in said.splitlines() if line.startswith('|   0')]
    assert rows == [
        '|   0  MIG 1g.10gb      19        3          6:1     |',
        '|   0  MIG 3g.40gb       9        1          0:3     |',
        '|   0  MIG 3g.40gb       9        2          3:3     |']
    assert all(len(line) == 54 for line in said.splitlines())
    code, said = run(simulation, 'nvidia-smi mig -dgi -gi 1')
    assert (code, said) == (
        0, 'Successfully destroyed GPU instance ID  1 from GPU  0\n')
    assert run(simulation, 'nvidia-smi mig -dgi')[0] == 0
    assert run(simulation, 'nvidia-smi mig -lgi')[0] == 6
    assert simulation.report()['host']['mig'] == {
        GPU: {'mode': 'enabled', 'gpu_instances': []}}


def test_creating_stops_at_the_first_that_does_not_fit_keeping_the_rest(
        simulated):
    """As NVIDIA's MIG User Guide shows -cgi failing part way."""
    simulation = simulated(gpu(mode='enabled', counted=True))
    code, said = run(simulation, 'nvidia-smi mig -cgi 9,19,9,19',
                     stdout_only=True)
    assert (code, said.splitlines()[-2:]) == (255, [
        'Unable to create a GPU instance on GPU  0 using profile 19: '
        'Insufficient Resources',
        'Failed to create GPU instances: Insufficient Resources'])
    assert said.splitlines()[:3] == [
        'Successfully created GPU instance ID  {} on GPU  0 using profile '
        'MIG {} (ID {:2d})'.format(number, profile, profile_id)
        for number, profile, profile_id in ((1, '3g.40gb', 9),
                                            (2, '1g.10gb', 19),
                                            (3, '3g.40gb', 9))]
    assert len(mig_state(simulation)['gpu_instances']) == 3
    # More than a profile's max does not fit either.
    assert run(simulation, 'nvidia-smi mig -cgi 19')[0] == 255
    assert run(simulation, 'nvidia-smi mig -dgi')[0] == 0
    assert run(simulation, 'nvidia-smi mig -cgi 20,20')[0] == 255
    assert [gi['profile'] for gi in mig_state(simulation)[
        'gpu_instances']] == ['1g.10gb+me']


def test_lgip_counts_follow_the_slices_left(simulated):
    simulation = simulated(gpu(mode='enabled', counted=True))
    assert lgip(simulation) == {
        '1g.10gb': '7/7', '1g.10gb+me': '1/1', '1g.20gb': '4/4',
        '2g.20gb': '3/3', '3g.40gb': '2/2', '4g.40gb': '1/1',
        '7g.80gb': '1/1'}
    assert run(simulation, 'nvidia-smi mig -cgi 3g.40gb')[0] == 0
    assert lgip(simulation) == {
        '1g.10gb': '4/7', '1g.10gb+me': '1/1', '1g.20gb': '4/4',
        '2g.20gb': '2/3', '3g.40gb': '1/2', '4g.40gb': '1/1',
        '7g.80gb': '0/1'}
    code, said = run(simulation, 'nvidia-smi mig -lgip')
    # NVIDIA's table; N/A where the scenario gives no figures.
    lines = said.splitlines()
    assert {len(line) for line in lines} == {79}
    assert lines[5] == ('|   0  MIG 1g.10gb       19     4/7        N/A'
                        '        N/A   N/A   N/A   N/A   |')


def test_a_longer_profile_name_widens_the_name_column():
    h100 = gpu(mode='enabled')
    h100['mig']['gpu_instance_profiles'] = [
        {'id': 21, 'name': '1g.10gb+me.all', 'max': 1}]
    state = {'host': {'mig': mig.initial([h100])}}
    lines = nvidia_smi.profiles_table(state, [(0, h100)])
    assert {len(line) for line in lines} == {81}
    assert lines[2].index('ID') == 27
    assert lines[5].startswith('|   0  MIG 1g.10gb+me.all  21     1/1 ')


def test_gpu_instances_are_gone_after_sriov_manage_enable_and_a_reboot(
        simulated):
    simulation = simulated(gpu(mode='enabled'), gpu('0000:81:00.0',
                                                    mode='enabled'))
    assert run(simulation, 'nvidia-smi mig -cgi 19,14')[0] == 0
    assert [len(mig_state(simulation, address)['gpu_instances'])
            for address in (GPU, '0000:81:00.0')] == [2, 2]
    assert run(simulation, 'sriov-manage -e {}'.format(GPU))[0] == 0
    assert [len(mig_state(simulation, address)['gpu_instances'])
            for address in (GPU, '0000:81:00.0')] == [0, 2]
    with contextlib.redirect_stderr(io.StringIO()):
        simulation._reboot()
    assert mig_state(simulation, '0000:81:00.0')['gpu_instances'] == []


def test_an_ampere_gpu_keeps_its_mode_across_a_reboot_hopper_does_not():
    a100, h100 = gpu(ampere=True), gpu('0000:81:00.0')
    state = {'pci': [a100, h100], 'mig': mig.initial([a100, h100])}
    for address in (GPU, '0000:81:00.0'):
        state['mig'][address].update(mode='enabled', pending='enabled')
        state['mig'][address]['gpu_instances'].append(
            {'id': 1, 'profile_id': 19, 'profile': '1g.10gb', 'start': 0,
             'size': 1, 'compute_instance': False})
    mig.reboot(state)
    assert mig.summary(state) == {
        GPU: {'mode': 'enabled', 'gpu_instances': [],
              'gpu_instance_placements': []},
        '0000:81:00.0': {'mode': 'disabled', 'gpu_instances': [],
                         'gpu_instance_placements': []}}
    # A pending mode applies at the reboot where the mode survives one.
    state['mig'][GPU]['pending'] = 'disabled'
    state['mig']['0000:81:00.0']['pending'] = 'enabled'
    mig.reboot(state)
    assert [state['mig'][address]['mode']
            for address in (GPU, '0000:81:00.0')] == ['disabled'] * 2


def test_the_reboot_step_and_host_mig_output(tmp_path):
    def gpu_yaml(address, device, ampere):
        return ('    - {{address: "{}", vendor: "10de", device: "{}", '
                'class: "030200",\n       mig: {{mode: enabled, '
                'mode_survives_reboot: {}, gpu_instance_profiles: '
                '[{{id: 19, name: 1g.10gb, max: 7}}]}}}}\n'.format(
                    address, device, ampere))
    output = run_yaml(tmp_path, 'host:\n  pci:\n' +
                      gpu_yaml('0000:81:00.0', '2330', 'false') +
                      gpu_yaml(GPU, '20b5', 'true') +
                      'steps:\n  - reboot: true\n')
    assert output['host']['mig'] == {
        GPU: {'mode': 'enabled', 'gpu_instances': []},
        '0000:81:00.0': {'mode': 'disabled', 'gpu_instances': []}}
    assert 'mig' not in run_yaml(tmp_path, 'steps: []\n')['host']


def test_host_mig_lists_the_profiles_sorted_and_where_each_starts(
        simulated):
    simulation = simulated(gpu(mode='enabled'))
    assert run(simulation, 'nvidia-smi mig -cgi 9,19,19')[0] == 0
    assert simulation.report()['host']['mig'] == {GPU: {
        'mode': 'enabled', 'gpu_instances': ['1g.10gb', '1g.10gb',
                                             '3g.40gb'],
        'gpu_instance_placements': [{'profile': '3g.40gb', 'start': 0},
                                    {'profile': '1g.10gb', 'start': 4},
                                    {'profile': '1g.10gb', 'start': 5}]}}
    # Without placements in the scenario, the output has none.
    simulation = simulated(gpu(mode='enabled', counted=True))
    assert run(simulation, 'nvidia-smi mig -cgi 9,19,19')[0] == 0
    assert 'gpu_instance_placements' not in simulation.report()['host'][
        'mig'][GPU]


# ------------------------------------------------------------ VFs offer

def test_a_vf_offers_a_mig_backed_type_while_a_gpu_instance_is_free(
        simulated):
    simulation = simulated(gpu())
    assert run(simulation, 'sriov-manage -e ALL')[0] == 0
    # MIG disabled: the time-sliced types only.
    assert [offered(simulation, VFS[0], type_id) for type_id in (
        'nvidia-1100', 'nvidia-1130')] == [1, None]
    assert run(simulation, 'nvidia-smi -i 0 -mig 1')[0] == 0
    # MIG enabled: the MIG-backed types, none free without GPU instances.
    assert [offered(simulation, VFS[0], type_id) for type_id in (
        'nvidia-1100', 'nvidia-1130', 'nvidia-1133')] == [None, 0, 0]
    assert run(simulation, 'nvidia-smi mig -cgi 1g.10gb')[0] == 0
    assert [offered(simulation, vf, 'nvidia-1130') for vf in VFS] == [1] * 4
    assert offered(simulation, VFS[0], 'nvidia-1133') == 0
    # A vGPU on VF 0 takes the GPU instance: no VF offers the type now.
    simulation.run_step({'guests': {'mdevs': [
        {'uuid': UUID_A, 'parent': VFS[0], 'type': 'nvidia-1130'}]}})
    assert [offered(simulation, vf, 'nvidia-1130') for vf in VFS] == [0] * 4
    code, said = run(simulation, 'nvidia-smi mig -dgi', stdout_only=True)
    assert (code, said.splitlines()) == (255, [
        'Unable to destroy GPU instance ID  1 from GPU  0: In use by '
        'another client',
        'Failed to destroy GPU instances: In use by another client'])
    # Another GPU instance of the profile: the other VFs offer it again.
    assert run(simulation, 'nvidia-smi mig -cgi 19')[0] == 0
    assert [offered(simulation, vf, 'nvidia-1130') for vf in VFS] == [
        0, 1, 1, 1]
    assert mig.gi_users(simulation._load()['host'], gpu()) == {1: UUID_A}


def test_the_mig_backed_type_created_through_sysfs_takes_its_instance(
        simulated):
    simulation = simulated(gpu(mode='enabled'))
    assert run(simulation, 'sriov-manage -e ALL && '
               'nvidia-smi mig -cgi 19')[0] == 0
    create = os.path.join(simulation.host_root, 'sys', 'class', 'mdev_bus',
                          VFS[2], 'mdev_supported_types', 'nvidia-1130',
                          'create')
    with open(create, 'w') as stream:
        stream.write(UUID_B)
    simulation._collect_created_mdevs()
    assert [offered(simulation, vf, 'nvidia-1130') for vf in VFS] == [0] * 4


# ------------------------------------------------------ what stays as is

def test_other_forms_still_say_they_are_not_emulated(simulated):
    simulation = simulated(gpu(mode='enabled'))
    for command in ('nvidia-smi vgpu', 'nvidia-smi mig -lci',
                    'nvidia-smi --query-gpu=driver_version --format=csv'):
        code, said = run(simulation, command)
        assert (code, said) == (0, 'simulated {}: the simulator does not '
                                'emulate nvidia-smi output\n'.format(command))


def test_nvidia_smi_still_needs_the_driver(simulated):
    simulation = simulated(gpu(), packages={}, kernel_modules=[])
    assert run(simulation, 'nvidia-smi -i 0 -mig 1')[0] == 127
    simulation = simulated(gpu(), kernel_modules=[])
    assert run(simulation, 'nvidia-smi -i 0 -mig 1')[0] == 9


def test_host_state_follows_boot_restart():
    """boot.restart, which every reboot step runs, takes MIG with it."""
    h100 = gpu(mode='enabled')
    state = {'pci': [h100], 'mig': mig.initial([h100]), 'boot_modules': [],
             'packages': {}, 'kernel': host.kernel_state({}, 'jammy'),
             'services': {}, 'reboots': 0}
    boot.restart(state, nouveau_blacklisted=False)
    assert state['mig'][GPU]['mode'] == 'disabled'


# ------------------------------------------------------------ placements

def test_lgipp_lists_each_profiles_placements_in_nvidias_form(simulated):
    code, said = run(simulated(gpu(mode='enabled')),
                     'nvidia-smi mig -lgipp')
    assert (code, said.splitlines()) == (0, [
        'GPU  0 Profile ID 19 Placements: {0,1,2,3,4,5,6}:1',
        'GPU  0 Profile ID 20 Placements: {0,1,2,3,4,5,6}:1',
        'GPU  0 Profile ID 15 Placements: {0,2,4,6}:2',
        'GPU  0 Profile ID 14 Placements: {0,2,4}:2',
        'GPU  0 Profile ID  9 Placements: {0,4}:4',
        'GPU  0 Profile ID  5 Placement : {0}:4',
        'GPU  0 Profile ID  0 Placement : {0}:8'])
    # A scenario without placements: not emulated, as before.
    code, said = run(simulated(gpu(mode='enabled', counted=True)),
                     'nvidia-smi mig -lgipp')
    assert (code, said) == (0, 'simulated nvidia-smi mig -lgipp: the '
                            'simulator does not emulate nvidia-smi output\n')


def test_a_3g_40gb_at_0_leaves_room_for_three_1g_10gb_not_four(simulated):
    """Asked for without a placement, an instance takes the lowest free
    start that fits (one choice a driver may make)."""
    simulation = simulated(gpu(mode='enabled'))
    assert run(simulation, 'nvidia-smi mig -cgi 3g.40gb')[0] == 0
    assert lgip(simulation) == {
        '1g.10gb': '3/7', '1g.10gb+me': '1/1', '1g.20gb': '2/4',
        '2g.20gb': '1/3', '3g.40gb': '1/2', '4g.40gb': '0/1',
        '7g.80gb': '0/1'}
    code, said = run(simulation, 'nvidia-smi mig -cgi 19,19,19,19',
                     stdout_only=True)
    assert (code, said.splitlines()[-2:]) == (255, [
        'Unable to create a GPU instance on GPU  0 using profile 19: '
        'Insufficient Resources',
        'Failed to create GPU instances: Insufficient Resources'])
    assert [(gi['profile'], gi['start'], gi['size']) for gi in mig_state(
        simulation)['gpu_instances']] == [('3g.40gb', 0, 4)] + [
        ('1g.10gb', start, 1) for start in (4, 5, 6)]


def test_an_instance_asked_for_at_a_start_is_made_there_or_not_at_all(
        simulated):
    simulation = simulated(gpu(mode='enabled'))
    code, said = run(simulation, 'nvidia-smi mig -cgi 9:4,19:0,19:1,19:2,'
                     '19:3 -C', stdout_only=True)
    assert code == 0 and said.splitlines()[:2] == [
        'Successfully created GPU instance ID  1 on GPU  0 using profile '
        'MIG 3g.40gb (ID  9)',
        'Successfully created compute instance ID  0 on GPU  0 GPU instance '
        'ID  1 using profile MIG 3g.40gb (ID  2)']
    assert simulation.report()['host']['mig'][GPU][
        'gpu_instance_placements'] == [
        {'profile': '1g.10gb', 'start': start} for start in range(4)] + [
        {'profile': '3g.40gb', 'start': 4}]
    code, said = run(simulation, 'nvidia-smi mig -lgi')
    assert '|   0  MIG 3g.40gb       9        1          4:4     |' in \
        said.splitlines()
    # Over one that exists, or at a start its profile does not have.
    assert run(simulation, 'nvidia-smi mig -dgi -gi 2')[0] == 0
    for token in ('19:4', '19:7', '14:0', '20:0,19:0'):
        code, said = run(simulation, 'nvidia-smi mig -cgi ' + token,
                         stdout_only=True)
        assert (code, said.splitlines()[-1]) == (
            255, 'Failed to create GPU instances: Insufficient Resources')
    # One before the instance that does not fit stays.
    assert [gi['profile'] for gi in mig_state(simulation)[
        'gpu_instances']][-1] == '1g.10gb+me'
    assert run(simulation, 'nvidia-smi mig -cgi 19:x')[0] == 2


def test_a_start_is_a_bad_argument_where_no_placements_are_modelled(
        simulated):
    simulation = simulated(gpu(mode='enabled', counted=True))
    assert run(simulation, 'nvidia-smi mig -cgi 9:4')[0] == 2
    assert mig_state(simulation)['gpu_instances'] == []


@pytest.mark.parametrize('change,message', [
    (lambda spec: spec['gpu_instance_profiles'][0].pop('size'),
     'host.pci[0].mig.gpu_instance_profiles[0]: give placements and size '
     'to every profile, or to none'),
    (lambda spec: spec['gpu_instance_profiles'][1].pop('placements'),
     'host.pci[0].mig.gpu_instance_profiles[1]: give placements and size '
     'to every profile, or to none'),
    (lambda spec: spec['gpu_instance_profiles'][4].update(placements=[0, 0]),
     'host.pci[0].mig.gpu_instance_profiles[4].placements: expected start '
     'memory slices, 0 or more, once each'),
    (lambda spec: spec['gpu_instance_profiles'][4].update(placements=[0, 5]),
     "host.pci[0].mig.gpu_instance_profiles[4]: an instance at 5 takes "
     "memory slices beyond the GPU's 8"),
    (lambda spec: spec['gpu_instance_profiles'][4].update(placements=[0, 2]),
     'host.pci[0].mig.gpu_instance_profiles[4].max: 2 GPU instances of '
     '3g.40gb do not fit at its placements side by side'),
    (lambda spec: spec['gpu_instance_profiles'][0].update(size='1'),
     'host.pci[0].mig.gpu_instance_profiles[0].size: wrong type str'),
    (lambda spec: spec.update(memory_slices=13),
     'host.pci[0].mig.memory_slices: expected 1 to 12'),
    (lambda spec: spec.update(memory_slices=4),
     "host.pci[0].mig.gpu_instance_profiles[0]: an instance at 6 takes "
     "memory slices beyond the GPU's 4"),
    (lambda spec: spec.update(gpu_instance_profiles=COUNTED,
                              memory_slices=8),
     "host.pci[0].mig.memory_slices: only with the profiles' placements "
     "and size"),
])
def test_placements_in_a_scenario_are_checked(change, message):
    from sim import scenario
    function = copy.deepcopy(gpu())
    change(function['mig'])
    with pytest.raises(scenario.ScenarioError) as error:
        scenario.validate({'host': {'pci': [function]}})
    assert str(error.value) == message


def test_the_contracts_placements_are_accepted():
    from sim import scenario
    function = gpu()
    function['mig']['memory_slices'] = 8
    scenario.validate({'host': {'pci': [function]}})
    # The contract's own example: two profiles, placements and size.
    function['mig'] = {'gpu_instance_profiles': [
        {'id': 19, 'name': '1g.10gb', 'max': 7,
         'placements': [0, 1, 2, 3, 4, 5, 6], 'size': 1},
        {'id': 9, 'name': '3g.40gb', 'max': 2, 'placements': [0, 4],
         'size': 4}], 'memory_slices': 8}
    scenario.validate({'host': {'pci': [function]}})
