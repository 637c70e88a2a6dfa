"""GPU discovery from lspci -Dmmnn: which functions are NVIDIA GPUs."""
import os

import pytest

from nvidia_vgpu.host import pci
from nvidia_vgpu import model, status

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data',
                    'lspci')


def fixture(name):
    with open(os.path.join(DATA, name + '.txt')) as stream:
        return stream.read()


def gpus_of(name, virtual_functions=()):
    return pci.nvidia_gpus(pci.parse_lspci(fixture(name)), virtual_functions)


@pytest.mark.parametrize('host, addresses, description', [
    ('t4', ['0000:3b:00.0', '0000:af:00.0'], '2 NVIDIA GPUs (Tesla T4)'),
    ('v100', ['0000:18:00.0', '0000:3b:00.0', '0000:86:00.0',
              '0000:af:00.0'],
     '4 NVIDIA GPUs (3 Tesla V100 PCIe 16GB, 1 Tesla V100 PCIe 32GB)'),
    ('a100-nvswitch', ['0000:07:00.0', '0000:0f:00.0', '0000:47:00.0',
                       '0000:4e:00.0'], '4 NVIDIA GPUs (A100 SXM4 80GB)'),
    ('h100', ['0000:18:00.0', '0000:2a:00.0'],
     '2 NVIDIA GPUs (H100 SXM5 80GB)'),
    ('rtx6000-audio', ['0000:41:00.0'],
     '1 NVIDIA GPU (Quadro RTX 6000/8000)'),
    ('a100-pcie-real', ['0000:41:00.0'], '1 NVIDIA GPU (A100 PCIe 40GB)'),
    ('none', [], 'no NVIDIA GPU'),
])
def test_gpus_found_on_real_lspci_outputs(host, addresses, description):
    gpus = gpus_of(host)
    assert [gpu.address for gpu in gpus] == addresses
    assert status.describe_gpus(gpus) == description


def test_nvswitch_audio_usb_and_serial_functions_are_not_gpus():
    functions = pci.parse_lspci(fixture('rtx6000-audio') +
                                fixture('a100-nvswitch'))
    not_gpus = {function.address: function.class_id
                for function in functions
                if function.vendor_id == '10de' and
                not function.is_nvidia_gpu}
    assert not_gpus == {'0000:41:00.1': '0403', '0000:41:00.2': '0c03',
                        '0000:41:00.3': '0c80', '0000:c4:00.0': '0680',
                        '0000:c5:00.0': '0680'}


def test_nvidia_networking_nics_are_not_gpus():
    # ConnectX boards are sold as NVIDIA networking but keep vendor 15b3.
    functions = pci.parse_lspci(fixture('none'))
    assert any(f.vendor_id == '15b3' for f in functions)
    assert pci.nvidia_gpus(functions) == []


def test_virtual_functions_are_left_out():
    lines = fixture('a100-pcie-real') + (
        '0000:41:00.4 "3D controller [0302]" "NVIDIA Corporation [10de]" '
        '"GA100 [A100 PCIe 40GB] [20f1]" -ra1 "NVIDIA Corporation [10de]" '
        '"Device [145f]"\n')
    functions = pci.parse_lspci(lines)
    assert len(functions) == 2
    gpus = pci.nvidia_gpus(functions, virtual_functions={'0000:41:00.4'})
    assert [gpu.address for gpu in gpus] == ['0000:41:00.0']


def test_fields_are_kept_for_status_and_actions():
    t4 = gpus_of('t4')[0]
    assert t4 == model.PciFunction(
        address='0000:3b:00.0', class_id='0302', vendor_id='10de',
        device_id='1eb8', subsystem_vendor_id='10de',
        subsystem_device_id='12a2', revision='a1',
        class_name='3D controller', vendor_name='NVIDIA Corporation',
        device_name='TU104GL [Tesla T4]')
    assert t4.model == 'Tesla T4'


def test_board_unknown_to_the_name_database_is_named_by_id():
    function = pci.parse_lspci(
        '0000:05:00.0 "3D controller [0302]" "NVIDIA Corporation [10de]" '
        '"Device [2335]" -ra1 "NVIDIA Corporation [10de]" "Device [18be]"'
    )[0]
    assert function.is_nvidia_gpu
    assert function.model == 'device 10de:2335'


def test_numeric_only_output_is_understood():
    function = pci.parse_lspci(
        '0000:af:00.0 "0302" "10de" "1eb8" -ra1 "10de" "12a2"')[0]
    assert (function.class_id, function.vendor_id, function.device_id,
            function.subsystem_device_id) == ('0302', '10de', '1eb8', '12a2')
    assert function.is_nvidia_gpu


@pytest.mark.parametrize('line', [
    '',
    'af:00.0 "0302" "10de" "1eb8" -ra1 "10de" "12a2"',  # no domain (-D)
    '0000:af:00.0 3D controller: NVIDIA Corporation TU104GL',  # not -mm
    'pcilib: Cannot open /sys/bus/pci/devices/0000:af:00.0/config',
])
def test_lines_that_are_not_functions_are_skipped(line):
    assert pci.parse_lspci(line) == []


def test_upper_case_ids_are_normalised():
    function = pci.parse_lspci(
        '0000:AF:00.0 "0302" "10DE" "1EB8" -ra1 "10DE" "12A2"')[0]
    assert function.address == '0000:af:00.0'
    assert function.is_nvidia_gpu


def test_list_functions_runs_lspci_machine_readable(fake_commands):
    fake_commands.set('lspci', stdout=fixture('t4'))
    assert len(pci.list_functions()) == 4
    assert fake_commands.calls == [['lspci', '-Dmmnn']]
