"""The modules that touch the host: dpkg, kernel, sysfs, hostfs."""
import json
import os
import pathlib

import pytest

from nvidia_vgpu.host import dpkg, hostfs, kernel, sysfs
from sim import host as simhost
from nvidia_vgpu import model


@pytest.fixture
def host_root(tmp_path, monkeypatch):
    monkeypatch.setenv(hostfs.HOST_ROOT_VARIABLE, str(tmp_path))
    return str(tmp_path)


def test_host_path_is_the_path_itself_on_a_real_host(monkeypatch):
    monkeypatch.delenv(hostfs.HOST_ROOT_VARIABLE, raising=False)
    assert hostfs.host_path('/proc/modules') == '/proc/modules'


def test_read_deb_gets_package_and_its_services(tmp_path):
    path = simhost.build_deb(str(tmp_path), {
        'package': 'nvidia-vgpu-ubuntu-550', 'version': '550.54.16'})
    assert dpkg.read_deb(path) == model.DebInfo(
        'nvidia-vgpu-ubuntu-550', '550.54.16', 'amd64',
        ('nvidia-vgpu-mgr', 'nvidia-vgpud'), builds_kernel_module=True)


@pytest.mark.parametrize('spec, builds', [
    # Depends on dkms (the simulator's default package).
    ({}, True),
    ({'depends': 'dkms (>= 2.1.0.0), gcc | clang'}, True),
    ({'depends': 'gcc | dkms:any'}, True),
    # Sources for DKMS in its contents, whatever it declares.
    ({'depends': '', 'dkms_source': True}, True),
    # Neither: a package with its module already built.
    ({'depends': ''}, False),
    ({'depends': 'dkms-helper, libc6'}, False),
])
def test_read_deb_tells_whether_it_builds_a_kernel_module(tmp_path, spec,
                                                          builds):
    path = simhost.build_deb(str(tmp_path), dict(
        spec, package='nvidia-vgpu-ubuntu-550', version='550.54.16'))
    assert dpkg.read_deb(path).builds_kernel_module is builds


def test_read_deb_refuses_what_is_not_a_deb(tmp_path):
    junk = tmp_path / 'nvidia-vgpu.deb'
    junk.write_bytes(b'<html>403 Forbidden</html>\n')
    assert dpkg.read_deb(str(junk)) is None


def test_install_local_deb_reports_apts_reason(fake_commands):
    fake_commands.set('apt-get', exit=100, stderr=(
        'Reading package lists...\n'
        'The following packages have unmet dependencies:\n'
        ' nvidia-vgpu-ubuntu-550 : Depends: dkms but it is not installable\n'
        'E: Unable to correct problems, you have held broken packages.\n'))
    assert dpkg.install_local_deb('/r/nvidia-vgpu.deb') == (
        'nvidia-vgpu-ubuntu-550 : Depends: dkms but it is not installable')
    assert fake_commands.calls == [[
        'apt-get', '--assume-yes',
        '--option=Dpkg::Options::=--force-confold', '--allow-downgrades',
        'install', '/r/nvidia-vgpu.deb']]


def test_only_the_attached_file_may_downgrade(fake_commands):
    # Re-attaching the previous revision rolls back: apt must accept an
    # older version for that file, never for packages from the archive.
    fake_commands.set('apt-get')
    assert dpkg.install_packages(['mdevctl']) is None
    assert '--allow-downgrades' not in fake_commands.calls[0]


def test_install_local_deb_success(fake_commands):
    fake_commands.set('apt-get')
    assert dpkg.install_local_deb('/r/nvidia-vgpu.deb') is None


def _dpkg_answers(fake_commands, version):
    fake_commands.set('dpkg-query', stdout='ii \t{}'.format(version))


def _dpkg_writes_status(host_root, text):
    """As dpkg does: a new status file replaces the old one."""
    status = pathlib.Path(host_root, 'var', 'lib', 'dpkg', 'status')
    status.parent.mkdir(parents=True, exist_ok=True)
    new = status.with_name('status-new')
    new.write_text(text)
    os.replace(str(new), str(status))


