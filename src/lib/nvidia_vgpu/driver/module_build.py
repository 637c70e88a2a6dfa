"""Policy: will DKMS build the vGPU Manager's kernel module on this host,
and will the kernel load it? Decided before the package is installed,
from facts gathered elsewhere (kernel, secure_boot, dpkg), so that a
missing prerequisite blocks with its fix instead of failing inside apt
(or, worse, installing a module that never loads); and again once it is
installed, for a kernel that boots without the module (below).

Why the charm installs some prerequisites itself: the running kernel's
headers and mokutil are archive packages that the install needs anyway
(the package's dkms dependency builds against the headers, and pulls
only the generic headers metapackage, which matches the running kernel
only on a host that runs the newest GA kernel). The exact
linux-headers-<release> is installed, never a metapackage, so no other
kernel comes with it. What needs a person is left to the operator:
enrolling a signing key is confirmed at the console at boot, and Secure
Boot is a firmware setting.
"""
from typing import List, Optional

from nvidia_vgpu.model import DebInfo
from nvidia_vgpu import model

HEADERS_PACKAGE = 'linux-headers-{}'
MOKUTIL_PACKAGE = 'mokutil'
SECURE_BOOT_ON = 'Secure Boot is on'
RETRY = '(retried at the next config-changed, upgrade-charm or start)'


def signed_only(secure_boot_on: bool, lockdown: Optional[str],
                sig_enforce: bool) -> Optional[str]:
    """Why the running kernel refuses unsigned modules, None if it loads
    them. Lockdown is the kernel's own decision (Secure Boot locks an
    Ubuntu kernel down unless shim's validation is off); where the
    kernel does not report it, Secure Boot alone counts."""
    if lockdown not in (None, 'none'):
        return (SECURE_BOOT_ON if secure_boot_on
                else 'kernel lockdown is {}'.format(lockdown))
    if lockdown is None and secure_boot_on:
        return SECURE_BOOT_ON
    if sig_enforce:
        return 'module.sig_enforce is set'
    return None


def packages_to_install(host: model.BuildHost) -> List[str]:
    """Archive packages to install before the vGPU Manager: the running
    kernel's headers if missing, and mokutil where the kernel wants
    signed modules (to check the signing key, and for the operator to
    enroll it)."""
    packages = []
    if not host.headers:
        packages.append(HEADERS_PACKAGE.format(host.kernel))
    if host.signed_only and not host.mokutil:
        packages.append(MOKUTIL_PACKAGE)
    return packages


def problem(deb: DebInfo, host: model.BuildHost,
            apt_failure: Optional[str] = None) -> Optional[str]:
    """Why the package must not be installed on this host yet (blocked,
    naming the fix), or None. apt_failure: apt's reason when installing
    packages_to_install() failed."""
    if not deb.builds_kernel_module:
        return None
    return (_headers_problem(deb, host, apt_failure) or
            _signing_problem(deb, host, apt_failure))


def _headers_problem(deb: DebInfo, host: model.BuildHost,
                     apt_failure: Optional[str]) -> Optional[str]:
    """DKMS cannot build without the running kernel's headers."""
    package = HEADERS_PACKAGE.format(host.kernel)
    if not host.headers:
        if apt_failure:
            fix = ('apt-get install {} failed ({}); add an apt source that '
                   'has it, or boot a kernel whose headers it has'.format(
                       package, apt_failure))
        else:
            fix = ('{} is installed, yet /lib/modules/{}/build has no '
                   'include/: reinstall it'.format(package, host.kernel))
        return ('Kernel headers for the running kernel {} are missing, so '
                'DKMS cannot build the kernel module of {} {}: {} {}'.format(
                    host.kernel, deb.package, deb.version, fix, RETRY))
    return None


