"""Whether the vGPU Manager's kernel module can be built and loaded here:
the verdict an operator sees before anything is installed
(nvidia_vgpu.driver.module_build, pure)."""
import pytest

from nvidia_vgpu.driver import module_build
from nvidia_vgpu.model import DebInfo
from nvidia_vgpu import model

KERNEL = '6.8.0-45-generic'
CERT = '/var/lib/shim-signed/mok/MOK.der'
DKMS_DEB = DebInfo('nvidia-vgpu-ubuntu-550', '550.54.16', 'amd64',
                   ('nvidia-vgpu-mgr', 'nvidia-vgpud'), True)
PREBUILT_DEB = DKMS_DEB._replace(builds_kernel_module=False)
RETRY = '(retried at the next config-changed, upgrade-charm or start)'


def host(**facts):
    ready = dict(kernel=KERNEL, headers=True, signed_only=None,
                 certificate=CERT, certificate_exists=False, mokutil=False,
                 enrolment=None)
    ready.update(facts)
    return model.BuildHost(**ready)


SECURE = dict(signed_only=module_build.SECURE_BOOT_ON,
              certificate_exists=True, mokutil=True)


def test_a_ready_host_installs():
    assert module_build.packages_to_install(host()) == []
    assert module_build.problem(DKMS_DEB, host()) is None


def test_a_package_that_does_not_build_here_is_not_checked():
    bare = host(headers=False, **dict(SECURE, enrolment=None,
                                      certificate_exists=False))
    assert module_build.problem(PREBUILT_DEB, bare) is None


def test_missing_headers_are_installed_first_exactly_for_this_kernel():
    assert module_build.packages_to_install(host(headers=False)) == [
        'linux-headers-6.8.0-45-generic']


def test_headers_apt_cannot_install_block_naming_package_and_reason():
    message = module_build.problem(
        DKMS_DEB, host(headers=False),
        'E: Unable to locate package linux-headers-6.8.0-45-generic')
    assert message == (
        'Kernel headers for the running kernel 6.8.0-45-generic are '
        'missing, so DKMS cannot build the kernel module of '
        'nvidia-vgpu-ubuntu-550 550.54.16: apt-get install '
        'linux-headers-6.8.0-45-generic failed (E: Unable to locate package '
        'linux-headers-6.8.0-45-generic); add an apt source that has it, or '
        'boot a kernel whose headers it has ' + RETRY)


def test_headers_installed_but_not_there_say_reinstall():
    message = module_build.problem(DKMS_DEB, host(headers=False))
    assert message.startswith('Kernel headers for the running kernel '
                              '6.8.0-45-generic are missing')
    assert ('linux-headers-6.8.0-45-generic is installed, yet '
            '/lib/modules/6.8.0-45-generic/build has no include/: '
            'reinstall it') in message


@pytest.mark.parametrize('secure_boot_on, lockdown, sig_enforce, why', [
    (False, None, False, None),
    (False, 'none', False, None),
    # Ubuntu: Secure Boot locks the kernel down.
    (True, 'integrity', False, 'Secure Boot is on'),
    (True, 'confidentiality', False, 'Secure Boot is on'),
    # shim's validation turned off (mokutil --disable-validation): the
    # kernel is not locked down, unsigned modules load.
    (True, 'none', False, None),
    # A kernel that does not report lockdown: Secure Boot alone counts.
    (True, None, False, 'Secure Boot is on'),
    (False, 'integrity', False, 'kernel lockdown is integrity'),
    (False, 'none', True, 'module.sig_enforce is set'),
    (False, None, True, 'module.sig_enforce is set'),
])
def test_when_the_kernel_refuses_unsigned_modules(secure_boot_on, lockdown,
                                                  sig_enforce, why):
    assert module_build.signed_only(secure_boot_on, lockdown,
                                    sig_enforce) == why


