"""An in-place OpenStack upgrade, any release to any later one: every
vGPU a guest uses still comes back at the next reboot, whichever hook
comes first after the upgrade (decide's boot plan, pure).

Before Dalmatian (nova 30) nothing defines vGPUs and the charm's restore
unit recreates them at boot. From Dalmatian Nova defines the vGPUs it
creates and recreates none; those created before the upgrade are
transient. The scenarios in scenarios/openstack-upgrade/ tell the same
story end to end.
"""
import itertools

import pytest

from nvidia_vgpu.hook_plan import decide, facts as hook_facts
from nvidia_vgpu.nova import releases
from snapshots import GUEST_A, GUEST_B, host, v100, with_mdev_guests
from test_precedence import RELATED, UNIT, V100_MAPPINGS

DALMATIAN = 30


def nova_common(major: int) -> str:
    return '3:{}.0.0-0ubuntu1~cloud0'.format(major)


def guests_at(major: int, persistent: bool):
    """Two V100s with two guests' vGPUs, under this nova; persistent:
    defined (made by Nova 30 or later, or defined by the charm)."""
    snapshot = with_mdev_guests(
        host(v100('0000:84:00.0'), v100('0000:85:00.0'),
             nova=nova_common(major)),
        ('0000:84:00.0', 'nvidia-105', [GUEST_A]),
        ('0000:85:00.0', 'nvidia-105', [GUEST_B]))
    if persistent:
        snapshot = snapshot._replace(persistent_mdevs=frozenset(
            snapshot.mdev_users))
    return snapshot


def boot_plan(snapshot):
    return decide.decide(hook_facts.HookFacts(snapshot, RELATED),
                         {'vgpu-device-mappings': V100_MAPPINGS},
                         UNIT).boot


def comes_back(plan, snapshot):
    """The in-use vGPUs the next boot brings back: defined ones (mdevctl
    starts them), those the hook is about to define, and every one where
    the restore unit recreates them."""
    if plan.restores_mdevs:
        return set(snapshot.mdev_users)
    return set(snapshot.persistent_mdevs) | {
        mdev.uuid for mdev in plan.to_define}


MAJORS = [major for major, _ in releases.NOVA_MAJOR_RELEASES]
UPGRADES = [pytest.param(old, new, id='{}-to-{}'.format(
    dict(releases.NOVA_MAJOR_RELEASES)[old],
    dict(releases.NOVA_MAJOR_RELEASES)[new]))
    for old, new in itertools.combinations(MAJORS, 2)]


@pytest.mark.parametrize('old,new', UPGRADES)
def test_after_an_upgrade_every_guest_vgpu_comes_back(old, new):
    snapshot = guests_at(new, persistent=old >= DALMATIAN)
    plan = boot_plan(snapshot)
    assert comes_back(plan, snapshot) == set(snapshot.mdev_users)


@pytest.mark.parametrize('old,new', UPGRADES)
def test_once_defined_the_restore_unit_retires_and_nothing_more_is_done(
        old, new):
    snapshot = guests_at(new, persistent=old >= DALMATIAN)
    defined = snapshot._replace(persistent_mdevs=frozenset(
        set(snapshot.persistent_mdevs) |
        {mdev.uuid for mdev in boot_plan(snapshot).to_define}))
    plan = boot_plan(defined)
    assert plan.to_define == ()
    # Before Dalmatian the restore unit is what brings vGPUs back.
    assert plan.restores_mdevs is (new < DALMATIAN)


@pytest.mark.parametrize('major', [major for major in MAJORS
                                   if major < DALMATIAN])
def test_before_dalmatian_the_charm_defines_nothing(major):
    # Nova before 30 neither defines nor starts defined vGPUs; it keeps
    # its own way, and the restore unit recreates them.
    plan = boot_plan(guests_at(major, persistent=False))
    assert plan.to_define == ()
    assert plan.restores_mdevs


def test_a_vgpu_missing_now_keeps_the_restore_unit_on():
    # From Dalmatian, a guest whose vGPU is gone (no definition, nothing
    # running to define) is recreated at the next boot from the record.
    snapshot = guests_at(31, persistent=False)
    missing = snapshot._replace(mdevs=snapshot.mdevs[1:])
    plan = boot_plan(missing)
    assert [mdev.uuid for mdev in plan.to_define] == [
        snapshot.mdevs[1].uuid]
    assert plan.restores_mdevs


def test_vgpus_no_guest_uses_are_left_to_nova():
    snapshot = guests_at(31, persistent=False)._replace(mdev_users={})
    plan = boot_plan(snapshot)
    assert plan.to_define == ()
    assert not plan.restores_mdevs