def test_dpkg_is_asked_again_only_after_its_database_changed(
        host_root, fake_commands):
    _dpkg_writes_status(host_root, 'Package: nova-common\n')
    _dpkg_answers(fake_commands, '3:25.2.1-0ubuntu2')
    version, kept = dpkg.remembered_version('nova-common', None)
    assert version == '3:25.2.1-0ubuntu2'
    again, kept = dpkg.remembered_version('nova-common', kept)
    assert again == version
    assert len(fake_commands.calls) == 1
    # The principal upgrades nova: dpkg rewrites its database.
    _dpkg_writes_status(host_root, 'Package: nova-common\nVersion: 29\n')
    _dpkg_answers(fake_commands, '3:29.2.0-0ubuntu1')
    version, kept = dpkg.remembered_version('nova-common', kept)
    assert version == '3:29.2.0-0ubuntu1'
    assert len(fake_commands.calls) == 2


def test_a_change_dpkg_only_journalled_also_counts(
        host_root, fake_commands):
    _dpkg_writes_status(host_root, 'Package: nova-common\n')
    _dpkg_answers(fake_commands, '3:25.2.1-0ubuntu2')
    _, kept = dpkg.remembered_version('nova-common', None)
    updates = pathlib.Path(host_root, 'var', 'lib', 'dpkg', 'updates')
    updates.mkdir()
    (updates / '0000').write_text('Package: nova-common\n')
    dpkg.remembered_version('nova-common', kept)
    assert len(fake_commands.calls) == 2


def test_each_package_is_asked_once_per_database_state(
        host_root, fake_commands):
    _dpkg_writes_status(host_root, 'Package: nova-common\n')
    fake_commands.set('dpkg-query', exit=1)
    version, kept = dpkg.remembered_version('mdevctl', None)
    assert version is None
    _, kept = dpkg.remembered_version('mdevctl', kept)
    _dpkg_answers(fake_commands, '3:25.2.1-0ubuntu2')
    _, kept = dpkg.remembered_version('nova-common', kept)
    assert [call[-1] for call in fake_commands.calls] == [
        'mdevctl', 'nova-common']


@pytest.mark.parametrize('abbrev, installed', [
    ('ii ', True),
    # apt-mark hold: still installed; the vGPU Manager must not be taken
    # for missing and installed again under running guests.
    ('hi ', True),
    ('rc ', False),        # removed, its configuration files kept
    ('un ', False),
    ('iU ', False),        # unpacked, not configured
])
def test_a_held_package_is_installed(fake_commands, abbrev, installed):
    fake_commands.set('dpkg-query', stdout='{}\t550.54.16'.format(abbrev))
    assert dpkg.installed_version('nvidia-vgpu-ubuntu-550') == (
        '550.54.16' if installed else None)


def test_the_status_file_gives_installed_and_held_packages(host_root):
    _dpkg_writes_status(host_root, (
        'Package: nova-common\nStatus: hold ok installed\n'
        'Version: 3:29.2.0-0ubuntu1\n\n'
        'Package: qemu-system-x86\nStatus: install ok installed\n'
        'Version: 1:8.2.2+ds-0ubuntu1\n\n'
        'Package: libvirt0\nStatus: deinstall ok config-files\n'
        'Version: 10.0.0-2ubuntu8\n'))
    assert dpkg.status_versions(
        ['nova-common', 'qemu-system-x86', 'libvirt0', 'mdevctl']) == {
            'nova-common': '3:29.2.0-0ubuntu1',
            'qemu-system-x86': '1:8.2.2+ds-0ubuntu1',
            'libvirt0': None, 'mdevctl': None}


def test_the_status_file_is_not_read_while_dpkg_has_pending_changes(
        host_root):
    _dpkg_writes_status(host_root, 'Package: nova-common\n')
    updates = pathlib.Path(host_root, 'var', 'lib', 'dpkg', 'updates')
    updates.mkdir()
    (updates / '0000').write_text('Package: nova-common\n')
    assert dpkg.status_versions(['nova-common']) is None


def test_without_a_dpkg_database_dpkg_is_always_asked(
        host_root, fake_commands):
    _dpkg_answers(fake_commands, '1.0')
    _, kept = dpkg.remembered_version('nova-common', None)
    dpkg.remembered_version('nova-common', kept)
    assert len(fake_commands.calls) == 2


