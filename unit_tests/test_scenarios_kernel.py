"""Before the vGPU Manager installs, the host must be able to build and
load its kernel module: the running kernel's headers, and under Secure
Boot an enrolled DKMS signing key (scenarios/kernel/*.yaml)."""
from simulation import changing, scenario

RESOURCE = ('/var/lib/juju/agents/unit-nova-compute-nvidia-vgpu-0/'
            'resources/nvidia-vgpu-software/nvidia-vgpu.deb')
APT = ['apt-get', '--assume-yes', '--option=Dpkg::Options::=--force-confold']
INSTALL_DEB = APT + ['--allow-downgrades', 'install', RESOURCE]
CERT = '/var/lib/shim-signed/mok/MOK.der'
RETRY = '(retried at the next config-changed, upgrade-charm or start)'
REBOOT = ('Reboot required: installed NVIDIA software nvidia-vgpu-ubuntu-550 '
          '550.54.16, the NVIDIA driver is not loaded yet')
# The software is in and the driver runs: on this host, whose application
# maps no vGPU type yet, what is left is the mapping (the GPU host gives
# Nova nothing, and says so: docs/index.md#this-gpu-host-gives-nova-no-vgpu).
DONE = ('blocked', 'This GPU host gives Nova no vGPU: vgpu-device-mappings '
        'names no type for them. Its GPUs: 0000:84:00.0 (10de:1db4, Tesla '
        'V100 PCIe 16GB); map them in vgpu-device-mappings (list-vgpu-types '
        'shows the types each offers)')


def statuses(output):
    return [(s['status']['workload'], s['status']['message'])
            for s in output['steps']]


def installs(commands):
    return [argv for argv in changing(commands)
            if argv[:1] == ['apt-get'] and 'install' in argv]


def test_missing_headers_are_installed_before_the_package():
    output = scenario('kernel/headers-installed-first.yaml')
    install = output['steps'][0]
    assert installs(install['commands']) == [
        APT + ['install', 'linux-headers-6.8.0-45-generic'], INSTALL_DEB]
    assert statuses(output) == [('blocked', REBOOT)] * 2 + [
        DONE] * 2
    assert output['host']['modules'] == ['nvidia', 'nvidia_vgpu_vfio']


def test_headers_the_archive_lacks_block_naming_the_package():
    output = scenario('kernel/headers-unavailable-then-other-kernel.yaml')
    blocked = (
        'Kernel headers for the running kernel 6.8.0-40-generic are missing, '
        'so DKMS cannot build the kernel module of nvidia-vgpu-ubuntu-550 '
        '550.54.16: apt-get install linux-headers-6.8.0-40-generic failed '
        '(E: Unable to locate package linux-headers-6.8.0-40-generic); add '
        'an apt source that has it, or boot a kernel whose headers it has ' +
        RETRY)
    install, config, update, action = output['steps'][:4]
    for step in (install, config, update, action):
        assert step['status'] == {'workload': 'blocked', 'message': blocked}
    # Retried at config-changed and by the action, never in update-status;
    # the vGPU Manager itself never reaches apt.
    steps = (install, config, update, action)
    assert [installs(s['commands']) for s in steps] == [
        [APT + ['install', 'linux-headers-6.8.0-40-generic']]] * 2 + [[]] + [
        [APT + ['install', 'linux-headers-6.8.0-40-generic']]]
    assert output['actions'][0]['failed'] == blocked


def test_booting_a_kernel_whose_headers_exist_installs_at_start():
    output = scenario('kernel/headers-unavailable-then-other-kernel.yaml')
    kernel, first_boot, second_boot, update = output['steps'][4:]
    assert kernel['hooks'] == [] and kernel['commands'] == []
    assert installs(first_boot['commands']) == [
        APT + ['install', 'linux-headers-6.8.0-45-generic'], INSTALL_DEB]
    assert first_boot['status']['message'] == REBOOT
    assert second_boot['status']['message'] == update['status'][
        'message'] == DONE[1]
    assert 'linux-headers-6.8.0-40-generic' not in output['host']['packages']


