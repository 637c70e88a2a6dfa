"""The health verdict (nvidia_vgpu.health.verdict): what is broken, what
is only worth knowing, and how the action and the unit status say it."""
import json

import pytest

from nvidia_vgpu.health import verdict
from nvidia_vgpu.nova import live_migration
from nvidia_vgpu import model

V100_A = '0000:84:00.0'
V100_B = '0000:85:00.0'
A100 = '0000:41:00.0'
A100_VFS = ('0000:41:00.4', '0000:41:00.5', '0000:41:00.6')
UUID_A = '4b20d080-1b54-4048-85b3-a6a62d165c01'
UUID_B = '9f1c2a7e-3d5b-4e8f-a0c6-1b2d3e4f5a6b'
INSTALLED = model.Installed('ab' * 32, 'nvidia-vgpu-ubuntu-550',
                            '550.54.16', ('nvidia-vgpu-mgr',))


def v100(address, free=15):
    return model.GpuState(
        address, 'Tesla V100 PCIe 16GB', 0,
        types={address: {'nvidia-105': free, 'nvidia-108': 0}},
        names={'nvidia-105': 'GRID V100-1Q', 'nvidia-108': 'GRID V100-8Q'})


def v100_host(**changes):
    """Two V100s, one guest on each, as a healthy host shows them."""
    facts = dict(
        gpus=[v100(V100_A), v100(V100_B)], driver='550.54.16',
        installed=INSTALLED,
        published={'nvidia-105': [V100_A, V100_B]},
        wanted={'nvidia-105': [V100_A, V100_B]},
        mdevs=[(UUID_A, V100_A, 'nvidia-105'),
               (UUID_B, V100_B, 'nvidia-105')],
        mdev_users={UUID_A: ['instance-2a'], UUID_B: ['instance-2b']},
        recorded={UUID_A: (V100_A, 'nvidia-105'),
                  UUID_B: (V100_B, 'nvidia-105')},
        services={'nvidia-vgpu-mgr': 'active'})
    facts.update(changes)
    return verdict.HostFacts(**facts)


def a100(vfs=A100_VFS, free=1):
    return model.GpuState(
        A100, 'A100 PCIe 80GB', 16, vfs,
        types={vf: {'nvidia-697': free} for vf in vfs},
        names={'nvidia-697': 'GRID A100D-40C'})


def l40s(vf_types):
    return model.GpuState(A100, 'L40S', 8, A100_VFS, vendor_vfio=True,
                          types={vf: {'nvidia-1148': None}
                                 for vf in A100_VFS},
                          names={'nvidia-1148': 'NVIDIA L40S-2Q'},
                          vf_types=vf_types)


def codes(found):
    return [(finding.code, finding.broken) for finding in found]


def test_a_healthy_host_has_no_findings_and_describes_each_gpu():
    result = verdict.report(v100_host())
    assert result['healthy'] is True
    assert result['findings'] == []
    assert result['gpus'][0] == {
        'address': V100_A, 'model': 'Tesla V100 PCIe 16GB', 'mode': 'mdev',
        'vfs': None, 'nova_types': ['nvidia-105'],
        'wanted_types': ['nvidia-105'], 'profiles': ['GRID V100-1Q'],
        'created': 1, 'in_use': 1, 'free': 15, 'guests': ['instance-2a']}
    assert verdict.failure(result) is None
    assert verdict.status_message(verdict.drift(v100_host())) is None


def test_a_guest_whose_mdev_is_gone_is_broken_and_says_where_it_was():
    facts = v100_host(mdevs=[(UUID_A, V100_A, 'nvidia-105')])
    found = verdict.drift(facts)
    assert found == [verdict.Finding(
        verdict.GUEST_VGPU_MISSING, True,
        'Guest instance-2b has lost its vGPU {} (last seen on {} as '
        'nvidia-105)'.format(UUID_B, V100_B))]
    assert verdict.status_message(found) == 'Host drift: ' + found[0].message
    unrecorded = verdict.drift(facts._replace(recorded={}))
    assert unrecorded[0].message.endswith(
        '(the charm has no record of where it was)')
    result = verdict.report(facts)
    assert result['healthy'] is False
    assert result['gpus'][1]['created'] == 0
    assert result['gpus'][1]['guests'] == []
    assert verdict.failure(result) == 'Host not healthy: ' + found[0].message