def test_loaded_driver_version_from_proc_and_sys(host_root):
    simhost.write_proc_modules(host_root, ['nouveau', 'drm'])
    assert kernel.nvidia_driver_version() is None
    simhost.write_proc_modules(host_root, ['nvidia', 'nvidia_vgpu_vfio'])
    os.makedirs(os.path.join(host_root, 'sys/module/nvidia'))
    with open(os.path.join(host_root, 'sys/module/nvidia/version'),
              'w') as stream:
        stream.write('550.54.16\n')
    assert kernel.nvidia_driver_version() == '550.54.16'


def test_nouveau_blacklisted_once_with_one_initramfs_update(host_root,
                                                            fake_commands):
    fake_commands.set('update-initramfs')
    assert kernel.blacklist_nouveau() is True
    assert kernel.blacklist_nouveau() is False
    assert fake_commands.calls == [['update-initramfs', '-u']]
    with open(os.path.join(host_root, kernel.NOUVEAU_BLACKLIST.lstrip('/'))
              ) as stream:
        lines = stream.read().splitlines()
    assert 'blacklist nouveau' in lines
    assert 'options nouveau modeset=0' in lines


def test_virtual_functions_are_known_by_their_physfn_link(host_root):
    a40 = {'address': '0000:41:00.0', 'vendor': '10de', 'device': '2235',
           'class': '030200', 'sriov': {'total_vfs': 4}}
    simhost.generate_sysfs(host_root, [a40], {
        'nvidia_loaded': True, 'vfs': {'0000:41:00.0': 2}})
    assert sysfs.virtual_functions(
        ['0000:41:00.0', '0000:41:00.4', '0000:41:00.5']) == {
            '0000:41:00.4', '0000:41:00.5'}


def test_boot_unit_is_written_enabled_once_and_removed(host_root,
                                                       fake_commands):
    from nvidia_vgpu.driver import sriov
    from nvidia_vgpu.host import systemd, templates
    fake_commands.set('systemctl')
    text = templates.render(sriov.BOOT_UNIT)
    assert systemd.install_unit(sriov.BOOT_UNIT, text)
    assert not systemd.install_unit(sriov.BOOT_UNIT, text)
    path = os.path.join(host_root, 'etc/systemd/system', sriov.BOOT_UNIT)
    with open(path) as stream:
        text = stream.read()
    assert 'ExecStart=/usr/lib/nvidia/sriov-manage -e ALL' in text
    assert 'Before=nova-compute.service' in text
    assert systemd.remove_unit(sriov.BOOT_UNIT)
    assert not os.path.exists(path)
    assert not systemd.remove_unit(sriov.BOOT_UNIT)
    assert fake_commands.calls == [
        ['systemctl', 'daemon-reload'],
        ['systemctl', 'enable', sriov.BOOT_UNIT],
        ['systemctl', 'disable', sriov.BOOT_UNIT],
        ['systemctl', 'daemon-reload']]


def _sriov_gpu_with_types(host_root):
    """An A100-like GPU, driver loaded, two VFs offering two types."""
    types = {
        'nvidia-692': {'name': 'GRID A100D-4C', 'available_instances': 1,
                       'description': 'framebuffer=4096M, max_instance=20'},
        'nvidia-697': {'name': 'GRID A100D-40C', 'available_instances': 1,
                       'description': 'framebuffer=40960M, max_instance=2'},
    }
    a100 = {'address': '0000:41:00.0', 'vendor': '10de', 'device': '20b5',
            'class': '030200',
            'sriov': {'total_vfs': 2, 'vf_mdev_types': types}}
    simhost.generate_sysfs(host_root, [a100], {
        'nvidia_loaded': True, 'vfs': {'0000:41:00.0': 2}})
    return sysfs.sriov_virtual_functions('0000:41:00.0')


