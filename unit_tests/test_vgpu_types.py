"""Reading vGPU types, mdevs and guests' vGPUs from a host's files."""
import os

import pytest

from nvidia_vgpu import vgpu_types
from nvidia_vgpu.host import hostfs, libvirt, sysfs
from sim import host as simhost
from nvidia_vgpu import model

V100_8Q = ('num_heads=4, frl_config=60, framebuffer=8192M, '
           'max_resolution=7680x4320, max_instance=2')
T4_16C = ('num_heads=1, frl_config=60, framebuffer=16384M, '
          'max_resolution=4096x2160, max_instance=1')


@pytest.mark.parametrize('description, expected', [
    (V100_8Q, {'num_heads': '4', 'frl_config': '60',
               'framebuffer': '8192M', 'max_resolution': '7680x4320',
               'max_instance': '2'}),
    ('framebuffer=4096M,max_instance=6', {'framebuffer': '4096M',
                                          'max_instance': '6'}),
    ('num_heads=4,\nframebuffer=1024M', {'num_heads': '4',
                                         'framebuffer': '1024M'}),
    ('', {}),
    ('no pairs here', {}),
])
def test_driver_descriptions_are_parsed(description, expected):
    assert vgpu_types.parse_description(description) == expected


def test_records_and_table_lead_with_type_and_address():
    record = vgpu_types.as_record(model.VgpuType(
        'nvidia-108', '0000:84:00.0', 'GRID V100-8Q', V100_8Q, 2),
        '0000:84:00.0')
    assert record == {
        'type': 'nvidia-108', 'address': '0000:84:00.0',
        'gpu': '0000:84:00.0', 'name': 'GRID V100-8Q',
        'available_instances': 2, 'framebuffer': '8192M',
        'max_instance': '2', 'num_heads': '4',
        'max_resolution': '7680x4320'}
    assert vgpu_types.table([record]) == (
        'nvidia-108, 0000:84:00.0, GRID V100-8Q, framebuffer=8192M, '
        'max_instance=2, num_heads=4, max_resolution=7680x4320, '
        'available=2')


@pytest.fixture
def host_root(tmp_path, monkeypatch):
    monkeypatch.setenv(hostfs.HOST_ROOT_VARIABLE, str(tmp_path))
    return str(tmp_path)


T4 = {'address': '0000:af:00.0', 'vendor': '10de', 'device': '1eb8',
      'class': '030200', 'mdev_types': {
          'nvidia-234': {'name': 'GRID T4-16C', 'description': T4_16C,
                         'available_instances': 1},
          'nvidia-222': {'name': 'GRID T4-1B', 'available_instances': 16,
                         'description': 'num_heads=4, frl_config=45, '
                         'framebuffer=1024M, max_resolution=5120x2880, '
                         'max_instance=16'}}}


def test_sysfs_types_of_one_device(host_root):
    simhost.generate_sysfs(host_root, [T4], {'nvidia_loaded': True})
    types = sysfs.read_mdev_types('0000:af:00.0')
    assert [t.type_id for t in types] == ['nvidia-222', 'nvidia-234']
    assert types[1] == model.VgpuType(
        'nvidia-234', '0000:af:00.0', 'GRID T4-16C', T4_16C, 1)
    assert sysfs.mdev_types('0000:af:00.0') == {'nvidia-222', 'nvidia-234'}
    assert sysfs.mdev_type_names('0000:af:00.0') == {
        'nvidia-222': 'GRID T4-1B', 'nvidia-234': 'GRID T4-16C'}


def test_no_types_before_the_driver_loads(host_root):
    simhost.generate_sysfs(host_root, [T4], {'nvidia_loaded': False})
    assert sysfs.read_mdev_types('0000:af:00.0') == []
    assert sysfs.mdev_types('0000:af:00.0') == set()
    assert sysfs.mdev_type_names('0000:af:00.0') == {}


def test_mediated_devices_and_the_guests_using_them(host_root):
    uuid = '4b20d080-1b54-4048-85b3-a6a62d165c01'
    simhost.generate_sysfs(host_root, [T4], {
        'nvidia_loaded': True,
        'mdevs': [{'uuid': uuid, 'parent': '0000:af:00.0',
                   'type': 'nvidia-234'}]})
    assert sysfs.mediated_devices() == [
        model.Mdev(uuid, '0000:af:00.0', 'nvidia-234')]
    simhost.write_libvirt_domains(host_root, [
        {'name': 'instance-0000002a', 'mdevs': [uuid.upper()]},
        {'name': 'instance-0000002b'}])
    with open(os.path.join(host_root, 'etc/libvirt/qemu/broken.xml'),
              'w') as stream:
        stream.write('<domain><name>')
    assert libvirt.definitions().mdevs == {uuid: ['instance-0000002a']}


