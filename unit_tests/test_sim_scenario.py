"""The simulator refuses scenarios it cannot run, in one line, exit 2."""
import os
import subprocess
import sys

import pytest

from sim import scenario

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A MIG-capable GPU with SR-IOV, whose VFs offer a time-sliced type.
H100 = {'address': '0000:41:00.0', 'vendor': '10de', 'device': '2330',
        'class': '030200', 'sriov': {'total_vfs': 4, 'vf_mdev_types': {
            'nvidia-1100': {'name': 'NVIDIA H100XM-4C'}}}}
WITHOUT_SRIOV = {key: value for key, value in H100.items() if key != 'sriov'}


@pytest.mark.parametrize('data, message', [
    ({'hosts': {}}, "scenario: unknown key 'hosts'"),
    ({'host': {'pci': [{'address': '0000:84:00.0'}]}},
     "host.pci[0]: missing key 'vendor'"),
    ({'host': {'kernel_modules': 'nouveau'}},
     'host.kernel_modules: wrong type str'),
    ({'steps': ['instal']}, "steps[0]: unknown hook 'instal'"),
    ({'steps': [{'reboot': 'yes'}]}, 'steps[0].reboot: expected true'),
    ({'steps': [{'config': {}, 'reboot': True}]},
     'steps[0]: one kind of step per entry'),
    ({'resources': {'nvidia-vgpu-software': {'deb': {'package': 'x'}}}},
     "resources.nvidia-vgpu-software.deb: missing key 'version'"),
    ({'host': {'pci': [{'address': 'a', 'vendor': '10de', 'device': '1',
                        'class': '0302', 'sriov': {'total_vfs': True}}]}},
     'host.pci[0].sriov.total_vfs: wrong type bool'),
    ({'host': {'kernel': {'secure_boot': 'yes'}}},
     'host.kernel.secure_boot: wrong type str'),
    ({'host': {'kernel': {'release': 'latest'}}},
     "host.kernel.release: 'latest' is not a kernel release such as "
     "6.8.0-45-generic"),
    ({'host': {'kernel': {'mok': 'yes'}}},
     'host.kernel.mok: expected one of none, created, imported, enrolled'),
    ({'steps': [{'kernel': {'lockdown': 'full'}}]},
     'steps[0].kernel.lockdown: expected one of none, integrity, '
     'confidentiality'),
    ({'steps': [{'kernel': {'headers': True, 'sig': 1}}]},
     "steps[0].kernel: unknown key 'sig'"),
    ({'resources': {'nvidia-vgpu-software': {'deb': {
        'package': 'x', 'version': '1', 'dkms_source': 'yes'}}}},
     'resources.nvidia-vgpu-software.deb.dkms_source: wrong type str'),
    ({'steps': [{'faults': {'systemctl': 'x'}}]},
     "steps[0].faults: 'systemctl' is not a host command a fault can be "
     "given to (apt-get, dpkg, mdevctl, nvidia-smi, sriov-manage, "
     "update-initramfs)"),
    ({'steps': [{'faults': {'sriov-manage': ''}}]},
     'steps[0].faults.sriov-manage: expected the error text, or null to '
     'clear it'),
    ({'steps': [{'faults': {}}]},
     'steps[0].faults: map host commands to the error text they fail '
     'with, or null'),
    ({'steps': [{'exec': ['/bin/true']}]},
     'steps[0].exec: expected a mapping, got list'),
    ({'steps': [{'exec': {'user': 'nagios'}}]},
     "steps[0].exec: missing key 'argv'"),
    ({'steps': [{'exec': {'argv': []}}]},
     'steps[0].exec.argv: expected a non-empty list of strings'),
    ({'steps': [{'exec': {'argv': ['/bin/check', 3]}}]},
     'steps[0].exec.argv: expected a non-empty list of strings'),
    ({'steps': [{'exec': {'argv': ['check_nvidia_vgpu']}}]},
     "steps[0].exec.argv: 'check_nvidia_vgpu' is not an absolute path on "
     "the host"),
    ({'steps': [{'exec': {'argv': ['/bin/check'], 'user': 0}}]},
     'steps[0].exec.user: wrong type int'),
    ({'steps': [{'exec': {'argv': ['/bin/check'], 'user': 'Nagios Q'}}]},
     "steps[0].exec.user: 'Nagios Q' is not a user name"),
    ({'steps': [{'exec': {'argv': ['/bin/check'], 'as': 'nagios'}}]},
     "steps[0].exec: unknown key 'as'"),
    ({'host': {'pci': [dict(H100, mig={'mode': 'on'})]}},
     'host.pci[0].mig.mode: expected one of enabled, disabled'),
    ({'host': {'pci': [dict(H100, mig={'mode_survives_reboot': 'no'})]}},
     'host.pci[0].mig.mode_survives_reboot: wrong type str'),
    ({'host': {'pci': [dict(H100, mig={'mig_mode': 'enabled'})]}},
     "host.pci[0].mig: unknown key 'mig_mode'"),
    ({'host': {'pci': [dict(H100, vendor='1002', mig={})]}},
     'host.pci[0].mig: only an NVIDIA GPU (vendor 10de) has MIG'),
    ({'host': {'pci': [dict(H100, mig={'gpu_instance_profiles': [
        {'id': 19, 'name': '1g.10gb'}]})]}},
     "host.pci[0].mig.gpu_instance_profiles[0]: missing key 'max'"),
    ({'host': {'pci': [dict(H100, mig={'gpu_instance_profiles': [
        {'id': 19, 'name': '10gb', 'max': 7}]})]}},
     "host.pci[0].mig.gpu_instance_profiles[0].name: '10gb' is not a GPU "
     "instance profile name such as 1g.10gb or 1g.10gb+me"),
    ({'host': {'pci': [dict(H100, mig={'gpu_instance_profiles': [
        {'id': 9, 'name': '3g.40gb', 'max': 3}]})]}},
     'host.pci[0].mig.gpu_instance_profiles[0].max: 3 GPU instances of '
     '3g.40gb take 9 slices; the GPU has 7'),
    ({'host': {'pci': [dict(H100, mig={'slices': 4, 'gpu_instance_profiles': [
        {'id': 0, 'name': '7g.80gb', 'max': 1}]})]}},
     'host.pci[0].mig.gpu_instance_profiles[0].max: 1 GPU instances of '
     '7g.80gb take 7 slices; the GPU has 4'),
    ({'host': {'pci': [dict(H100, mig={'gpu_instance_profiles': [
        {'id': 19, 'name': '1g.10gb', 'max': True}]})]}},
     'host.pci[0].mig.gpu_instance_profiles[0].max: wrong type bool'),
    ({'host': {'pci': [dict(H100, mig={'gpu_instance_profiles': [
        {'id': 19, 'name': '1g.10gb', 'max': 7},
        {'id': 19, 'name': '1g.10gb+me', 'max': 1}]})]}},
     'host.pci[0].mig.gpu_instance_profiles[1]: profile 19 (1g.10gb+me) is '
     'given twice'),
    ({'host': {'pci': [dict(H100, mig={'vgpu_types': {'2g.20gb': {}}})]}},
     "host.pci[0].mig.vgpu_types: '2g.20gb' is not one of the GPU instance "
     "profiles (none)"),
    ({'host': {'pci': [dict(H100, mig={
        'gpu_instance_profiles': [{'id': 19, 'name': '1g.10gb', 'max': 7}],
        'vgpu_types': {'1g.10gb': {'nvidia-1130': {'name': 1}}}})]}},
     'host.pci[0].mig.vgpu_types.1g.10gb.nvidia-1130.name: wrong type int'),
    ({'host': {'pci': [dict(WITHOUT_SRIOV, mig={
        'gpu_instance_profiles': [{'id': 19, 'name': '1g.10gb', 'max': 7}],
        'vgpu_types': {'1g.10gb': {'nvidia-1130': {}}}})]}},
     'host.pci[0].mig.vgpu_types: MIG-backed vGPUs live on VFs; the GPU '
     'needs sriov'),
    ({'host': {'pci': [dict(H100, mig={
        'gpu_instance_profiles': [{'id': 19, 'name': '1g.10gb', 'max': 7}],
        'vgpu_types': {'1g.10gb': {'nvidia-1100': {}}}})]}},
     'host.pci[0].mig.vgpu_types.1g.10gb: nvidia-1100 is given twice'),
])
def test_bad_scenarios_are_named_precisely(data, message):
    with pytest.raises(scenario.ScenarioError) as error:
        scenario.validate(data)
    assert str(error.value) == message


