"""Whether the running kernel loads only signed modules, and the key
DKMS signs modules with: the firmware's Secure Boot variables, the
kernel's lockdown and module parameters, DKMS's configuration, mokutil.

Read as the tools the vGPU Manager's install relies on read them, so the
charm can tell before installing whether the module DKMS builds would be
refused at boot ("Key was rejected by service").
"""
import glob
import os
import re
import subprocess
from typing import Optional

from nvidia_vgpu import model
from nvidia_vgpu.host.hostfs import host_path

# No /sys/firmware/efi: booted by a legacy BIOS, no Secure Boot.
EFI_DIR = '/sys/firmware/efi'
# The EFI global variables, as efivarfs shows them: 4 bytes of
# attributes, then the value (one byte, 1 = on).
EFI_GLOBAL = '8be4df61-93ca-11d2-aa0d-00e098032b8c'
EFIVARS = '/sys/firmware/efi/efivars/{}-' + EFI_GLOBAL
# The kernel's own word on it: under lockdown ("none [integrity]
# confidentiality"), every module must carry a valid signature. Ubuntu's
# kernels lock down when booted with Secure Boot, unless shim's
# validation is turned off (mokutil --disable-validation).
LOCKDOWN = '/sys/kernel/security/lockdown'
# Y with module.sig_enforce=1 (or a kernel built to enforce), with or
# without Secure Boot.
SIG_ENFORCE = '/sys/module/module/parameters/sig_enforce'
# Where DKMS finds the certificate of the key it signs with; Ubuntu's
# DKMS uses the key shim-signed's update-secureboot-policy creates.
DKMS_FRAMEWORK = ('/etc/dkms/framework.conf',
                  '/etc/dkms/framework.conf.d/*.conf')
_MOK_CERTIFICATE = re.compile(
    r'^\s*mok_certificate=(["\']?)(?P<path>[^"\'#]*)\1\s*(?:#.*)?$')

# mokutil --test-key's answers. Its words have stayed; its exit status
# has not (older releases exit 1 for an enrolled key, newer ones for a
# key that is not), and older releases call an imported key waiting for
# confirmation enrolled.


def _efi_variable(name: str) -> Optional[int]:
    """The first byte of an EFI global variable's value; None if unset
    or unreadable."""
    try:
        with open(host_path(EFIVARS.format(name)), 'rb') as stream:
            data = stream.read()
    except OSError:
        return None
    return data[4] if len(data) > 4 else None


def secure_boot_enabled() -> bool:
    """Whether the firmware booted with Secure Boot enforced: SecureBoot
    is 1 and the platform is not in Setup Mode (as mokutil --sb-state
    decides). A legacy BIOS boot, or variables that cannot be read,
    count as off."""
    if not os.path.isdir(host_path(EFI_DIR)):
        return False
    return _efi_variable('SecureBoot') == 1 and \
        _efi_variable('SetupMode') != 1


def lockdown() -> Optional[str]:
    """The kernel's lockdown mode (none, integrity, confidentiality);
    None where the kernel does not say (no lockdown LSM, securityfs not
    mounted)."""
    try:
        with open(host_path(LOCKDOWN)) as stream:
            text = stream.read()
    except OSError:
        return None
    match = re.search(r'\[(\w+)\]', text)
    return match.group(1) if match else None


def sig_enforce() -> bool:
    """Whether the kernel refuses unsigned modules whatever the boot."""
    try:
        with open(host_path(SIG_ENFORCE)) as stream:
            return stream.read().strip() == 'Y'
    except OSError:
        return False


def dkms_certificate(release: str) -> str:
    """The certificate of the key DKMS signs modules with: the last
    mok_certificate its configuration sets ($kernelver is the kernel
    built for), else Ubuntu's default."""
    certificate = model.UBUNTU_DKMS_CERTIFICATE
    paths = [host_path(DKMS_FRAMEWORK[0])] + sorted(
        glob.glob(host_path(DKMS_FRAMEWORK[1])))
    for path in paths:
        try:
            with open(path) as stream:
                lines = stream.read().splitlines()
        except OSError:
            continue
        for line in lines:
            match = _MOK_CERTIFICATE.match(line)
            if match and match.group('path').strip():
                certificate = match.group('path').strip()
    return certificate.replace('${kernelver}', release).replace(
        '$kernelver', release)


def certificate_exists(certificate: str) -> bool:
    return os.path.isfile(host_path(certificate))


def key_enrolment(certificate: str) -> Optional[str]:
    """What `mokutil --test-key` says of a certificate: model.ENROLLED (in
    shim's MOK list, the firmware's db or the kernel's built-in keys),
    model.PENDING (imported, waiting for someone at the console to confirm it
    at the next boot), model.NOT_ENROLLED; None when mokutil is missing or
    gives no such answer (a blocked key, unreadable EFI variables)."""
    try:
        done = subprocess.run(['mokutil', '--test-key', certificate],
                              stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE,
                              universal_newlines=True)
    except FileNotFoundError:
        return None
    said = done.stdout + done.stderr
    if 'is not enrolled' in said:
        return model.NOT_ENROLLED
    if 'is already in the enrollment request' in said:
        return model.PENDING
    if any(answer in said for answer in (
            'is already enrolled', 'is already in db',
            'is already in the built-in trusted keyring')):
        return model.ENROLLED
    return None
