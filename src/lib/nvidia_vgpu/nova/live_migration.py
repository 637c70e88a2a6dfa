"""Whether this host's vGPU guests can live-migrate, and to which hosts:
what both the vgpu-health and list-vgpu-types actions say.

Nova's documented minimums (libvirt, QEMU, the kernel, Nova itself; on
the vendor-specific VFIO driver those for VFIO variant drivers) and its
requirement that post-copy is off on vGPU hosts
(../shared/reference/lifecycle-facts.md, 5), and NVIDIA's: the same vGPU
Manager on source and target, and the same board. Information, never a
failure: many clouds do not migrate vGPU guests.

Pure: the versions as installed (model.Versions) in, a record and a line
out.
"""
from typing import Dict, Mapping, Optional, Sequence

from nvidia_vgpu import model
from nvidia_vgpu.nova import releases, vfio_migration

# Live migration of vGPU guests: Nova's documented minimums (Caracal).
MIGRATION_MINIMUMS = (('nova', (29, 0, 0)), ('libvirt', (8, 6, 0)),
                      ('qemu', (8, 1, 0)), ('linux', (5, 18)))
# On NVIDIA's vendor-specific VFIO driver a vGPU is a PCI device: Nova
# migrates it from Epoxy, on libvirt and QEMU at its minimums for VFIO
# variant drivers (vfio_migration.py; the kernel's as above).
VFIO_MIGRATION_MINIMUMS = (
    ('nova', (31, 0, 0)),
    ('libvirt', dict(vfio_migration.MINIMUMS)['libvirt']),
    ('qemu', dict(vfio_migration.MINIMUMS)['QEMU']), ('linux', (5, 18)))


def readiness(versions: model.Versions, vendor_vfio: bool = False,
              driver: Optional[str] = None) -> Dict[str, object]:
    """Each component against Nova's minimum for migrating vGPU guests
    (vendor_vfio: a GPU here runs the vendor-specific VFIO driver, whose
    typed VFs have their own), nova-compute's post-copy setting (Nova
    requires it off on vGPU hosts), whether all are met, and the group of
    hosts this one's guests can go to: NVIDIA migrates a vGPU only to the
    same vGPU Manager version (driver: the one running) on the same
    board (not H100 to H200 or H800, nor 80 GB PCIe to 94 GB NVL), which
    Nova does not know: operators group hosts by it."""
    checks = []
    for component, minimum in (VFIO_MIGRATION_MINIMUMS if vendor_vfio
                               else MIGRATION_MINIMUMS):
        version = getattr(versions, component)
        found = releases.upstream_tuple(version) if version else ()
        checks.append({
            'component': component,
            'version': releases.upstream_version(version)
            if version else None,
            'minimum': '.'.join(str(part) for part in minimum),
            'ok': bool(found) and found >= minimum})
    post_copy = versions.post_copy
    return {'ready': all(check['ok'] for check in checks) and
            post_copy is False,
            'checks': checks,
            'post_copy': {'permitted': post_copy,
                          'ok': post_copy is False},
            'group': group(driver, versions.boards)}


def group(driver: Optional[str], boards: Sequence[str]) -> Optional[str]:
    """What a target host must share with this one for its vGPU guests
    to live-migrate there: '<vGPU Manager>/<board ids>' (None without a
    running driver or a GPU)."""
    if not driver or not boards:
        return None
    return '{}/{}'.format(driver, '+'.join(sorted(boards)))


def line(migration: Mapping[str, object]) -> str:
    """'Live migration: ready (nova ..., post-copy off); only to hosts of
    group <group> (...)' for both actions' output."""
    post_copy = migration.get('post_copy') or {}
    permitted = post_copy.get('permitted')  # type: ignore
    words = [_check(check) for check in migration['checks']] + [
        'post-copy off' if permitted is False else
        "post-copy permitted (nova-compute's "
        "live-migration-permit-post-copy must be false)" if permitted
        else 'post-copy not known (no /etc/nova/nova.conf)']
    line = 'Live migration: {} ({})'.format(
        'ready' if migration['ready'] else 'not ready', ', '.join(words))
    if migration.get('group'):
        line += ('; only to hosts of group {} (the same vGPU Manager and '
                 'board)'.format(migration['group']))
    return line


def _check(check: Mapping[str, object]) -> str:
    """'qemu 8.2.2 >= 8.1.0', 'qemu 6.2 < 8.1.0', 'qemu not found
    (needs 8.1.0)'."""
    if check['version'] is None:
        return '{} not found (needs {})'.format(check['component'],
                                                check['minimum'])
    return '{} {} {} {}'.format(check['component'], check['version'],
                                '>=' if check['ok'] else '<',
                                check['minimum'])