def test_mokutil_is_installed_only_where_signatures_are_required():
    assert module_build.packages_to_install(host(mokutil=False)) == []
    assert module_build.packages_to_install(host(
        signed_only=module_build.SECURE_BOOT_ON, mokutil=False)) == [
            'mokutil']
    assert module_build.packages_to_install(host(
        headers=False, signed_only='module.sig_enforce is set')) == [
            'linux-headers-6.8.0-45-generic', 'mokutil']


def test_an_enrolled_key_installs():
    assert module_build.problem(DKMS_DEB, host(
        **dict(SECURE, enrolment=model.ENROLLED))) is None


def test_a_key_not_enrolled_blocks_with_the_enrolment_steps():
    message = module_build.problem(DKMS_DEB, host(
        **dict(SECURE, enrolment=model.NOT_ENROLLED)))
    assert message == (
        'The kernel only loads signed modules (Secure Boot is on) and the '
        'DKMS signing key /var/lib/shim-signed/mok/MOK.der is not enrolled, '
        'so the kernel module of nvidia-vgpu-ubuntu-550 550.54.16 would not '
        'load: mokutil --import /var/lib/shim-signed/mok/MOK.der, then '
        'confirm the key in MokManager at the console on the next boot, or '
        'turn Secure Boot off in the firmware ' + RETRY)


def test_a_key_waiting_for_confirmation_asks_for_the_reboot():
    message = module_build.problem(DKMS_DEB, host(
        **dict(SECURE, enrolment=model.PENDING)))
    assert message == (
        'The kernel only loads signed modules (Secure Boot is on) and the '
        'DKMS signing key /var/lib/shim-signed/mok/MOK.der waits for its '
        'enrolment to be confirmed: reboot the host and confirm the key in '
        'MokManager at the console ' + RETRY)


def test_no_signing_key_yet_says_how_to_create_it():
    message = module_build.problem(DKMS_DEB, host(
        **dict(SECURE, certificate_exists=False)))
    assert message.startswith(
        'The kernel only loads signed modules (Secure Boot is on) and DKMS '
        'has no signing key (/var/lib/shim-signed/mok/MOK.der) for the '
        'kernel module of nvidia-vgpu-ubuntu-550 550.54.16: create it '
        '(update-secureboot-policy --new-key), mokutil --import '
        '/var/lib/shim-signed/mok/MOK.der, then confirm the key')
    custom = module_build.problem(DKMS_DEB, host(**dict(
        SECURE, certificate='/root/dkms.der', certificate_exists=False)))
    assert 'create it (the key pair /etc/dkms/framework.conf names)' in \
        custom
    assert 'update-secureboot-policy' not in custom


def test_mokutil_apt_cannot_install_blocks_with_apts_reason():
    message = module_build.problem(
        DKMS_DEB, host(**dict(SECURE, mokutil=False)),
        'E: Unable to locate package mokutil')
    assert message.startswith(
        'The kernel only loads signed modules (Secure Boot is on) and '
        'mokutil, which checks that the DKMS signing key '
        '/var/lib/shim-signed/mok/MOK.der is enrolled, is not installed '
        '(apt-get install mokutil failed: E: Unable to locate package '
        'mokutil): install it')


def test_no_answer_from_mokutil_blocks_rather_than_guessing():
    message = module_build.problem(DKMS_DEB, host(**SECURE))
    assert message.startswith(
        'The kernel only loads signed modules (Secure Boot is on) and '
        'mokutil --test-key /var/lib/shim-signed/mok/MOK.der does not say '
        'that the DKMS signing key is enrolled')


def test_secure_boot_advice_only_where_secure_boot_is_the_reason():
    message = module_build.problem(DKMS_DEB, host(**dict(
        SECURE, signed_only='module.sig_enforce is set',
        enrolment=model.NOT_ENROLLED)))
    assert message.startswith('The kernel only loads signed modules '
                              '(module.sig_enforce is set)')
    assert 'Secure Boot' not in message


def test_headers_come_before_the_signing_key():
    message = module_build.problem(DKMS_DEB, host(headers=False, **dict(
        SECURE, enrolment=model.NOT_ENROLLED)), 'E: no')
    assert message.startswith('Kernel headers for the running kernel')


