"""The simulated host is read by the real tools: lspci and dpkg-deb."""
import hashlib
import os
import subprocess

from sim import boot, host, noise

V100 = {'address': '0000:84:00.0', 'vendor': '10de', 'device': '1db4',
        'class': '030200', 'subsystem_vendor': '10de',
        'subsystem_device': '1214'}
A40 = {'address': '0000:41:00.0', 'vendor': '10de', 'device': '2235',
       'class': '030200', 'sriov': {'total_vfs': 32, 'vf_mdev_types': {
           'nvidia-556': {'name': 'NVIDIA A40-4Q', 'available_instances': 1,
                          'description': 'framebuffer=4096M'}}}}
NIC = {'address': '0000:31:00.0', 'vendor': '15b3', 'device': '101d',
       'class': '020000'}


def lspci(root, *args):
    return subprocess.run(
        ['lspci', '-A', 'linux-sysfs', '-O',
         'sysfs.path={}/sys/bus/pci'.format(root)] + list(args),
        capture_output=True, text=True, check=True)


def test_real_lspci_reads_the_generated_tree(tmp_path):
    host.generate_sysfs(str(tmp_path), [V100, NIC], {})
    done = lspci(tmp_path, '-Dmmn')
    assert done.stderr == ''
    assert done.stdout.splitlines() == [
        '0000:31:00.0 "0200" "15b3" "101d" -ra1 -p00 "" ""',
        '0000:84:00.0 "0302" "10de" "1db4" -ra1 -p00 "10de" "1214"',
    ]


def test_vfs_exist_only_once_enabled_and_point_at_their_pf(tmp_path):
    host.generate_sysfs(str(tmp_path), [A40], {'nvidia_loaded': True})
    assert len(lspci(tmp_path, '-Dmmn').stdout.splitlines()) == 1
    pf = host.device_dir(str(tmp_path), A40['address'])
    with open(os.path.join(pf, 'sriov_totalvfs')) as stream:
        assert stream.read() == '32\n'

    host.generate_sysfs(str(tmp_path), [A40],
                        {'nvidia_loaded': True, 'vfs': {A40['address']: 4}})
    lines = lspci(tmp_path, '-Dmmn').stdout.splitlines()
    assert [line.split()[0] for line in lines] == [
        '0000:41:00.0', '0000:41:00.4', '0000:41:00.5', '0000:41:00.6',
        '0000:41:00.7']
    vf = os.path.join(str(tmp_path), 'sys', 'bus', 'pci', 'devices',
                      '0000:41:00.4')
    assert os.path.realpath(os.path.join(vf, 'physfn')) == pf
    assert os.path.isdir(os.path.join(
        str(tmp_path), 'sys', 'class', 'mdev_bus', '0000:41:00.4',
        'mdev_supported_types', 'nvidia-556'))
    assert not os.path.exists(os.path.join(pf, 'mdev_supported_types'))


def test_vf_numbering_crosses_into_the_next_slot():
    assert host.vf_addresses('0000:51:00.0', 6)[-2:] == [
        '0000:51:01.0', '0000:51:01.1']


def test_mdev_types_appear_only_with_the_driver_loaded(tmp_path):
    v100 = dict(V100, mdev_types={'nvidia-108': {
        'name': 'GRID V100-8Q', 'available_instances': 2,
        'description': 'num_heads=4, framebuffer=8192M'}})
    host.generate_sysfs(str(tmp_path), [v100], {'nvidia_loaded': False})
    types = os.path.join(str(tmp_path), 'sys', 'class', 'mdev_bus')
    assert not os.path.exists(types)
    host.generate_sysfs(str(tmp_path), [v100], {'nvidia_loaded': True})
    type_dir = os.path.join(types, '0000:84:00.0', 'mdev_supported_types',
                            'nvidia-108')
    with open(os.path.join(type_dir, 'name')) as stream:
        assert stream.read() == 'GRID V100-8Q\n'
    driver = os.path.join(host.device_dir(str(tmp_path), '0000:84:00.0'),
                          'driver')
    assert os.path.basename(os.path.realpath(driver)) == 'nvidia'


def test_built_deb_is_real_and_reproducible(tmp_path):
    spec = {'package': 'nvidia-vgpu-ubuntu-550', 'version': '550.54.16'}
    first = host.build_deb(str(tmp_path / 'a'), spec)
    second = host.build_deb(str(tmp_path / 'b'), spec)
    with open(first, 'rb') as one, open(second, 'rb') as two:
        assert hashlib.sha256(one.read()).digest() == \
            hashlib.sha256(two.read()).digest()
    fields = subprocess.run(['dpkg-deb', '-f', first, 'Package', 'Version'],
                            capture_output=True, text=True, check=True)
    assert fields.stdout == ('Package: nvidia-vgpu-ubuntu-550\n'
                             'Version: 550.54.16\n')
    listing = subprocess.run(['dpkg-deb', '-c', first], capture_output=True,
                             text=True, check=True).stdout
    assert './lib/systemd/system/nvidia-vgpu-mgr.service' in listing