def test_vfs_missing_while_the_driver_runs_is_drift_not_before():
    facts = verdict.HostFacts(
        gpus=[a100(vfs=())], driver='550.54.16', installed=INSTALLED,
        published={'nvidia-697': list(A100_VFS)})
    found = verdict.drift(facts)
    assert codes(found) == [(verdict.VFS_MISSING, True),
                            (verdict.NOVA_DEVICE_MISSING, True)]
    assert found[0].message.startswith(
        'SR-IOV GPU 0000:41:00.0 has no VFs (0 of 16) although the NVIDIA '
        'driver runs')
    assert found[1].message == (
        'Nova was given 3 devices this host does not have: 0000:41:00.4, '
        '0000:41:00.5, 0000:41:00.6 (nvidia-697)')
    assert verdict.status_message(found) == (
        'Host drift: ' + found[0].message +
        ' (and 1 more: run vgpu-health)')
    # Before the driver runs, the reboot is what to do, not the VFs.
    waiting = facts._replace(driver=None)
    assert verdict.VFS_MISSING not in [f.code for f in verdict.drift(waiting)]
    assert codes(verdict.findings(waiting))[0] == (
        verdict.REBOOT_REQUIRED, True)
    row = verdict.gpu_rows(facts)[0]
    assert (row['mode'], row['vfs'], row['nova_types']) == (
        'sriov', {'enabled': 0, 'total': 16}, [])


def test_nova_given_more_than_five_devices_names_three():
    facts = v100_host(published={'nvidia-105': [
        V100_A, V100_B, '0000:86:00.0', '0000:87:00.0', '0000:88:00.0',
        '0000:89:00.0']})
    found = verdict.drift(facts)
    assert [f.message for f in found] == [
        'Nova was given 4 devices this host does not have: 0000:86:00.0, '
        '0000:87:00.0, 0000:88:00.0 and 1 more (nvidia-105)']


def test_a_type_the_device_does_not_offer_is_drift_once_types_are_known():
    facts = v100_host(published={'nvidia-105': [V100_A],
                                 'nvidia-63': [V100_B]})
    assert [f.message for f in verdict.drift(facts)] == [
        'Nova was given nvidia-63 on 0000:85:00.0, which the device does '
        'not offer']
    # Types not read (the driver is not running): nothing to compare.
    unknown = facts._replace(gpus=[v100(V100_A)._replace(types={}),
                                   v100(V100_B)._replace(types={})])
    assert verdict.drift(unknown) == []


def test_sriov_free_instances_add_up_over_the_vfs_nova_was_given():
    gpu = a100(free=1)._replace(types={
        A100_VFS[0]: {'nvidia-697': 0}, A100_VFS[1]: {'nvidia-697': 1},
        A100_VFS[2]: {'nvidia-697': 1}})
    facts = verdict.HostFacts(
        gpus=[gpu], driver='550.54.16', installed=INSTALLED,
        published={'nvidia-697': list(A100_VFS[:2])},
        mdevs=[('c1d2', A100_VFS[0], 'nvidia-697')],
        mdev_users={'c1d2': ['instance-31']})
    row = verdict.gpu_rows(facts)[0]
    assert (row['mode'], row['vfs'], row['created'], row['in_use'],
            row['free'], row['guests']) == (
        'sriov-mdev', {'enabled': 3, 'total': 16}, 1, 1, 1,
        ['instance-31'])
    # Counts not read (update-status): free is unknown, not 0.
    cheap = facts._replace(gpus=[a100(free=None)])
    assert verdict.gpu_rows(cheap)[0]['free'] is None