def test_a_sibling_vf_reuses_names_and_reads_its_own_free_instances(
        host_root):
    first, second = _sriov_gpu_with_types(host_root)
    known = {found.type_id: found for found in sysfs.read_mdev_types(first)}
    taken = os.path.join(host_root, 'sys', 'class', 'mdev_bus', second,
                         'mdev_supported_types', 'nvidia-697')
    with open(os.path.join(taken, 'available_instances'), 'w') as stream:
        stream.write('0\n')
    os.remove(os.path.join(taken, 'name'))  # not read again
    sibling = sysfs.read_mdev_types(second, known)
    assert [(t.type_id, t.address, t.name, t.available_instances)
            for t in sibling] == [
        ('nvidia-692', second, 'GRID A100D-4C', 1),
        ('nvidia-697', second, 'GRID A100D-40C', 0)]


def test_one_types_description_is_read_alone(host_root):
    first, _ = _sriov_gpu_with_types(host_root)
    assert sysfs.mdev_type_description(first, 'nvidia-697') == (
        'framebuffer=40960M, max_instance=2')
    assert sysfs.mdev_type_description(first, 'nvidia-999') is None


def _write(host_root, path, text):
    full = os.path.join(host_root, path.lstrip('/'))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, 'w') as stream:
        stream.write(text)


def test_running_release_is_what_uname_r_prints(host_root):
    _write(host_root, '/proc/sys/kernel/osrelease', '6.8.0-45-generic\n')
    assert kernel.running_release() == '6.8.0-45-generic'


def test_running_release_without_proc_asks_the_kernel(host_root):
    assert kernel.running_release() == os.uname().release


def test_headers_count_where_the_build_link_reaches_a_tree(host_root):
    release = '6.8.0-45-generic'
    assert kernel.headers_installed(release) is False
    # As linux-headers-<release> lays them out: a link into /usr/src.
    tree = os.path.join(host_root, 'usr/src/linux-headers-' + release)
    os.makedirs(os.path.join(tree, 'include'))
    modules = os.path.join(host_root, 'lib/modules', release)
    os.makedirs(modules)
    os.symlink(os.path.relpath(tree, modules),
               os.path.join(modules, 'build'))
    assert kernel.headers_installed(release) is True
    assert kernel.headers_installed('6.8.0-31-generic') is False


def test_a_dangling_build_link_is_no_headers(host_root):
    # linux-headers removed, the kernel's own package left the link.
    modules = os.path.join(host_root, 'lib/modules/6.8.0-45-generic')
    os.makedirs(modules)
    os.symlink('../../../usr/src/linux-headers-6.8.0-45-generic',
               os.path.join(modules, 'build'))
    assert kernel.headers_installed('6.8.0-45-generic') is False


def test_a_build_tree_without_include_is_no_headers(host_root):
    os.makedirs(os.path.join(host_root,
                             'lib/modules/6.8.0-45-generic/build/scripts'))
    assert kernel.headers_installed('6.8.0-45-generic') is False


@pytest.mark.parametrize('files, built', [
    # Where Ubuntu's DKMS installs, plain or compressed (noble: .zst).
    (['updates/dkms/nvidia.ko', 'updates/dkms/nvidia-vgpu-vfio.ko'], True),
    (['updates/dkms/nvidia.ko.zst'], True),
    (['kernel/nvidia-550/nvidia.ko'], True),
    # The kernel's own drivers with nvidia in their names are not it.
    (['kernel/drivers/platform/x86/nvidia-wmi-ec-backlight.ko',
      'kernel/drivers/i2c/busses/i2c-nvidia-gpu.ko',
      'kernel/drivers/usb/typec/altmodes/typec_nvidia.ko'], False),
    ([], False),
])
def test_the_nvidia_module_is_found_where_dkms_put_it(host_root, files,
                                                      built):
    release = '6.8.0-45-generic'
    for name in files:
        _write(host_root, '/lib/modules/{}/{}'.format(release, name), '')
    assert kernel.nvidia_module_built(release) is built
    assert kernel.nvidia_module_built('6.8.0-40-generic') is False