def _signing_problem(deb: DebInfo, host: model.BuildHost,
                     apt_failure: Optional[str]) -> Optional[str]:
    """A kernel that loads only signed modules needs DKMS's key, and that
    key enrolled (mokutil says)."""
    if not host.signed_only:
        return None
    certificate = host.certificate
    turn_off = (', or turn Secure Boot off in the firmware'
                if host.signed_only == SECURE_BOOT_ON else '')
    confirm = 'confirm the key in MokManager at the console on the next boot'
    if not host.certificate_exists:
        create = ('update-secureboot-policy --new-key'
                  if certificate == model.UBUNTU_DKMS_CERTIFICATE
                  else 'the key pair /etc/dkms/framework.conf names')
        return ('The kernel only loads signed modules ({}) and DKMS has no '
                'signing key ({}) for the kernel module of {} {}: create '
                'it ({}), mokutil --import {}, then {}{} {}'.format(
                    host.signed_only, certificate, deb.package,
                    deb.version, create, certificate, confirm, turn_off,
                    RETRY))
    if host.enrolment == model.ENROLLED:
        return None
    if not host.mokutil:
        failed = (' (apt-get install {} failed: {})'.format(
            MOKUTIL_PACKAGE, apt_failure) if apt_failure else '')
        return ('The kernel only loads signed modules ({}) and mokutil, '
                'which checks that the DKMS signing key {} is enrolled, '
                'is not installed{}: install it from the host\'s apt '
                'sources{} {}'.format(host.signed_only, certificate, failed,
                                      turn_off, RETRY))
    if host.enrolment == model.PENDING:
        return ('The kernel only loads signed modules ({}) and the DKMS '
                'signing key {} waits for its enrolment to be confirmed: '
                'reboot the host and {} {}'.format(
                    host.signed_only, certificate,
                    confirm.replace(' on the next boot', ''), RETRY))
    if host.enrolment == model.NOT_ENROLLED:
        return ('The kernel only loads signed modules ({}) and the DKMS '
                'signing key {} is not enrolled, so the kernel module of '
                '{} {} would not load: mokutil --import {}, then {}{} '
                '{}'.format(host.signed_only, certificate, deb.package,
                            deb.version, certificate, confirm, turn_off,
                            RETRY))
    return ('The kernel only loads signed modules ({}) and mokutil '
            '--test-key {} does not say that the DKMS signing key is '
            'enrolled: check it with mokutil --list-enrolled, enroll it '
            '(mokutil --import {}), then {}{} {}'.format(
                host.signed_only, certificate, certificate, confirm,
                turn_off, RETRY))


# After the install: a kernel booted without the module.
#
# A kernel installed without its headers boots without the module DKMS
# builds for each kernel, so the driver does not load and no reboot
# helps. The charm mends it as it would before an install: the exact
# headers, then DKMS's own build for that kernel (a no-op where the
# headers' installation built it already). Nothing is loaded, nothing
# runs under guests (the driver is not loaded, so none has a vGPU); the
# next boot loads the module, as after a first install.

DKMS_AUTOINSTALL = 'dkms autoinstall -k {}'


def module_packages(installed: Optional[model.Installed],
                    running: model.RunningKernel) -> Optional[List[str]]:
    """What to install before DKMS builds the installed package's module
    for the running kernel ([]: nothing, its headers are there), or None
    where there is nothing to build: no package of the charm's, one whose
    module DKMS does not build, or the module is there (a reboot loads
    it). Asked only while the driver is not loaded."""
    if (installed is None or not installed.builds_kernel_module or
            running.nvidia_module):
        return None
    if running.headers:
        return []
    return [HEADERS_PACKAGE.format(running.release)]


def unbuilt_module(installed: Optional[model.Installed],
                   running: model.RunningKernel,
                   apt_failure: Optional[str] = None,
                   dkms_failure: Optional[str] = None) -> Optional[str]:
    """Why the driver cannot load on the running kernel after the charm
    tried to build its module (apt's or dkms's reason, if one failed),
    naming the fix; None once the module is there."""
    if module_packages(installed, running) is None:
        return None
    release = running.release
    headers = HEADERS_PACKAGE.format(release)
    build = DKMS_AUTOINSTALL.format(release)
    if apt_failure:
        fix = ('apt-get install {} failed ({}): add an apt source that has '
               'it and install it (DKMS builds the module as it installs; '
               '{} by hand)'.format(headers, apt_failure, build))
    elif not running.headers:
        fix = ('install {} (DKMS builds the module as it installs; {} by '
               'hand)'.format(headers, build))
    elif dkms_failure:
        fix = ('{} failed ({}): dkms status and the make.log under '
               '/var/lib/dkms/ say why; mend it and run it again'.format(
                   build, dkms_failure))
    else:
        fix = ('{} built none: dkms status lists the modules DKMS knows '
               '(reinstalling {} adds its own)'.format(
                   build, installed.package))
    return ('NVIDIA kernel module of {} {} not built for the running kernel '
            '{}, so the driver cannot load: {}; then reboot, or boot a '
            'kernel it was built for {}'.format(
                installed.package, installed.version, release, fix, RETRY))
