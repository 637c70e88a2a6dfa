"""What the host offers an install: the attached resource file, and the
kernel, headers and signing key a DKMS build of it would meet."""
import hashlib
import os
from typing import Callable, Optional

from nvidia_vgpu import model
from nvidia_vgpu.host import dpkg, kernel, secure_boot


def attached_resource(path: Optional[str]) -> Optional[model.Resource]:
    """The file Juju handed out (None: not attached), its size, digest and
    what it says of itself as a package (None: not a package)."""
    if not path or not os.path.isfile(path):
        return None
    size = os.path.getsize(path)
    digest = hashlib.sha256()
    with open(path, 'rb') as stream:
        for block in iter(lambda: stream.read(1 << 20), b''):
            digest.update(block)
    return model.Resource(size, digest.hexdigest(),
                          dpkg.read_deb(path) if size else None)


def build_host(signed_only: Callable[[bool, Optional[str], bool],
                                     Optional[str]],
               mokutil_installed: Callable[[], bool]) -> model.BuildHost:
    """The running kernel, its headers and its rule on unsigned modules;
    the signing key and mokutil only where that rule asks for signatures
    (elsewhere no command runs).

    signed_only: the policy that turns Secure Boot, lockdown and
    sig_enforce into a reason (module_build.signed_only).
    """
    release = kernel.running_release()
    refused = signed_only(secure_boot.secure_boot_enabled(),
                          secure_boot.lockdown(), secure_boot.sig_enforce())
    certificate = secure_boot.dkms_certificate(release)
    exists = secure_boot.certificate_exists(certificate)
    mokutil = bool(refused) and mokutil_installed()
    return model.BuildHost(
        release, kernel.headers_installed(release), refused,
        certificate, exists, mokutil,
        secure_boot.key_enrolment(certificate)
        if refused and exists and mokutil else None)