def test_the_headers_tree_is_not_searched_for_the_module(host_root):
    release = '6.8.0-45-generic'
    _write(host_root, '/usr/src/linux-headers-{}/include/nvidia.ko'.format(
        release), '')
    modules = os.path.join(host_root, 'lib/modules', release)
    os.makedirs(modules)
    os.symlink('../../../usr/src/linux-headers-' + release,
               os.path.join(modules, 'build'))
    _write(host_root, '/proc/sys/kernel/osrelease', release + '\n')
    assert kernel.running_kernel() == model.RunningKernel(
        release, True, False)


def test_building_installs_the_headers_then_runs_dkms(fake_commands):
    fake_commands.set('apt-get')
    fake_commands.set('dkms')
    assert kernel.build_module('6.8.0-45-generic', [
        'linux-headers-6.8.0-45-generic']) == (None, None)
    assert [call[0] for call in fake_commands.calls] == ['apt-get', 'dkms']
    assert fake_commands.calls[1] == ['dkms', 'autoinstall', '-k',
                                      '6.8.0-45-generic']


def test_apt_failing_leaves_dkms_alone(fake_commands):
    fake_commands.set('apt-get', exit=100,
                      stderr='E: Unable to locate package linux-headers-x\n')
    fake_commands.set('dkms')
    assert kernel.build_module('x', ['linux-headers-x']) == (
        'E: Unable to locate package linux-headers-x', None)
    assert [call[0] for call in fake_commands.calls] == ['apt-get']


def test_dkms_failing_says_its_error(fake_commands):
    fake_commands.set('dkms', exit=11, stdout='Building module:\n', stderr=(
        'Error! Bad return status for module build on kernel: x (x86_64)\n'
        'Consult /var/lib/dkms/nvidia/550.54.16/build/make.log for more '
        'information.\n'))
    assert kernel.build_module('x', []) == (None, (
        'Error! Bad return status for module build on kernel: x (x86_64)'))
    assert fake_commands.calls == [['dkms', 'autoinstall', '-k', 'x']]


def test_a_units_state_is_systemds_word_for_it(host_root, fake_commands):
    from nvidia_vgpu.driver import sriov
    from nvidia_vgpu.host import systemd
    fake_commands.set('systemctl', stdout='failed\nactive\n', exit=3)
    assert systemd.states([sriov.BOOT_UNIT, 'nvidia-vgpu-mgr']) == {
        sriov.BOOT_UNIT: 'failed', 'nvidia-vgpu-mgr': 'active'}
    # One systemctl for all of them.
    assert fake_commands.calls == [['systemctl', 'is-active',
                                    sriov.BOOT_UNIT, 'nvidia-vgpu-mgr']]
    # An answer systemctl did not give line by line is no one's.
    fake_commands.set('systemctl', stdout='', exit=1)
    assert systemd.states(['nvidia-vgpu-mgr']) == {
        'nvidia-vgpu-mgr': 'unknown'}
    assert systemd.states([]) == {}
    assert not systemd.installed(sriov.BOOT_UNIT)
    hostfs.write_if_changed('/etc/systemd/system/' + sriov.BOOT_UNIT, '')
    assert systemd.installed(sriov.BOOT_UNIT)


def test_nvidia_smi_output_as_printed_or_none_without_it(
        fake_commands, monkeypatch):
    from nvidia_vgpu.host import nvidia_smi
    monkeypatch.setenv('PATH', fake_commands.bin)
    assert nvidia_smi.vgpu_report() is None
    fake_commands.set('nvidia-smi', stdout='GPU 00000000:84:00.0\n')
    assert nvidia_smi.vgpu_report() == 'GPU 00000000:84:00.0'
    fake_commands.set('nvidia-smi', stdout='No devices were found\n',
                      exit=6)
    assert nvidia_smi.vgpu_report() == (
        'No devices were found\n(nvidia-smi vgpu exited with 6)')
    fake_commands.set('nvidia-smi', stderr='nvidia-smi: not found\n',
                      exit=127)
    assert nvidia_smi.vgpu_report() is None
    assert fake_commands.calls[0] == ['nvidia-smi', 'vgpu']


V100_TYPES = {
    'nvidia-105': {'name': 'GRID V100-1Q', 'available_instances': 16,
                   'description': 'framebuffer=1024M, max_instance=16'},
    'nvidia-108': {'name': 'GRID V100-8Q', 'available_instances': 2,
                   'description': 'framebuffer=8192M, max_instance=2'}}