@pytest.mark.parametrize('facts, failure', [
    (dict(headers=False), 'E: x'), (dict(headers=False), None),
    (dict(SECURE, certificate_exists=False), None),
    (dict(SECURE, mokutil=False), None),
    (dict(SECURE, enrolment=model.PENDING), None),
    (dict(SECURE, enrolment=model.NOT_ENROLLED), None),
    (dict(SECURE), None),
])
def test_every_block_is_a_status_that_says_it_is_retried(facts, failure):
    message = module_build.problem(DKMS_DEB, host(**facts), failure)
    assert message[0].isupper()
    assert message.endswith(' ' + RETRY)
    assert '\n' not in message


# After the install: a kernel booted without the package's DKMS module.

INSTALLED = model.Installed('0' * 64, 'nvidia-vgpu-ubuntu-550', '550.54.16',
                            ('nvidia-vgpu-mgr', 'nvidia-vgpud'), True)
UNBUILT = ('NVIDIA kernel module of nvidia-vgpu-ubuntu-550 550.54.16 not '
           'built for the running kernel 6.8.0-45-generic, so the driver '
           'cannot load: ')
AFTER = '; then reboot, or boot a kernel it was built for ' + RETRY
APT_REASON = 'E: Unable to locate package linux-headers-6.8.0-45-generic'


def running(headers=False, nvidia_module=False):
    return model.RunningKernel(KERNEL, headers, nvidia_module)


@pytest.mark.parametrize('installed, kernel, packages', [
    # Updated without its headers: they come first, then DKMS builds.
    (INSTALLED, running(), ['linux-headers-6.8.0-45-generic']),
    # Headers there, module not built (a failed build, or headers that
    # came before the package): DKMS alone.
    (INSTALLED, running(headers=True), []),
    # The module is there: only the reboot the unit asks for loads it.
    (INSTALLED, running(nvidia_module=True), None),
    (INSTALLED, running(headers=True, nvidia_module=True), None),
    # Nothing of the charm's installed, or a package DKMS does not build.
    (None, running(), None),
    (INSTALLED._replace(builds_kernel_module=False), running(), None),
])
def test_what_a_kernel_without_the_module_needs(installed, kernel,
                                                packages):
    assert module_build.module_packages(installed, kernel) == packages
    if packages is None:
        assert module_build.unbuilt_module(installed, kernel) is None


@pytest.mark.parametrize('kernel, apt, dkms, fix', [
    (running(), APT_REASON, None,
     'apt-get install linux-headers-6.8.0-45-generic failed (' +
     APT_REASON + '): add an apt source that has it and install it (DKMS '
     'builds the module as it installs; dkms autoinstall -k '
     '6.8.0-45-generic by hand)'),
    (running(), None, None,
     'install linux-headers-6.8.0-45-generic (DKMS builds the module as it '
     'installs; dkms autoinstall -k 6.8.0-45-generic by hand)'),
    (running(headers=True), None, 'Error! Bad return status for module '
     'build on kernel: 6.8.0-45-generic (x86_64)',
     'dkms autoinstall -k 6.8.0-45-generic failed (Error! Bad return status '
     'for module build on kernel: 6.8.0-45-generic (x86_64)): dkms status '
     'and the make.log under /var/lib/dkms/ say why; mend it and run it '
     'again'),
    (running(headers=True), None, None,
     'dkms autoinstall -k 6.8.0-45-generic built none: dkms status lists '
     'the modules DKMS knows (reinstalling nvidia-vgpu-ubuntu-550 adds its '
     'own)'),
])
def test_a_module_still_missing_blocks_naming_kernel_and_fix(kernel, apt,
                                                             dkms, fix):
    assert module_build.unbuilt_module(INSTALLED, kernel, apt, dkms) == (
        UNBUILT + fix + AFTER)


def test_a_module_built_after_all_is_no_problem():
    built = running(headers=True, nvidia_module=True)
    assert module_build.unbuilt_module(INSTALLED, built, None, None) is None