def test_secure_boot_without_an_enrolled_key_installs_nothing():
    output = scenario('kernel/secure-boot-key-not-enrolled.yaml')
    install, config, update = output['steps'][:3]
    not_enrolled = (
        'The kernel only loads signed modules (Secure Boot is on) and the '
        'DKMS signing key ' + CERT + ' is not enrolled, so the kernel module '
        'of nvidia-vgpu-ubuntu-550 550.54.16 would not load: mokutil --import '
        + CERT + ', then confirm the key in MokManager at the console on the '
        'next boot, or turn Secure Boot off in the firmware ' + RETRY)
    for step in (install, config, update):
        assert step['status'] == {'workload': 'blocked',
                                  'message': not_enrolled}
    # mokutil (to check the key, and for the fix) is all that installs.
    assert installs(install['commands']) == [APT + ['install', 'mokutil']]
    assert ['mokutil', '--test-key', CERT] in install['commands']
    assert installs(config['commands']) == []
    assert update['commands'].count(['mokutil', '--test-key', CERT]) == 0
    assert not [s for s in output['steps'][:5]
                if INSTALL_DEB in s['commands']]


def test_an_imported_key_installs_after_the_reboot_that_enrols_it():
    output = scenario('kernel/secure-boot-key-not-enrolled.yaml')
    imported, first_boot, second_boot, update = output['steps'][4:]
    assert imported['status']['message'] == (
        'The kernel only loads signed modules (Secure Boot is on) and the '
        'DKMS signing key ' + CERT + ' waits for its enrolment to be '
        'confirmed: reboot the host and confirm the key in MokManager at the '
        'console ' + RETRY)
    assert installs(imported['commands']) == []
    assert installs(first_boot['commands']) == [INSTALL_DEB]
    assert first_boot['status']['message'] == REBOOT
    # Signed with the enrolled key, the module loads at the next boot.
    assert second_boot['status']['message'] == update['status'][
        'message'] == DONE[1]
    assert output['host']['modules'] == ['nvidia', 'nvidia_vgpu_vfio']


def test_secure_boot_with_the_key_enrolled_installs_at_once():
    output = scenario('kernel/secure-boot-key-enrolled.yaml')
    install = output['steps'][0]
    assert installs(install['commands']) == [INSTALL_DEB]
    assert install['commands'].index(['mokutil', '--test-key', CERT]) < \
        install['commands'].index(INSTALL_DEB)
    assert statuses(output) == [('blocked', REBOOT)] * 2 + [
        DONE] * 2


def test_no_signing_key_says_how_to_make_one_action_included():
    output = scenario('kernel/secure-boot-no-key.yaml')
    no_key = (
        'The kernel only loads signed modules (Secure Boot is on) and DKMS '
        'has no signing key (' + CERT + ') for the kernel module of '
        'nvidia-vgpu-ubuntu-550 550.54.16: create it '
        '(update-secureboot-policy --new-key), mokutil --import ' + CERT +
        ', then confirm the key in '
        'MokManager at the console on the next boot, or turn Secure Boot off '
        'in the firmware ' + RETRY)
    assert statuses(output)[:4] == [('blocked', no_key)] * 4
    assert output['actions'] == [{
        'name': 'install-vgpu-software', 'params': {'force': False},
        'results': {}, 'failed': no_key}]
    # No key to test: mokutil is installed, not run.
    assert not [argv for s in output['steps'][:4] for argv in s['commands']
                if argv[0] == 'mokutil']


def test_secure_boot_turned_off_installs_at_the_next_start():
    output = scenario('kernel/secure-boot-no-key.yaml')
    first_boot, second_boot = output['steps'][4:]
    assert installs(first_boot['commands']) == [INSTALL_DEB]
    assert second_boot['status']['message'] == DONE[1]


def test_a_package_that_builds_nothing_here_is_not_checked():
    output = scenario('kernel/prebuilt-module-not-checked.yaml')
    install = output['steps'][0]
    # No headers, Secure Boot on, no key, neither mokutil nor the headers
    # installable: none of it concerns this package.
    assert installs(install['commands']) == [INSTALL_DEB]
    assert not [argv for argv in output['commands'] if argv[0] == 'mokutil']
    assert statuses(output) == [('blocked', REBOOT)] * 2 + [
        DONE] * 2