def _read_host(host_root, functions, names=True):
    """The hook's snapshot of a sysfs tree with the nvidia module loaded."""
    from nvidia_vgpu.host import snapshot
    simhost.write_proc_modules(str(host_root), ['nvidia'])
    return snapshot.read(None, tuple(functions), names=names)


def test_a_gpus_free_instances_are_read_only_for_the_types_asked(
        host_root, monkeypatch):
    """The survey of the hook's snapshot: every offered type, the free
    vGPUs counted only for those Nova was given, one file each."""
    from nvidia_vgpu.hook_plan import survey
    from nvidia_vgpu.host import sysfs
    v100 = {'address': '0000:84:00.0', 'vendor': '10de', 'device': '1db4',
            'class': '030200', 'mdev_types': V100_TYPES}
    simhost.generate_sysfs(host_root, [v100], {'nvidia_loaded': True})
    host = _read_host(host_root, [model.PciFunction(
        '0000:84:00.0', '0302', '10de', '1db4')])
    state = survey.gpu_state(host.gpus[0], 'Tesla V100', host.offered,
                             host.vf_current_types)
    assert state.types == {'0000:84:00.0': {'nvidia-105': None,
                                            'nvidia-108': None}}
    assert state.names == {'nvidia-105': 'GRID V100-1Q',
                           'nvidia-108': 'GRID V100-8Q'}
    assert (state.total_vfs, state.vfs, state.vf_types) == (0, (), {})
    read = []
    monkeypatch.setattr(sysfs, '_read', lambda path, real=sysfs._read: (
        read.append(path), real(path))[1])
    counted, = survey.with_free([state], host,
                                {'nvidia-108': ['0000:84:00.0']})
    assert counted.types == {'0000:84:00.0': {'nvidia-105': None,
                                              'nvidia-108': 2}}
    assert [path.rsplit('/', 2)[1:] for path in read] == [
        ['nvidia-108', 'available_instances']]


def test_vendor_vfio_vfs_report_their_types(host_root):
    from nvidia_vgpu.hook_plan import survey
    l40s = {'address': '0000:41:00.0', 'vendor': '10de', 'device': '26b9',
            'class': '030200', 'sriov': {'total_vfs': 2, 'vf_vgpu_types': {
                1148: 'NVIDIA L40S-2Q', 1155: 'NVIDIA L40S-48Q'}}}
    simhost.generate_sysfs(host_root, [l40s], {
        'nvidia_loaded': True, 'vfs': {'0000:41:00.0': 2},
        'vf_vgpu_types': {'0000:41:00.4': 1148}})
    host = _read_host(host_root, [model.PciFunction(
        '0000:41:00.0', '0302', '10de', '26b9')])
    state = survey.gpu_state(host.gpus[0], 'L40S', host.offered,
                             host.vf_current_types)
    assert state.total_vfs == 2
    assert state.vf_types == {'0000:41:00.4': 1148, '0000:41:00.5': 0}
    assert state.types['0000:41:00.5'] == {'nvidia-1148': None,
                                           'nvidia-1155': None}
    assert state.names['nvidia-1155'] == 'NVIDIA L40S-48Q'


def test_versions_for_migration_come_from_dpkg_and_proc(
        host_root, fake_commands):
    from nvidia_vgpu.host import survey
    _write(host_root, '/proc/sys/kernel/osrelease', '6.8.0-49-generic\n')
    fake_commands.set('dpkg-query', stdout='ii \t10.0.0-2ubuntu8.4')
    versions = survey.versions('3:29.2.0-0ubuntu1')
    assert versions[:4] == ('3:29.2.0-0ubuntu1', '10.0.0-2ubuntu8.4',
                            '10.0.0-2ubuntu8.4', '6.8.0-49-generic')
    # libvirt-daemon-system answered: libvirt0 is not asked.
    assert [call[-1] for call in fake_commands.calls] == [
        'libvirt-daemon-system', 'qemu-system-x86']
    # No nova.conf yet (nova-compute not installed): post-copy not known.
    assert versions.post_copy is None


