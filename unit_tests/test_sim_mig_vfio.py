"""MIG-backed vGPU types on NVIDIA's vendor-specific VFIO driver in the
simulator (contract, ../shared/spec/simulator.md, the `mig:` block; the
rules and their sources: sim/README.md, "MIG"): on a GPU whose VFs use
sriov.vf_vgpu_types, mig.vgpu_types is {profile: {type number: name}};
while MIG mode is enabled each VF's nvidia/creatable_vgpu_types lists
the MIG-backed types whose profile has a free GPU instance, a type
number written to a VF's current_vgpu_type takes the lowest-id free one
of its profile (or the write is refused, and undone), -dgi refuses a
GPU instance a VF holds, and a reboot or sriov-manage -e leaves no VF
holding one."""
import contextlib
import copy
import errno
import io
import os

import pytest

from sim import host, mig, scenario
from simulation import run_yaml, simulations

GPU = '0000:41:00.0'
VFS = host.vf_addresses(GPU, 4)
DRIVER = {'nvidia-vgpu-ubuntu-550': '550.54.16'}
# An H100 80 GB's profiles as -lgip lists them (compute slices only).
PROFILES = [{'id': 19, 'name': '1g.10gb', 'max': 7},
            {'id': 14, 'name': '2g.20gb', 'max': 3},
            {'id': 9, 'name': '3g.40gb', 'max': 2}]
TIME_SLICED = {1100: 'NVIDIA H100XM-4C'}
MIG_TYPES = {'1g.10gb': {1130: 'NVIDIA H100XM-1-10C'},
             '3g.40gb': {1134: 'NVIDIA H100XM-3-40C'}}
HEADING = 'ID    : vGPU Name'
IN_USE = 'In use by another client'


def gpu(mode='disabled'):
    """An H100 whose VFs use the vendor-specific VFIO driver, with its
    MIG-backed types in that form."""
    return {'address': GPU, 'vendor': '10de', 'device': '2330',
            'class': '030200', 'driver': 'nvidia',
            'sriov': {'total_vfs': 4, 'vf_vgpu_types': dict(TIME_SLICED)},
            'mig': {'mode': mode, 'gpu_instance_profiles': PROFILES,
                    'vgpu_types': copy.deepcopy(MIG_TYPES)}}


@pytest.fixture
def simulated(tmp_path):
    """A set-up simulation of a host with this GPU and the driver loaded
    (no hook run yet)."""
    with simulations(tmp_path) as make:
        yield lambda *gpus, **extra: make({'host': dict(
            {'pci': list(gpus) or [gpu()], 'packages': dict(DRIVER),
             'kernel_modules': ['nvidia']}, **extra)})


def run(simulation, command):
    """A command line as a hook (a process of the charm's) would run it:
    its exit code and what it printed."""
    printed = io.StringIO()
    with contextlib.redirect_stderr(printed):
        code = simulation.run_program(
            ['/bin/sh', '-c', 'exec 3>&2; ({}) 2>&3 1>&3'.format(command)],
            bare=True)
    return code, printed.getvalue().split('\n', 1)[1]


def nvidia_file(simulation, vf, name):
    return os.path.join(host.device_dir(simulation.host_root, vf), 'nvidia',
                        name)


def write_types(simulation, types):
    """One process writes these type numbers to these VFs'
    current_vgpu_type, in this order, as the charm's code does."""
    code, said = run(simulation, ' && '.join(
        'echo {} > {}'.format(number, nvidia_file(simulation, vf,
                                                  'current_vgpu_type'))
        for vf, number in types))
    assert code == 0, said


def creatable(simulation, vf=VFS[0]):
    """A VF's creatable_vgpu_types: its lines after the heading."""
    with open(nvidia_file(simulation, vf, 'creatable_vgpu_types')) as stream:
        lines = stream.read().splitlines()
    assert lines[0] == HEADING
    return lines[1:]


def current(simulation, vf):
    with open(nvidia_file(simulation, vf, 'current_vgpu_type')) as stream:
        return int(stream.read())