def test_contract_example_steps_are_accepted():
    scenario.validate({'steps': [
        'install', 'config-changed', 'start', 'nova-vgpu-relation-joined',
        'nova-vgpu-relation-changed', 'update-status',
        {'action': 'list-vgpu-types', 'params': {}}, {'reboot': True},
        {'config': {'vgpu-device-mappings': ''}},
        {'attach': {'nvidia-vgpu-software': {'deb': {
            'package': 'nvidia-vgpu-ubuntu-550', 'version': '550.90.05'}}}},
        {'remote': {'nova-vgpu': {'restart-trigger': '6f1c'}}},
        {'relation-departed': 'nova-vgpu'},
        {'guests': {'libvirt_domains': [], 'mdevs': []}},
        {'action': 'restart-services'},
        {'exec': {'argv': ['/usr/local/lib/nagios/plugins/'
                           'check_nvidia_vgpu'], 'user': 'nagios'}}]})


def test_default_steps_are_a_fresh_deployment():
    steps = scenario.default_steps({'relations': {'nova-vgpu': []}})
    assert steps == ['install', 'nova-vgpu-relation-created',
                     'nova-vgpu-relation-joined',
                     'nova-vgpu-relation-changed', 'config-changed', 'start',
                     'update-status']


def test_cli_exits_2_with_one_line_for_an_unreadable_scenario(tmp_path):
    path = tmp_path / 'bad.yaml'
    path.write_text('name: x\ncolour: blue\n')
    done = subprocess.run([sys.executable, '-m', 'sim', str(path)],
                          cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stdout == ''
    assert done.stderr == "sim: scenario: unknown key 'colour'\n"


def test_cli_refuses_config_options_the_charm_does_not_have(tmp_path):
    path = tmp_path / 'bad.yaml'
    path.write_text('config: {vgpu-mappings: x}\nsteps: [install]\n')
    done = subprocess.run([sys.executable, '-m', 'sim', str(path)],
                          cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 2
    assert 'config.vgpu-mappings: not an option of this charm' in \
        done.stderr


def test_faults_and_a_kernel_release_are_accepted():
    scenario.validate({
        'host': {'kernel': {'release': '5.15.0-125-generic'}},
        'steps': [{'faults': {'sriov-manage': 'simulated fault'}},
                  {'faults': {'sriov-manage': None}}]})


def test_the_contracts_mig_example_is_accepted():
    contract = {
        'mode': 'disabled', 'mode_survives_reboot': False,
        'gpu_instance_profiles': [{'id': 19, 'name': '1g.10gb', 'max': 7},
                                  {'id': 9, 'name': '3g.40gb', 'max': 2}],
        'vgpu_types': {'1g.10gb': {'nvidia-1130': {
            'name': 'NVIDIA H100XM-1-10C',
            'description': 'num_heads=0, frl_config=60, framebuffer=10240M, '
                           'max_resolution=0x0, max_instance=1',
            'available_instances': 1}}}}
    scenario.validate({'host': {'pci': [dict(H100, mig=contract)]}})
    # Blackwell's four slices, and the +me and +gfx variants.
    scenario.validate({'host': {'pci': [dict(H100, mig={
        'slices': 4, 'gpu_instance_profiles': [
            {'id': 47, 'name': '1g.24gb+gfx', 'max': 4},
            {'id': 20, 'name': '1g.10gb+me', 'max': 1},
            {'id': 5, 'name': '4g.96gb', 'max': 1}]})]}})