@pytest.mark.parametrize('text, permitted', [
    # charm-nova-compute's rendering, either way; oslo.config's words.
    ('[DEFAULT]\ndebug = False\n[libvirt]\nlive_migration_permit_post_copy'
     ' = True\n', True),
    ('[libvirt]\nlive_migration_permit_post_copy = false\n', False),
    ('[libvirt]\nlive_migration_permit_post_copy = on\n', True),
    # Unset: Nova's default, off.
    ('[libvirt]\nvirt_type = kvm\n', False),
    ('[DEFAULT]\n', False),
    # Not a boolean Nova would take, or not a file it could read.
    ('[libvirt]\nlive_migration_permit_post_copy = maybe\n', None),
    ('live_migration_permit_post_copy = True\n', None),
])
def test_post_copy_is_read_as_nova_compute_reads_it(host_root, text,
                                                    permitted):
    from nvidia_vgpu.host import nova_conf
    _write(host_root, nova_conf.NOVA_CONF, text)
    assert nova_conf.permit_post_copy() is permitted


@pytest.mark.parametrize('gpu, asked', [
    pytest.param({'address': '0000:41:00.0', 'vendor': '10de',
                  'device': '26b9', 'class': '030200', 'sriov': {
                      'total_vfs': 2, 'vf_vgpu_types': {
                          1148: 'NVIDIA L40S-2Q'}}},
                 ['libvirt-daemon-system', 'qemu-system-x86'],
                 id='vendor-specific VFIO: libvirt and QEMU asked'),
    pytest.param({'address': '0000:84:00.0', 'vendor': '10de',
                  'device': '1db4', 'class': '030200', 'mdev_types': {
                      'nvidia-108': {'name': 'GRID V100-8Q',
                                     'available_instances': 2}}},
                 [], id='mdev: no package asked'),
])
def test_the_snapshot_asks_libvirt_and_qemu_only_on_vendor_vfio(
        host_root, gpu, asked):
    from nvidia_vgpu.host import snapshot
    simhost.generate_sysfs(host_root, [gpu], {
        'nvidia_loaded': True, 'vfs': {gpu['address']: 2}
        if gpu.get('sriov') else {}})
    versions = {'libvirt-daemon-system': '10.0.0-2ubuntu8',
                'qemu-system-x86': '1:8.2.2+ds-0ubuntu1'}
    calls = []

    def installed(package):
        calls.append(package)
        return versions.get(package)

    found = snapshot.read('3:31.0.0-0ubuntu1', (model.PciFunction(
        gpu['address'], '0302', '10de', gpu['device']),), installed=installed)
    assert calls == asked
    assert (found.libvirt_version, found.qemu_version) == (
        (versions['libvirt-daemon-system'], versions['qemu-system-x86'])
        if asked else (None, None))


def test_the_vf_types_the_charm_gave_are_read_back(host_root):
    from nvidia_vgpu.host import boot_records
    assert boot_records.recorded_vf_types() == {}
    boot_records.save_json(boot_records.SETTINGS, {
        'restore_mdevs': False,
        'vf_vgpu_types': {'0000:41:00.4': 1148, '0000:41:00.5': 0}})
    assert boot_records.recorded_vf_types() == {'0000:41:00.4': 1148}


def _mdevctl_definition(root, parent, uuid, text):
    directory = pathlib.Path(root, 'etc', 'mdevctl.d', parent)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / uuid).write_text(text)


def test_persistent_mdevs_are_the_definitions_started_at_boot(host_root):
    from nvidia_vgpu.host import mdevctl
    assert mdevctl.persistent_mdevs() == frozenset()
    _mdevctl_definition(host_root, '0000:84:00.0', 'A1', json.dumps(
        {'mdev_type': 'nvidia-108', 'start': 'auto', 'attrs': []}))
    # Started by hand only: gone at a reboot like a transient one.
    _mdevctl_definition(host_root, '0000:84:00.0', 'b2', json.dumps(
        {'mdev_type': 'nvidia-108', 'start': 'manual', 'attrs': []}))
    _mdevctl_definition(host_root, '0000:85:00.0', 'c3', 'not json')
    assert mdevctl.persistent_mdevs() == frozenset({'a1'})