def gpu_instance_id(simulation, vf):
    """What reading a VF's gpu_instance_id gives: the id, or the error
    number."""
    try:
        with open(nvidia_file(simulation, vf, 'gpu_instance_id')) as stream:
            return int(stream.read())
    except OSError as error:
        return errno.errorcode[error.errno]


def holders(simulation):
    return simulation.report()['host']['mig'][GPU]['vf_gpu_instances']


def refusals(simulation):
    return simulation.report()['host']['vf_type_refusals']


def enabled_with(simulation, profiles):
    """MIG mode on, the VFs enabled, then these GIs (the host order)."""
    code, said = run(simulation, 'nvidia-smi -i 0 -mig 1 && '
                     'sriov-manage -e ALL && nvidia-smi mig -cgi ' +
                     profiles)
    assert code == 0, said


# ------------------------------------------------------------ the tables

def test_vfs_list_the_mig_backed_types_whose_profile_has_a_free_gi(
        simulated):
    simulation = simulated()
    assert run(simulation, 'sriov-manage -e ALL')[0] == 0
    # MIG disabled: the time-sliced types, as on any GPU of this driver.
    assert creatable(simulation) == ['1100  : NVIDIA H100XM-4C']
    assert run(simulation, 'nvidia-smi -i 0 -mig 1')[0] == 0
    # MIG enabled, no GI: nothing creatable (cubecos, GIs made first).
    assert [creatable(simulation, vf) for vf in VFS] == [[]] * 4
    assert run(simulation, 'nvidia-smi mig -cgi 1g.10gb')[0] == 0
    assert [creatable(simulation, vf) for vf in VFS] == [
        ['1130  : NVIDIA H100XM-1-10C']] * 4
    assert run(simulation, 'nvidia-smi mig -cgi 3g.40gb')[0] == 0
    assert creatable(simulation) == ['1130  : NVIDIA H100XM-1-10C',
                                     '1134  : NVIDIA H100XM-3-40C']
    # No mdev types on this driver, MIG-backed or not.
    assert not os.path.exists(os.path.join(
        host.device_dir(simulation.host_root, VFS[0]),
        'mdev_supported_types'))
    # Untyped VFs: gpu_instance_id is there, and reading it fails.
    assert 'gpu_instance_id' in os.listdir(os.path.dirname(
        nvidia_file(simulation, VFS[0], 'gpu_instance_id')))
    assert [gpu_instance_id(simulation, vf) for vf in VFS] == ['ENXIO'] * 4
    assert holders(simulation) == {}
    assert refusals(simulation) == []


# ---------------------------------------------------------------- typing

def test_typing_a_vf_takes_a_gi_and_the_next_vf_the_next_one(simulated):
    simulation = simulated()
    enabled_with(simulation, '19,19,9')
    write_types(simulation, [(VFS[0], 1130)])
    assert simulation.report()['host']['vf_vgpu_types'] == {VFS[0]: '1130'}
    assert holders(simulation) == {VFS[0]: 1}
    assert gpu_instance_id(simulation, VFS[0]) == 1
    assert gpu_instance_id(simulation, VFS[1]) == 'ENXIO'
    # GI 2 is still free: every VF still lists 1130.
    assert creatable(simulation, VFS[3]) == ['1130  : NVIDIA H100XM-1-10C',
                                             '1134  : NVIDIA H100XM-3-40C']
    write_types(simulation, [(VFS[1], 1130), (VFS[2], 1134)])
    assert holders(simulation) == {VFS[0]: 1, VFS[1]: 2, VFS[2]: 3}
    assert [gpu_instance_id(simulation, vf) for vf in VFS] == [
        1, 2, 3, 'ENXIO']
    # Every GI held: nothing creatable, on typed and untyped VFs alike.
    assert [creatable(simulation, vf) for vf in VFS] == [[]] * 4
    assert refusals(simulation) == []