def test_vendor_vfio_counts_typed_vfs_and_finds_untyped_ones():
    facts = verdict.HostFacts(
        gpus=[l40s({vf: 1148 for vf in A100_VFS})], driver='570.172.07',
        installed=INSTALLED, published={'nvidia-1148': list(A100_VFS)},
        pci_users={A100_VFS[0]: ['instance-40'],
                   '0000:c1:00.1': ['instance-nic']})
    assert verdict.drift(facts) == []
    row = verdict.gpu_rows(facts)[0]
    assert (row['mode'], row['created'], row['in_use'], row['free'],
            row['guests']) == ('vendor-vfio', 3, 1, 2, ['instance-40'])
    untyped = facts._replace(gpus=[l40s({A100_VFS[1]: 1148,
                                         A100_VFS[2]: 1155})])
    assert [(f.code, f.message) for f in verdict.drift(untyped)] == [
        (verdict.NOVA_TYPE_MISSING, 'Nova was given 0000:41:00.4 as '
         'nvidia-1148, but the VF has vGPU type none'),
        (verdict.NOVA_TYPE_MISSING, 'Nova was given 0000:41:00.6 as '
         'nvidia-1148, but the VF has vGPU type 1155'),
        (verdict.GUEST_VGPU_MISSING, 'Guest instance-40 has lost its vGPU '
         'on 0000:41:00.4 (the VF has no vGPU type)')]


def test_a_guest_on_a_vf_that_is_gone_is_found_from_the_charms_record():
    facts = verdict.HostFacts(
        gpus=[l40s({})._replace(vfs=())], driver='570.172.07',
        installed=INSTALLED, published={},
        recorded_vf_types={A100_VFS[0]: 1148},
        pci_users={A100_VFS[0]: ['instance-40']})
    assert [f.message for f in verdict.drift(facts)
            if f.code == verdict.GUEST_VGPU_MISSING] == [
        'Guest instance-40 has lost its vGPU on 0000:41:00.4 (the VF is '
        'gone)']


def test_stopped_services_and_failed_boot_units_are_broken_unless_paused():
    facts = v100_host(services={'nvidia-vgpu-mgr': 'inactive'},
                      boot_units={'nvidia-vgpu-sriov': 'failed',
                                  'nvidia-vgpu-restore-mdevs': 'inactive'})
    assert codes(verdict.findings(facts)) == [
        (verdict.SERVICE_STOPPED, True), (verdict.BOOT_UNIT_FAILED, True)]
    # Not drift: the unit's own service check shows stopped services.
    assert verdict.status_message(verdict.findings(facts)) is None
    paused = facts._replace(paused=True, boot_units={})
    assert codes(verdict.findings(paused)) == [(verdict.PAUSED, False)]
    assert verdict.report(paused)['healthy'] is True


def test_software_problems_come_first_and_each_is_broken():
    assert codes(verdict.findings(v100_host(installed=None))) == [
        (verdict.NO_SOFTWARE, True)]
    failed = verdict.findings(v100_host(
        installed=None, software_problem='apt-get could not install x'))
    assert [(f.code, f.message) for f in failed] == [
        (verdict.SOFTWARE_PROBLEM, 'apt-get could not install x')]
    older = verdict.findings(v100_host(driver='535.129.03'))
    assert older[0].message == (
        'Reboot required: installed NVIDIA software nvidia-vgpu-ubuntu-550 '
        '550.54.16, driver 535.129.03 is still running')
    blocked = verdict.findings(v100_host(config_problem='Invalid x: y'))
    assert codes(blocked) == [(verdict.CONFIG_BLOCKED, True)]