def test_no_mdevs_and_no_guests_on_a_fresh_host(host_root):
    assert sysfs.mediated_devices() == []
    assert libvirt.definitions().mdevs == {}
    assert libvirt.running_domains() == frozenset()


def test_running_guests_are_those_libvirt_keeps_live_state_for(host_root):
    uuid = '4b20d080-1b54-4048-85b3-a6a62d165c01'
    simhost.write_libvirt_domains(host_root, [
        {'name': 'instance-0000002a', 'mdevs': [uuid]},
        {'name': 'instance-0000002b', 'mdevs': [uuid], 'state': 'shutoff'}])
    # Both definitions use the vGPU; only one guest runs.
    assert libvirt.definitions().mdevs == {
        uuid: ['instance-0000002a', 'instance-0000002b']}
    assert libvirt.running_domains() == frozenset({'instance-0000002a'})


@pytest.mark.parametrize('description, expected', [
    (V100_8Q, 2), (T4_16C, 1), ('framebuffer=4096M', None),
    ('max_instance=many', None)])
def test_max_instance_from_the_description(description, expected):
    assert vgpu_types.max_instance(description) == expected


def test_an_sriov_gpus_types_are_listed_once_for_the_gpu():
    def vf(address, available):
        return [model.VgpuType('nvidia-697', address, 'GRID A100D-40C',
                               'framebuffer=40960M, max_instance=2',
                               available)]
    records = vgpu_types.gpu_records('0000:41:00.0', [
        vf('0000:41:00.4', 1), vf('0000:41:00.5', 0), vf('0000:41:00.6', 1)])
    assert [(r['type'], r['address'], r['available_instances'], r['vfs'])
            for r in records] == [('nvidia-697', '0000:41:00.0', 2, 3)]
    assert vgpu_types.table(records) == (
        'nvidia-697, 0000:41:00.0, GRID A100D-40C, framebuffer=40960M, '
        'max_instance=2, available=2 on 3 VFs')


def test_sriov_capability_is_read_from_sysfs(host_root):
    a100 = {'address': '0000:41:00.0', 'vendor': '10de', 'device': '20b5',
            'class': '030200', 'sriov': {'total_vfs': 16}}
    simhost.generate_sysfs(host_root, [a100, T4], {})
    assert sysfs.sriov_total_vfs('0000:41:00.0') == 16
    assert sysfs.sriov_total_vfs('0000:af:00.0') == 0
    assert sysfs.sriov_virtual_functions('0000:41:00.0') == []
    simhost.generate_sysfs(host_root, [a100], {
        'nvidia_loaded': True, 'vfs': {'0000:41:00.0': 10}})
    vfs = sysfs.sriov_virtual_functions('0000:41:00.0')
    assert len(vfs) == 10
    # virtfn10 sorts after virtfn9, not after virtfn1.
    assert vfs[-2:] == ['0000:41:01.4', '0000:41:01.5']


def test_vendor_vfio_type_table_and_setting_a_vfs_type(host_root):
    l40s = {'address': '0000:41:00.0', 'vendor': '10de', 'device': '26b9',
            'class': '030200', 'sriov': {'total_vfs': 2, 'vf_vgpu_types': {
                1145: 'NVIDIA L40S-1B', 1148: 'NVIDIA L40S-2Q'}}}
    simhost.generate_sysfs(host_root, [l40s], {
        'nvidia_loaded': True, 'vfs': {'0000:41:00.0': 2}})
    assert sysfs.creatable_vgpu_types('0000:41:00.4') == {
        1145: 'NVIDIA L40S-1B', 1148: 'NVIDIA L40S-2Q'}
    assert sysfs.creatable_vgpu_types('0000:41:00.0') is None
    assert sysfs.device_id('0000:41:00.4') == '26b9'
    from nvidia_vgpu.driver import restore
    assert restore.apply_vf_types({'0000:41:00.4': 1148}) == [
        '0000:41:00.4']
    assert restore.apply_vf_types({'0000:41:00.4': 1148}) == []
    assert not os.path.exists(os.path.join(
        host_root, 'sys', 'class', 'mdev_bus'))