def test_writing_0_frees_the_gi_and_the_lowest_free_id_is_taken(simulated):
    simulation = simulated()
    enabled_with(simulation, '19,19')
    write_types(simulation, [(VFS[0], 1130), (VFS[1], 1130)])
    write_types(simulation, [(VFS[0], 0)])
    assert holders(simulation) == {VFS[1]: 2}
    assert gpu_instance_id(simulation, VFS[0]) == 'ENXIO'
    assert creatable(simulation) == ['1130  : NVIDIA H100XM-1-10C']
    write_types(simulation, [(VFS[3], 1130)])
    assert holders(simulation) == {VFS[1]: 2, VFS[3]: 1}
    # Freed and taken in one process: the write of 0 goes first.
    write_types(simulation, [(VFS[2], 1130), (VFS[1], 0)])
    assert holders(simulation) == {VFS[2]: 2, VFS[3]: 1}
    assert refusals(simulation) == []


def test_a_write_with_no_free_gi_is_refused_and_undone(simulated):
    simulation = simulated()
    enabled_with(simulation, '1g.10gb')
    simulation._step_index = 3
    write_types(simulation, [(VFS[0], 1130), (VFS[1], 1130),
                             (VFS[2], 1134)])
    assert holders(simulation) == {VFS[0]: 1}
    assert [current(simulation, vf) for vf in VFS] == [1130, 0, 0, 0]
    assert simulation.report()['host']['vf_vgpu_types'] == {VFS[0]: '1130'}
    assert refusals(simulation) == [
        {'step': 3, 'vf': VFS[1], 'type': 1130,
         'why': 'no free GPU instance of profile 1g.10gb on ' + GPU},
        {'step': 3, 'vf': VFS[2], 'type': 1134,
         'why': 'no free GPU instance of profile 3g.40gb on ' + GPU}]
    # A time-sliced type while MIG is enabled, or a number the GPU has
    # not: refused too; a typed VF keeps its type and its GI.
    simulation._step_index = 4
    write_types(simulation, [(VFS[0], 1100), (VFS[3], 4242)])
    assert [current(simulation, vf) for vf in VFS] == [1130, 0, 0, 0]
    assert holders(simulation) == {VFS[0]: 1}
    assert refusals(simulation)[2:] == [
        {'step': 4, 'vf': VFS[0], 'type': 1100,
         'why': 'MIG mode is enabled on {}: time-sliced types are not '
                'creatable'.format(GPU)},
        {'step': 4, 'vf': VFS[3], 'type': 4242,
         'why': 'not a vGPU type of ' + GPU}]


def test_a_refused_write_disrupts_no_guest(simulated):
    simulation = simulated(libvirt_domains=[{'name': 'g',
                                             'pci': [VFS[0]]}])
    enabled_with(simulation, '19')
    write_types(simulation, [(VFS[0], 1130)])
    write_types(simulation, [(VFS[0], 1134)])
    report = simulation.report()['host']
    assert report['vf_vgpu_types'] == {VFS[0]: '1130'}
    assert [refusal['type'] for refusal in report['vf_type_refusals']] == [
        1134]
    assert report['guest_disruptions'] == []


def test_a_mig_backed_type_is_refused_while_mig_is_disabled(simulated):
    simulation = simulated()
    assert run(simulation, 'sriov-manage -e ALL')[0] == 0
    write_types(simulation, [(VFS[0], 1130), (VFS[1], 1100)])
    assert [current(simulation, vf) for vf in VFS[:2]] == [0, 1100]
    assert refusals(simulation) == [
        {'step': 0, 'vf': VFS[0], 'type': 1130,
         'why': 'MIG mode is disabled on {}: MIG-backed types are not '
                'creatable'.format(GPU)}]
    assert holders(simulation) == {}