def test_changes_that_wait_are_notes_and_the_host_stays_healthy():
    held = model.HeldGpu(V100_B, ('nvidia-105',), ('nvidia-108',),
                         ['instance-2b'])
    facts = v100_host(
        held=[held], waiting_software=('nvidia-vgpu-ubuntu-550',
                                       '550.90.05'),
        wanted={'nvidia-105': [V100_A, V100_B], 'nvidia-108': []})
    assert codes(verdict.findings(facts)) == [
        (verdict.RETYPE_PENDING, False), (verdict.SOFTWARE_WAITS, False),
        (verdict.NOVA_NOT_GIVEN_YET, False)]
    result = verdict.report(facts)
    assert result['healthy'] is True
    assert result['gpus'][1]['wanted_types'] == ['nvidia-108']
    assert 'waits for 2 guests using vGPUs (instance-2a, instance-2b)' in \
        result['findings'][1]['message']
    # A shut-off guest is not waited for by the vGPU software.
    stopped = verdict.findings(facts._replace(
        running_guests=frozenset({'instance-2b'})))[1]
    assert 'waits for 1 guest using vGPUs (instance-2b)' in stopped.message
    table = verdict.table(result)
    assert ('nvidia-105 (GRID V100-1Q) -> nvidia-108' in
            table.splitlines()[2])
    assert table.splitlines()[-1] == 'Healthy'
    # Queens to Train: one type per host, so the whole host waits.
    whole = verdict.findings(facts._replace(held_whole_host=True))[0]
    assert 'the whole host waits' in whole.message and not whole.broken


def test_devices_nova_takes_beyond_the_mappings_are_a_note():
    # Before Caracal, one type goes to every GPU offering it: what that
    # Nova does, so the host stays healthy, and the note names the GPU.
    facts = v100_host(published={'nvidia-105': [V100_B]},
                      wanted={'nvidia-105': [V100_B]},
                      nova_adds={'nvidia-105': [V100_A]})
    found = verdict.findings(facts)
    assert codes(found) == [(verdict.NOVA_TAKES_MORE, False)]
    assert found[0].message.startswith(
        'Nova also gives nvidia-105 to {} ('.format(V100_A))
    assert verdict.report(facts)['healthy'] is True
    assert verdict.drift(facts) == []


def test_migration_readiness_compares_upstream_versions():
    ready = live_migration.readiness(model.Versions(
        '3:29.2.0-0ubuntu1', '10.0.0-2ubuntu8.4', '1:8.2.2+ds-0ubuntu1.4',
        '6.8.0-49-generic'))
    assert ready['ready'] is True
    assert [(c['component'], c['version'], c['minimum'])
            for c in ready['checks']] == [
        ('nova', '29.2.0', '29.0.0'), ('libvirt', '10.0.0', '8.6.0'),
        ('qemu', '8.2.2', '8.1.0'), ('linux', '6.8.0', '5.18')]
    jammy = live_migration.readiness(model.Versions(
        '3:25.2.1-0ubuntu2', '8.0.0-1ubuntu7.10', '1:6.2+dfsg-2ubuntu6.22',
        '5.15.0-125-generic'))
    assert jammy['ready'] is False
    assert [c['ok'] for c in jammy['checks']] == [False] * 4
    # Exactly the minimum is enough; a missing package is not.
    edge = live_migration.readiness(model.Versions(
        '3:29.0.0-0ubuntu1', None, '1:8.1.0+ds-1', '5.18.0-1-generic'))
    assert [(c['version'], c['ok']) for c in edge['checks']] == [
        ('29.0.0', True), (None, False), ('8.1.0', True), ('5.18.0', True)]


CARACAL_NOBLE = model.Versions(
    '3:29.2.0-0ubuntu1', '10.0.0-2ubuntu8.4', '1:8.2.2+ds-0ubuntu1.4',
    '6.8.0-49-generic', boards=('10de:2330:10de:16c1',))


@pytest.mark.parametrize('post_copy, ready, words', [
    (False, True, 'post-copy off'),
    # Nova requires it off on vGPU hosts: permitted is not ready, and
    # the line says which principal option turns it off.
    (True, False, "post-copy permitted (nova-compute's "
     "live-migration-permit-post-copy must be false)"),
    (None, False, 'post-copy not known (no /etc/nova/nova.conf)'),
])
def test_post_copy_must_be_off_for_vgpu_guests_to_migrate(post_copy, ready,
                                                          words):
    found = live_migration.readiness(
        CARACAL_NOBLE._replace(post_copy=post_copy), driver='550.54.16')
    assert found['ready'] is ready
    assert found['post_copy'] == {'permitted': post_copy,
                                  'ok': post_copy is False}
    assert words in live_migration.line(found)


