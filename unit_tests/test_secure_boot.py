"""Secure Boot, lockdown and DKMS's signing key, read from a host laid
out under a test root (nvidia_vgpu.host.secure_boot)."""
import os

import pytest

from nvidia_vgpu import model
from nvidia_vgpu.host import hostfs, secure_boot

GLOBAL = '8be4df61-93ca-11d2-aa0d-00e098032b8c'
CERTIFICATE = '/var/lib/shim-signed/mok/MOK.der'


@pytest.fixture
def host_root(tmp_path, monkeypatch):
    monkeypatch.setenv(hostfs.HOST_ROOT_VARIABLE, str(tmp_path))
    return str(tmp_path)


def _write(host_root, path, data):
    full = os.path.join(host_root, path.lstrip('/'))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, 'wb' if isinstance(data, bytes) else 'w') as stream:
        stream.write(data)


def _efivar(host_root, name, value):
    # efivarfs: 4 bytes of attributes (NV, BS, RT), then the value.
    _write(host_root, '/sys/firmware/efi/efivars/{}-{}'.format(name, GLOBAL),
           b'\x06\x00\x00\x00' + bytes([value]))


def test_legacy_bios_boot_has_no_secure_boot(host_root):
    assert secure_boot.secure_boot_enabled() is False


@pytest.mark.parametrize('variables, enabled', [
    ({'SecureBoot': 1, 'SetupMode': 0}, True),
    ({'SecureBoot': 1}, True),
    ({'SecureBoot': 0, 'SetupMode': 0}, False),
    # Setup Mode: no platform key, nothing is verified.
    ({'SecureBoot': 1, 'SetupMode': 1}, False),
    # EFI boot, variables not readable: counted as off.
    ({}, False),
])
def test_secure_boot_as_the_firmware_variables_say(host_root, variables,
                                                   enabled):
    os.makedirs(os.path.join(host_root, 'sys/firmware/efi/efivars'))
    for name, value in variables.items():
        _efivar(host_root, name, value)
    assert secure_boot.secure_boot_enabled() is enabled


def test_a_variable_with_attributes_only_is_unset(host_root):
    _write(host_root, '/sys/firmware/efi/efivars/SecureBoot-' + GLOBAL,
           b'\x06\x00\x00\x00')
    assert secure_boot.secure_boot_enabled() is False


@pytest.mark.parametrize('text, mode', [
    ('none [integrity] confidentiality\n', 'integrity'),
    ('[none] integrity confidentiality\n', 'none'),
    ('none integrity [confidentiality]\n', 'confidentiality'),
])
def test_lockdown_is_the_bracketed_mode(host_root, text, mode):
    _write(host_root, '/sys/kernel/security/lockdown', text)
    assert secure_boot.lockdown() == mode


def test_no_lockdown_file_means_the_kernel_does_not_say(host_root):
    assert secure_boot.lockdown() is None


def test_sig_enforce(host_root):
    assert secure_boot.sig_enforce() is False
    _write(host_root, '/sys/module/module/parameters/sig_enforce', 'N\n')
    assert secure_boot.sig_enforce() is False
    _write(host_root, '/sys/module/module/parameters/sig_enforce', 'Y\n')
    assert secure_boot.sig_enforce() is True


def test_dkms_signs_with_ubuntus_key_unless_configured(host_root):
    assert secure_boot.dkms_certificate('6.8.0-45-generic') == CERTIFICATE
    _write(host_root, '/etc/dkms/framework.conf',
           '# mok_certificate=/commented/out.der\n'
           'mok_signing_key="/root/dkms.key"\n'
           'mok_certificate="/root/dkms.der"\n')
    assert secure_boot.dkms_certificate('6.8.0-45-generic') == \
        '/root/dkms.der'
    # framework.conf.d is read after it, in name order.
    _write(host_root, '/etc/dkms/framework.conf.d/10-site.conf',
           "mok_certificate='/etc/keys/$kernelver.der'  # per kernel\n")
    assert secure_boot.dkms_certificate('6.8.0-45-generic') == \
        '/etc/keys/6.8.0-45-generic.der'


def test_certificate_exists_on_the_host(host_root):
    assert secure_boot.certificate_exists(CERTIFICATE) is False
    _write(host_root, CERTIFICATE, b'0\x82')
    assert secure_boot.certificate_exists(CERTIFICATE) is True


@pytest.mark.parametrize('stdout, stderr, exit, answer', [
    # Recent mokutil exits 1 when not enrolled, 0 when it is.
    (CERTIFICATE + ' is not enrolled\n', '', 1, model.NOT_ENROLLED),
    (CERTIFICATE + ' is already enrolled\n', '', 0, model.ENROLLED),
    (CERTIFICATE + ' is already in db\n', '', 0, model.ENROLLED),
    ('', CERTIFICATE + ' is already in the built-in trusted keyring\n', 255,
     model.ENROLLED),
    (CERTIFICATE + ' is already in the enrollment request\n', '', 0,
     model.PENDING),
    # Older mokutil exits the other way round; the words decide.
    (CERTIFICATE + ' is not enrolled\n', '', 0, model.NOT_ENROLLED),
    (CERTIFICATE + ' is already enrolled\n', '', 1, model.ENROLLED),
    (CERTIFICATE + ' is blocked in dbx\n', '', 0, None),
    ('', 'Not a valid x509 certificate\n', 255, None),
])
def test_key_enrolment_is_what_mokutil_says(fake_commands, stdout, stderr,
                                            exit, answer):
    fake_commands.set('mokutil', stdout=stdout, stderr=stderr, exit=exit)
    assert secure_boot.key_enrolment(CERTIFICATE) == answer
    assert fake_commands.calls == [['mokutil', '--test-key', CERTIFICATE]]


def test_without_mokutil_enrolment_is_unknown(fake_commands, monkeypatch):
    monkeypatch.setenv('PATH', fake_commands.bin)
    assert secure_boot.key_enrolment(CERTIFICATE) is None