def test_the_charms_boot_programs_and_hooks_are_processes_alike(simulated):
    """A write from any process is taken when the process ends; one a
    host command sees first (nvidia-smi) is taken before it answers."""
    simulation = simulated()
    enabled_with(simulation, '19')
    code, said = run(simulation, 'echo 1130 > {} && nvidia-smi mig -dgi'
                     .format(nvidia_file(simulation, VFS[0],
                                         'current_vgpu_type')))
    assert code == 255 and IN_USE in said
    assert holders(simulation) == {VFS[0]: 1}


# ------------------------------------------------------------- ownership

def test_dgi_refuses_a_gi_a_vf_holds(simulated):
    simulation = simulated()
    enabled_with(simulation, '19,9')
    write_types(simulation, [(VFS[1], 1134)])
    code, said = run(simulation, 'nvidia-smi mig -dgi -gi 2')
    assert (code, said.splitlines()) == (255, [
        'Unable to destroy GPU instance ID  2 from GPU  0: ' + IN_USE,
        'Failed to destroy GPU instances: ' + IN_USE])
    assert run(simulation, 'nvidia-smi mig -dgi')[0] == 255
    # GI 1, which no VF holds, goes.
    assert run(simulation, 'nvidia-smi mig -dgi -gi 1')[0] == 0
    write_types(simulation, [(VFS[1], 0)])
    assert run(simulation, 'nvidia-smi mig -dgi -gi 2')[0] == 0
    assert simulation.report()['host']['mig'][GPU] == {
        'mode': 'enabled', 'gpu_instances': [], 'vf_gpu_instances': {}}


def test_a_typed_vf_keeps_a_mode_change_pending(simulated):
    """On this driver the type is the vGPU (as an mdev is), guest or
    not: MIG mode cannot change under a VF with a time-sliced type."""
    simulation = simulated()
    assert run(simulation, 'sriov-manage -e ALL')[0] == 0
    write_types(simulation, [(VFS[0], 1100)])
    code, said = run(simulation, 'nvidia-smi -i 0 -mig 1')
    assert code == 255 and IN_USE in said
    assert simulation._load()['host']['mig'][GPU]['mode'] == 'disabled'


def test_a_reboot_leaves_no_type_and_no_gi(simulated):
    simulation = simulated()
    enabled_with(simulation, '19')
    write_types(simulation, [(VFS[0], 1130)])
    with contextlib.redirect_stderr(io.StringIO()):
        simulation._reboot()
    report = simulation.report()['host']
    assert report['vf_vgpu_types'] == {}
    assert report['mig'][GPU] == {'mode': 'disabled', 'gpu_instances': [],
                                  'vf_gpu_instances': {}}
    assert simulation._load()['host']['vf_vgpu_types'] == {}


def test_sriov_manage_enable_resets_the_types_and_gis(simulated):
    simulation = simulated(libvirt_domains=[{'name': 'g', 'pci': [VFS[0]],
                                             'state': 'shutoff'}])
    enabled_with(simulation, '19,19')
    write_types(simulation, [(VFS[0], 1130), (VFS[1], 1130)])
    code, said = run(simulation, 'sriov-manage -e {}'.format(GPU))
    assert code == 0, said
    report = simulation.report()['host']
    assert report['vf_vgpu_types'] == {}
    assert report['mig'][GPU]['gpu_instances'] == []
    assert report['mig'][GPU]['vf_gpu_instances'] == {}
    assert [gpu_instance_id(simulation, vf) for vf in VFS] == ['ENXIO'] * 4
    assert [creatable(simulation, vf) for vf in VFS] == [[]] * 4
    assert report['guest_disruptions'] == [
        {'step': 0, 'guest': 'g', 'cause': 'VF {} vGPU type 1130 -> 0 by '
         'sriov-manage -e {}'.format(VFS[0], GPU)}]
    # The GIs made again: the VFs take them as at first.
    assert run(simulation, 'nvidia-smi mig -cgi 19')[0] == 0
    write_types(simulation, [(VFS[1], 1130)])
    assert holders(simulation) == {VFS[1]: 1}


