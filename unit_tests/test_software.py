"""Whether an attached resource may be installed, and when to install."""
import pytest

from nvidia_vgpu.model import DebInfo
from nvidia_vgpu.driver import software
from nvidia_vgpu import model

SHA = 'ab' * 32
HOST_DEB = DebInfo('nvidia-vgpu-ubuntu-550', '550.54.16', 'amd64',
                   ('nvidia-vgpu-mgr', 'nvidia-vgpud'))


def resource(deb=HOST_DEB, size=1 << 20, sha256=SHA):
    return model.Resource(size, sha256, deb)


@pytest.mark.parametrize('attached', [None, resource(size=0, deb=None)])
def test_missing_or_placeholder_resource_gives_the_attach_command(attached):
    problem = software.resource_problem(attached)
    assert problem.startswith('NVIDIA GPU found but no vGPU host software')
    assert ('juju attach-resource nova-compute-nvidia-vgpu '
            'nvidia-vgpu-software=') in problem


def test_file_dpkg_deb_cannot_read_is_refused():
    problem = software.resource_problem(resource(deb=None))
    assert 'not a Debian package' in problem
    assert 'nvidia-vgpu-ubuntu-*' in problem


def test_guest_driver_is_named_and_refused():
    guest = DebInfo('nvidia-linux-grid-550', '550.54.15', 'amd64', ())
    problem = software.resource_problem(resource(deb=guest))
    assert 'nvidia-linux-grid-550 550.54.15' in problem
    assert 'the vGPU guest driver' in problem
    assert 'vGPU Manager for Ubuntu KVM' in problem


def test_any_other_package_is_named_and_refused():
    other = DebInfo('hello', '2.10-3', 'amd64', ())
    problem = software.resource_problem(resource(deb=other))
    assert 'is hello 2.10-3 (not the vGPU host software)' in problem


def test_pinned_sha256_must_match():
    problem = software.resource_problem(resource(), pinned_sha256='cd' * 32)
    assert problem.startswith('Resource nvidia-vgpu-software has sha256 '
                              'abababababab, not the cdcdcdcdcdcd set in '
                              'nvidia-vgpu-software-sha256')


def test_pinned_sha256_is_compared_case_and_space_blind():
    assert software.resource_problem(
        resource(), pinned_sha256=' ' + SHA.upper() + '\n') is None


def test_host_software_passes():
    assert software.resource_problem(resource()) is None


def test_first_install_is_needed():
    assert software.needs_install(resource(), None, None)


def test_same_revision_still_installed_is_not_reinstalled():
    installed = model.Installed(SHA, HOST_DEB.package, HOST_DEB.version,
                                HOST_DEB.services)
    assert not software.needs_install(resource(), installed, '550.54.16')


def test_new_revision_is_installed():
    installed = model.Installed('cd' * 32, HOST_DEB.package, '550.40.07',
                                HOST_DEB.services)
    assert software.needs_install(resource(), installed, '550.40.07')


def test_package_removed_behind_the_charms_back_is_reinstalled():
    installed = model.Installed(SHA, HOST_DEB.package, HOST_DEB.version,
                                HOST_DEB.services)
    assert software.needs_install(resource(), installed, None)


def test_installed_record_survives_a_round_trip_through_unitdata():
    installed = model.Installed(SHA, HOST_DEB.package, HOST_DEB.version,
                                HOST_DEB.services)
    assert model.Installed.from_dict(installed.to_dict()) == installed
    assert model.Installed.from_dict(None) is None
    prebuilt = installed._replace(builds_kernel_module=False)
    assert model.Installed.from_dict(prebuilt.to_dict()) == prebuilt


def test_a_record_kept_before_dkms_was_remembered_says_dkms_builds():
    """The vGPU Manager for Ubuntu KVM builds its module with DKMS: a
    unit upgraded from a revision that did not remember it still mends
    a kernel booted without the module."""
    old = {'sha256': SHA, 'package': HOST_DEB.package,
           'version': HOST_DEB.version, 'services': ['nvidia-vgpu-mgr']}
    assert model.Installed.from_dict(old).builds_kernel_module is True


@pytest.mark.parametrize('running, tail', [
    (None, 'the NVIDIA driver is not loaded yet'),
    ('550.40.07', 'driver 550.40.07 is still running'),
])
def test_reboot_message_says_installed_nvidia_software(running, tail):
    installed = model.Installed(SHA, HOST_DEB.package, HOST_DEB.version,
                                HOST_DEB.services)
    assert software.reboot_message(installed, running) == (
        'Reboot required: installed NVIDIA software nvidia-vgpu-ubuntu-550 '
        '550.54.16, ' + tail)