def _entries(directory):
    return sum(len(dirs) + len(files) for _, dirs, files in
               os.walk(directory))


def test_server_noise_is_as_large_as_asked_and_holds_no_vgpu_types(
        tmp_path):
    written = noise.populate(str(tmp_path / 'sys'), 3000)
    devices = str(tmp_path / 'sys' / 'devices')
    assert 3000 <= written <= 3100
    assert _entries(devices) == written
    names = {name for _, dirs, files in os.walk(devices)
             for name in dirs + files}
    assert {'cpu0', 'memory0', 'queues', 'msi_irqs', 'nvme0n1'} <= names
    assert 'mdev_supported_types' not in names


def test_server_noise_is_the_same_every_time(tmp_path):
    trees = []
    for name in ('one', 'two'):
        noise.populate(str(tmp_path / name / 'sys'), 2000)
        trees.append(sorted(
            os.path.relpath(os.path.join(top, entry), str(tmp_path / name))
            for top, dirs, files in os.walk(str(tmp_path / name))
            for entry in dirs + files))
    assert trees[0] == trees[1]


def test_noise_leaves_the_gpus_and_lspci_alone(tmp_path):
    host.generate_sysfs(str(tmp_path / 'plain'), [V100, NIC], {})
    host.generate_sysfs(str(tmp_path / 'busy'), [V100, NIC],
                        {'sysfs_noise': 2000})
    assert lspci(tmp_path / 'busy', '-Dmmnn').stdout == lspci(
        tmp_path / 'plain', '-Dmmnn').stdout
    assert _entries(str(tmp_path / 'busy' / 'sys' / 'devices')) > 2000


A40_TYPES = {
    'nvidia-557': {'name': 'NVIDIA A40-2Q', 'available_instances': 1,
                   'description': 'framebuffer=2048M, max_instance=24'},
    'nvidia-566': {'name': 'NVIDIA A40-48Q', 'available_instances': 1,
                   'description': 'framebuffer=49152M, max_instance=1'}}


def available(root, vf, type_id):
    path = os.path.join(root, 'sys', 'class', 'mdev_bus', vf,
                        'mdev_supported_types', type_id,
                        'available_instances')
    with open(path) as stream:
        return int(stream.read())


def test_a_vf_hosting_a_vgpu_shows_no_free_instance(tmp_path):
    a40 = dict(A40, sriov={'total_vfs': 32, 'vf_mdev_types': A40_TYPES})
    vfs = host.vf_addresses(A40['address'], 32)
    host.generate_sysfs(str(tmp_path), [a40], {
        'nvidia_loaded': True, 'vfs': {A40['address']: 32},
        'mdevs': [{'uuid': 'u{}'.format(i), 'parent': vf,
                   'type': 'nvidia-557'} for i, vf in enumerate(vfs[:3])]})
    assert [available(tmp_path, vf, 'nvidia-557') for vf in vfs[:5]] == [
        0, 0, 0, 1, 1]
    # A GPU runs one type at a time.
    assert available(tmp_path, vfs[4], 'nvidia-566') == 0


def test_once_a_gpu_hosts_its_maximum_every_vf_shows_zero(tmp_path):
    a40 = dict(A40, sriov={'total_vfs': 32, 'vf_mdev_types': A40_TYPES})
    vfs = host.vf_addresses(A40['address'], 32)
    host.generate_sysfs(str(tmp_path), [a40], {
        'nvidia_loaded': True, 'vfs': {A40['address']: 32},
        'mdevs': [{'uuid': 'u{}'.format(i), 'parent': vf,
                   'type': 'nvidia-557'} for i, vf in enumerate(vfs[:24])]})
    assert sum(available(tmp_path, vf, 'nvidia-557') for vf in vfs) == 0


def test_without_vgpus_every_vf_shows_what_the_scenario_says(tmp_path):
    a40 = dict(A40, sriov={'total_vfs': 32, 'vf_mdev_types': A40_TYPES})
    vfs = host.vf_addresses(A40['address'], 32)
    host.generate_sysfs(str(tmp_path), [a40], {
        'nvidia_loaded': True, 'vfs': {A40['address']: 32}})
    assert sum(available(tmp_path, vf, 'nvidia-557') for vf in vfs) == 32


def test_a_full_gpu_counts_vgpus_from_the_scenarios_start():
    types = {'nvidia-108': {'available_instances': 1,
                            'description': 'max_instance=2'},
             'nvidia-105': {'available_instances': 16}}
    one = {'uuid': 'a', 'parent': V100['address'], 'type': 'nvidia-108'}
    two = dict(one, uuid='b')
    elsewhere = dict(one, uuid='c', parent='0000:85:00.0')
    # As the scenario gives it while the start's vGPU is there.
    assert host.full_gpu_available(types, V100['address'], [one, elsewhere],
                                   [one]) == {'nvidia-108': 1,
                                              'nvidia-105': 16}
    assert host.full_gpu_available(types, V100['address'], [one, two],
                                   [one])['nvidia-108'] == 0
    # The guest's vGPU gone: one back, never past max_instance.
    assert host.full_gpu_available(types, V100['address'], [],
                                   [one])['nvidia-108'] == 2
    assert host.full_gpu_available(
        {'nvidia-108': {'available_instances': 2,
                        'description': 'max_instance=2'}},
        V100['address'], [], [one])['nvidia-108'] == 2