def test_sriov_manage_disable_frees_the_gis_its_vfs_held(simulated):
    simulation = simulated()
    enabled_with(simulation, '19')
    write_types(simulation, [(VFS[0], 1130)])
    assert run(simulation, 'sriov-manage -d ALL')[0] == 0
    report = simulation.report()['host']
    assert report['mig'][GPU] == {'mode': 'enabled',
                                  'gpu_instances': ['1g.10gb'],
                                  'vf_gpu_instances': {}}
    assert run(simulation, 'nvidia-smi mig -dgi')[0] == 0


# ---------------------------------------------------------------- output

def test_gpus_of_the_other_forms_keep_their_output(simulated):
    """host.mig's vf_gpu_instances and host.vf_type_refusals are only
    there where a GPU uses this form."""
    mdev_form = gpu()
    mdev_form['sriov'] = {'total_vfs': 4}
    del mdev_form['mig']['vgpu_types']
    report = simulated(mdev_form).report()['host']
    assert report['mig'] == {GPU: {'mode': 'disabled',
                                   'gpu_instances': []}}
    assert 'vf_type_refusals' not in report


def test_the_output_of_a_scenario_run(tmp_path):
    """The simulator's own run: the additions are in its JSON."""
    output = run_yaml(tmp_path, """\
host:
  kernel_modules: [nvidia]
  packages: {nvidia-vgpu-ubuntu-550: "550.54.16"}
  pci:
    - address: "0000:41:00.0"
      vendor: "10de"
      device: "2330"
      class: "030200"
      sriov:
        total_vfs: 4
        vf_vgpu_types: {1100: "NVIDIA H100XM-4C"}
      mig:
        mode: enabled
        gpu_instance_profiles: [{id: 19, name: "1g.10gb", max: 7}]
        vgpu_types: {"1g.10gb": {1130: "NVIDIA H100XM-1-10C"}}
steps: []
""")
    assert output['host']['mig'] == {GPU: {
        'mode': 'enabled', 'gpu_instances': [], 'vf_gpu_instances': {}}}
    assert output['host']['vf_type_refusals'] == []


def test_the_state_is_read_back_as_json_gives_it(simulated):
    """Type numbers are text keys once the host state went through JSON:
    the rules read them either way."""
    simulation = simulated()
    function = simulation._load()['host']['pci'][0]
    assert mig.vfio_type_profiles(function) == {1130: '1g.10gb',
                                                1134: '3g.40gb'}
    assert mig.vfio_type_profiles(gpu()) == {1130: '1g.10gb',
                                             1134: '3g.40gb'}


# ------------------------------------- several vGPUs on one GI (Blackwell)

# An RTX PRO 6000 Blackwell's +gfx profiles, and DC-1-12Q: two vGPUs to
# a 1g.24gb+gfx instance (docs/facts/blackwell-mig.md §2-3; the type
# numbers are stand-ins, as in scenarios/mig/rtx-pro-6000-vfio-noble).
BLACKWELL_PROFILES = [{'id': 47, 'name': '1g.24gb+gfx', 'max': 4},
                      {'id': 35, 'name': '2g.48gb+gfx', 'max': 2}]
DC_1_12Q, DC_2_48Q = 90104, 90110


def blackwell():
    return {'address': GPU, 'vendor': '10de', 'device': '2bb5',
            'class': '030200', 'driver': 'nvidia',
            'sriov': {'total_vfs': 4, 'vf_vgpu_types': {
                90100: 'NVIDIA RTX Pro 6000 Blackwell DC-48Q'}},
            'mig': {'mode': 'disabled', 'slices': 4,
                    'gpu_instance_profiles': BLACKWELL_PROFILES,
                    'vgpu_types': {
                        '1g.24gb+gfx': {DC_1_12Q: 'NVIDIA RTX Pro 6000 '
                                        'Blackwell DC-1-12Q'},
                        '2g.48gb+gfx': {DC_2_48Q: 'NVIDIA RTX Pro 6000 '
                                        'Blackwell DC-2-48Q'}},
                    'vgpu_types_per_gi': {DC_1_12Q: 2}}}