def test_guests_go_only_to_hosts_of_the_same_manager_and_boards():
    found = live_migration.readiness(CARACAL_NOBLE, driver='550.54.16')
    assert found['group'] == '550.54.16/10de:2330:10de:16c1'
    assert live_migration.line(found).endswith(
        '; only to hosts of group 550.54.16/10de:2330:10de:16c1 (the same '
        'vGPU Manager and board)')
    # An H200 NVL host is another group, as is a host one driver ahead.
    assert live_migration.group('550.54.16', ['10de:233b']) != \
        found['group']
    assert live_migration.group('550.90.05', CARACAL_NOBLE.boards) != \
        found['group']
    # No driver running or no GPU: no group to name.
    assert live_migration.readiness(CARACAL_NOBLE)['group'] is None
    assert live_migration.group('550.54.16', []) is None


def test_typed_vfs_are_held_to_nova_s_vfio_variant_minimums():
    # What the unit's status says too (vfio_migration.py): libvirt 9.6.0
    # meets the mdev minimum, not this one.
    older = model.Versions('3:31.0.0-0ubuntu1~cloud0', '9.6.0-1ubuntu1',
                           '1:8.2.2+ds-0ubuntu1', '6.8.0-49-generic')
    assert live_migration.readiness(older)['ready'] is True
    vfio = live_migration.readiness(older, vendor_vfio=True)
    assert vfio['ready'] is False
    assert [(c['component'], c['minimum'], c['ok'])
            for c in vfio['checks']] == [
        ('nova', '31.0.0', True), ('libvirt', '10.0.0', False),
        ('qemu', '8.2.2', True), ('linux', '5.18', True)]
    caracal = live_migration.readiness(model.Versions(
        '3:29.2.0-0ubuntu1', '10.0.0-2ubuntu8', '1:8.2.2+ds-0ubuntu1',
        '6.8.0-49-generic'), vendor_vfio=True)
    assert [c['ok'] for c in caracal['checks']] == [False, True, True, True]


def test_the_table_has_a_line_per_gpu_then_findings_and_verdict():
    facts = v100_host(mdevs=[(UUID_A, V100_A, 'nvidia-105')])
    result = verdict.report(facts, model.Versions(
        '3:25.2.1-0ubuntu2', None, None, '5.15.0-125-generic'),
        nvidia_smi=None)
    lines = verdict.table(result).splitlines()
    assert lines[0].split() == ['GPU', 'model', 'mode', 'VFs', 'Nova',
                                'type', 'created', 'in', 'use', 'free',
                                'guests']
    assert lines[1].split()[:1] == [V100_A]
    assert lines[2].split()[-4:] == ['0', '0', '15', '-']
    assert lines[3] == ('vGPU Manager: nvidia-vgpu-ubuntu-550 550.54.16 '
                        'installed; driver 550.54.16 running')
    assert lines[5].startswith('BROKEN: Guest instance-2b has lost')
    assert lines[6] == (
        'Live migration: not ready (nova 25.2.1 < 29.0.0, libvirt not found '
        '(needs 8.6.0), qemu not found (needs 8.1.0), linux 5.15.0 < 5.18, '
        'post-copy off)')
    assert lines[-2:] == ['nvidia-smi: not on this host',
                          'Unhealthy: 1 problem']
    # The structured result is JSON as it stands.
    assert json.loads(json.dumps(result, sort_keys=True)) == result


def test_a_host_without_gpus_is_healthy():
    result = verdict.report(verdict.HostFacts(
        gpus=[], driver=None, installed=None, published=None))
    assert result['healthy'] is True
    assert verdict.table(result).splitlines()[0] == (
        'No NVIDIA GPU on this host.')