def _kernel_host(tmp_path, packages=None, **kernel):
    state = {'kernel': host.kernel_state(kernel, 'noble'),
             'packages': dict(packages or {})}
    host.generate_sysfs(str(tmp_path), [], {'kernel': state['kernel']})
    host.write_kernel_files(str(tmp_path), state)
    return state


def test_kernel_defaults_are_the_series_kernel_with_headers_no_secure_boot():
    assert host.kernel_state({}, 'jammy') == {
        'release': '5.15.0-119-generic', 'headers': True,
        'secure_boot': False, 'lockdown': 'none', 'mok': 'none'}
    assert host.kernel_state({'secure_boot': True}, 'noble')['lockdown'] \
        == 'integrity'
    assert set(host.DEFAULT_KERNELS) == {'bionic', 'focal', 'jammy',
                                         'noble'}


def test_the_charms_readers_see_the_simulated_kernel(tmp_path, monkeypatch):
    # The simulated files are read by the charm's own host readers.
    from nvidia_vgpu.host import hostfs, kernel, secure_boot
    monkeypatch.setenv(hostfs.HOST_ROOT_VARIABLE, str(tmp_path))
    state = _kernel_host(tmp_path, headers=False, secure_boot=True,
                         mok='created')
    assert kernel.running_release() == '6.8.0-45-generic'
    assert kernel.headers_installed('6.8.0-45-generic') is False
    assert secure_boot.secure_boot_enabled() is True
    assert secure_boot.lockdown() == 'integrity'
    assert secure_boot.certificate_exists(host.MOK_CERTIFICATE) is True
    # linux-headers-<release> installed: its build link appears, inside
    # the sandbox (relative), and goes again with the package.
    state['packages']['linux-headers-6.8.0-45-generic'] = '6.8.0-45.45'
    host.write_kernel_files(str(tmp_path), state)
    assert kernel.headers_installed('6.8.0-45-generic') is True
    link = tmp_path / 'lib/modules/6.8.0-45-generic/build'
    assert not os.readlink(str(link)).startswith('/')
    del state['packages']['linux-headers-6.8.0-45-generic']
    host.write_kernel_files(str(tmp_path), state)
    assert kernel.headers_installed('6.8.0-45-generic') is False


def test_secure_boot_off_and_no_key(tmp_path, monkeypatch):
    from nvidia_vgpu.host import hostfs, secure_boot
    monkeypatch.setenv(hostfs.HOST_ROOT_VARIABLE, str(tmp_path))
    _kernel_host(tmp_path)
    assert secure_boot.secure_boot_enabled() is False
    assert secure_boot.lockdown() == 'none'
    assert secure_boot.certificate_exists(host.MOK_CERTIFICATE) is False


def test_turning_secure_boot_off_unlocks_the_kernel():
    kernel = host.kernel_state({'secure_boot': True}, 'noble')
    assert host.signatures_required(kernel)
    off = host.changed_kernel(kernel, {'secure_boot': False})
    assert off['lockdown'] == 'none' and not host.signatures_required(off)
    # shim's validation off: Secure Boot on, kernel not locked down.
    assert not host.signatures_required(
        host.changed_kernel(kernel, {'lockdown': 'none'}))


def test_a_deb_can_ship_dkms_sources(tmp_path):
    path = host.build_deb(str(tmp_path), {
        'package': 'nvidia-vgpu-ubuntu-550', 'version': '550.54.16',
        'depends': '', 'dkms_source': True})
    listing = subprocess.run(['dpkg-deb', '-c', path], capture_output=True,
                             text=True, check=True).stdout
    assert './usr/src/nvidia-550.54.16/dkms.conf' in listing
    assert subprocess.run(['dpkg-deb', '-f', path, 'Depends'],
                          capture_output=True, text=True).stdout.strip() == ''


def test_boot_units_start_in_systemds_order_after_and_before(tmp_path):
    """A unit that says Before=X starts ahead of X, as one that says
    After=Y starts after Y (the MIG units around the SR-IOV one)."""
    units = tmp_path / 'etc' / 'systemd' / 'system'
    units.mkdir(parents=True)
    for name, lines in (('a-sriov', 'After=nvidia-vgpu-mgr.service'),
                        ('b-mode', 'Before=a-sriov.service x.service'),
                        ('c-instances', 'After=b-mode.service a-sriov.service'
                         '\nBefore=d-restore.service'),
                        ('d-restore', 'After=a-sriov.service')):
        (units / (name + '.service')).write_text('[Unit]\n' + lines + '\n')
    assert boot.boot_order(str(tmp_path), [
        'd-restore', 'c-instances', 'a-sriov', 'b-mode']) == [
        'b-mode', 'a-sriov', 'c-instances', 'd-restore']