def test_vfs_share_a_gi_up_to_the_types_count_per_gi(simulated):
    simulation = simulated(blackwell())
    enabled_with(simulation, '47')
    simulation._step_index = 3
    write_types(simulation, [(VFS[0], DC_1_12Q), (VFS[1], DC_1_12Q)])
    assert holders(simulation) == {VFS[0]: 1, VFS[1]: 1}
    assert [gpu_instance_id(simulation, vf) for vf in VFS[:3]] == [
        1, 1, 'ENXIO']
    # Full: no VF lists the type, and a third write is refused.
    assert creatable(simulation, VFS[2]) == []
    write_types(simulation, [(VFS[2], DC_1_12Q)])
    assert refusals(simulation) == [
        {'step': 3, 'vf': VFS[2], 'type': DC_1_12Q,
         'why': 'no free GPU instance of profile 1g.24gb+gfx on ' + GPU}]
    # A place given back is a place to take.
    write_types(simulation, [(VFS[0], 0), (VFS[2], DC_1_12Q)])
    assert holders(simulation) == {VFS[1]: 1, VFS[2]: 1}


def test_a_shared_gi_holds_one_type_and_is_held_till_its_last_vf_goes(
        simulated):
    simulation = simulated(blackwell())
    enabled_with(simulation, '47,35')
    write_types(simulation, [(VFS[0], DC_1_12Q), (VFS[1], DC_2_48Q)])
    assert holders(simulation) == {VFS[0]: 1, VFS[1]: 2}
    # One of two places on GI 1 is taken: it still takes DC-1-12Q.
    assert creatable(simulation, VFS[2]) == [
        '90104 : NVIDIA RTX Pro 6000 Blackwell DC-1-12Q']
    code, said = run(simulation, 'nvidia-smi mig -dgi -gi 1')
    assert code == 255 and IN_USE in said
    write_types(simulation, [(VFS[0], 0)])
    code, said = run(simulation, 'nvidia-smi mig -dgi -gi 1')
    assert code == 0, said


def test_the_driver_says_where_each_type_goes(simulated):
    """`nvidia-smi vgpu -s -v` of a driver with time-sliced-on-MIG: each
    MIG-backed type's instance profile id and count per instance (and
    per card); N/A for a time-sliced type."""
    simulation = simulated(blackwell())
    code, said = run(simulation, 'nvidia-smi vgpu -s -v')
    assert code == 0
    fields = [line.split(' : ') for line in said.splitlines()[1:]]
    assert [(name.strip(), value) for name, value in fields] == [
        ('vGPU Type ID', '0x15ff4'),
        ('Name', 'NVIDIA RTX Pro 6000 Blackwell DC-48Q'),
        ('GPU Instance Profile ID', 'N/A'),
        ('Max Instances Per GI', 'N/A'),
        ('vGPU Type ID', '0x15ff8'),
        ('Name', 'NVIDIA RTX Pro 6000 Blackwell DC-1-12Q'),
        ('Max Instances', '8'),
        ('GPU Instance Profile ID', '47'),
        ('Max Instances Per GI', '2'),
        ('vGPU Type ID', '0x15ffe'),
        ('Name', 'NVIDIA RTX Pro 6000 Blackwell DC-2-48Q'),
        ('Max Instances', '2'),
        ('GPU Instance Profile ID', '35'),
        ('Max Instances Per GI', '1')]


# ------------------------------------------------------------ validation

