"""The simulator refuses scenarios it cannot run, in one line, exit 2."""
import os
import subprocess
import sys

import pytest

from sim import scenario

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
