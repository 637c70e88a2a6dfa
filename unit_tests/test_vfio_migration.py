"""Whether typed VFs can be live_migratable (nova/vfio_migration.py):
Nova's minimums against the Debian versions dpkg reports."""
import pytest

from nvidia_vgpu.nova import vfio_migration

NOBLE_LIBVIRT = '10.0.0-2ubuntu8'
NOBLE_QEMU = '1:8.2.2+ds-0ubuntu1'


@pytest.mark.parametrize('libvirt, qemu, short', [
    (NOBLE_LIBVIRT, NOBLE_QEMU, []),
    ('10.0.0-2ubuntu8.4', '1:8.2.2+ds-0ubuntu1.4', []),
    ('10.0-1', NOBLE_QEMU, []),     # 10.0 is 10.0.0, as libvirt counts
    ('11.6.0-0ubuntu1~cloud0', '1:10.1.0+ds-5ubuntu1', []),
    ('9.6.0-1ubuntu1', NOBLE_QEMU, ['libvirt']),
    (NOBLE_LIBVIRT, '1:8.2.1+ds-0ubuntu1', ['QEMU']),
    ('8.0.0-1ubuntu7', '1:6.2+dfsg-2ubuntu6', ['libvirt', 'QEMU']),
    (None, NOBLE_QEMU, ['libvirt']),
    (NOBLE_LIBVIRT, None, ['QEMU']),
    ('garbage', '', ['libvirt', 'QEMU']),
])
def test_both_minimums_are_needed_and_unknown_is_not_met(
        libvirt, qemu, short):
    assert vfio_migration.shortfall(libvirt, qemu) == short


def test_nova_s_minimums():
    # nova/virt/libvirt/driver.py (Nova 34):
    # MIN_VFIO_PCI_VARIANT_LIBVIRT_VERSION = (10, 0, 0),
    # MIN_VFIO_PCI_VARIANT_QEMU_VERSION = (8, 2, 2); nova_tests check
    # the installed Nova's own values.
    assert dict(vfio_migration.MINIMUMS) == {'libvirt': (10, 0, 0),
                                             'QEMU': (8, 2, 2)}


@pytest.mark.parametrize('libvirt, qemu, text', [
    ('9.0.0-0ubuntu1', NOBLE_QEMU, 'this host has libvirt 9.0.0 and QEMU '
     '8.2.2; Nova needs libvirt 10.0.0 and QEMU 8.2.2'),
    (None, '1:6.2+dfsg-2ubuntu6', 'this host has no libvirt package and '
     'QEMU 6.2; Nova needs libvirt 10.0.0 and QEMU 8.2.2'),
])
def test_what_a_status_names(libvirt, qemu, text):
    assert vfio_migration.found_and_needed(libvirt, qemu) == text