@pytest.mark.parametrize('change, message', [
    (lambda function: function['mig']['vgpu_types'].update(
        {'2g.10gb': {1131: 'NVIDIA H100XM-2-10C'}}),
     "host.pci[0].mig.vgpu_types: '2g.10gb' is not one of the GPU instance "
     "profiles (1g.10gb, 2g.20gb, 3g.40gb)"),
    (lambda function: function['mig']['vgpu_types'].update(
        {'1g.10gb': {0: 'NVIDIA H100XM-1-10C'}}),
     'host.pci[0].mig.vgpu_types.1g.10gb: 0 is not a vGPU type number such '
     'as 1130'),
    (lambda function: function['mig']['vgpu_types'].update(
        {'1g.10gb': {'1130': 'NVIDIA H100XM-1-10C'}}),
     "host.pci[0].mig.vgpu_types.1g.10gb: '1130' is not a vGPU type number "
     "such as 1130"),
    (lambda function: function['mig']['vgpu_types'].update(
        {'1g.10gb': {1130: 1130}}),
     'host.pci[0].mig.vgpu_types.1g.10gb.1130: expected the type\'s name, '
     'such as "NVIDIA H100XM-1-10C"'),
    (lambda function: function['mig']['vgpu_types'].update(
        {'1g.10gb': {1100: 'NVIDIA H100XM-1-10C'}}),
     'host.pci[0].mig.vgpu_types.1g.10gb: 1100 is also a time-sliced type '
     '(sriov.vf_vgpu_types)'),
    (lambda function: function['mig']['vgpu_types'].update(
        {'2g.20gb': {1130: 'NVIDIA H100XM-2-20C'}}),
     'host.pci[0].mig.vgpu_types.2g.20gb: 1130 is given twice'),
    (lambda function: function['mig']['vgpu_types'].update(
        {'1g.10gb': {'nvidia-1130': {'name': 'NVIDIA H100XM-1-10C'}}}),
     'host.pci[0].mig.vgpu_types.1g.10gb.nvidia-1130: on a GPU whose VFs '
     'use sriov.vf_vgpu_types (vendor-specific VFIO) MIG-backed types are '
     'given as {type number: name}, e.g. {1130: "NVIDIA H100XM-1-10C"}'),
    (lambda function: function['sriov'].pop('vf_vgpu_types'),
     'host.pci[0].mig.vgpu_types.1g.10gb: the {type number: name} form is '
     'for a GPU whose VFs use sriov.vf_vgpu_types (vendor-specific VFIO); '
     'here each type is a mapping, as in mdev_types'),
    (lambda function: function['mig'].update(
        vgpu_types_per_gi={1131: 2}),
     "host.pci[0].mig.vgpu_types_per_gi: 1131 is not a type number of "
     "vgpu_types"),
    (lambda function: function['mig'].update(
        vgpu_types_per_gi={1130: 0}),
     'host.pci[0].mig.vgpu_types_per_gi.1130: expected 1 or more'),
    (lambda function: (function['sriov'].pop('vf_vgpu_types'),
                       function['mig'].update(vgpu_types={},
                                              vgpu_types_per_gi={})),
     'host.pci[0].mig.vgpu_types_per_gi: only on a GPU whose VFs use '
     'sriov.vf_vgpu_types (vendor-specific VFIO)'),
])
def test_the_form_is_checked(change, message):
    function = gpu()
    change(function)
    with pytest.raises(scenario.ScenarioError) as error:
        scenario.validate({'host': {'pci': [function]}})
    assert str(error.value) == message


def test_no_vf_starts_with_a_mig_backed_type():
    with pytest.raises(scenario.ScenarioError) as error:
        scenario.validate({'host': {'pci': [gpu()],
                                    'vf_vgpu_types': {VFS[0]: 1130}}})
    assert str(error.value) == (
        'host.vf_vgpu_types.{}: 1130 is a MIG-backed type; no GPU instance '
        'exists at the start for it'.format(VFS[0]))
    scenario.validate({'host': {'pci': [gpu()],
                                'vf_vgpu_types': {VFS[0]: 1100}}})


def test_the_contracts_example_is_accepted():
    function = gpu()
    function['sriov']['vf_mdev_types'] = {}
    function['mig']['vgpu_types'] = {'1g.10gb': {1130: 'NVIDIA H100XM-1-10C'},
                                     '3g.40gb': {1134: 'NVIDIA H100XM-3-40C'}}
    scenario.validate({'host': {'pci': [function]}})
