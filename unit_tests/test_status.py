"""The unit's waiting and ready lines (status.py), in tables.

Each row is a plan as nova/plan.py returns it, written by hand with only
the fields the line reads, and the status an operator sees. The plans
that lead to them from a host are test_plan.py's.
"""
import pytest

from nvidia_vgpu import model, status
from nvidia_vgpu.nova import guest_safety, plan
from snapshots import (
    A40_51, A40_52, CARACAL, a100, a40, host, l40s, rules, shut_off, t4, v100,
    with_mdev_guests)

SOFTWARE = {'package': 'nvidia-vgpu-ubuntu-550', 'version': '550.90.05'}
SOFTWARE_WAITS = (
    'Attached vGPU software nvidia-vgpu-ubuntu-550 550.90.05 waits for {} '
    'using vGPUs ({}): it installs once {} here (stop, migrate, resize, '
    'shelve-offload or delete {}), or run install-vgpu-software with '
    'force=true')
ONE, MANY = ('it no longer runs', 'it'), ('they no longer run', 'them')
NOT_GIVEN = ("Nova has not been given this host's vGPU settings yet (they "
             'go at the next hook)')
HELD_A100 = model.HeldGpu('0000:41:00.0', ('nvidia-697',), ('nvidia-692',),
                          ['instance-0000003a'])
CLASS_HELD = model.HeldClass('nvidia-566', 'VGPU', 'CUSTOM_VGPU_A40_48Q',
                             ['instance-0000002a'])
GUESTS = ['instance-{}'.format(n) for n in range(1, 6)]


def nova_plan(**fields) -> model.NovaPlan:
    return model.NovaPlan(**dict({'sections': {}, 'problem': None,
                                  'absent': []}, **fields))


@pytest.mark.parametrize('plan, software, guests, given, expected', [
    pytest.param(nova_plan(), None, [], True, None,
                 id='nova has it all: nothing to wait for'),
    pytest.param(nova_plan(), None, [], False, NOT_GIVEN,
                 id='not given yet'),
    # guests/a100-retype-waits.yaml, step 7
    pytest.param(
        nova_plan(held=[HELD_A100]), SOFTWARE, ['instance-0000003a'], True,
        SOFTWARE_WAITS.format('1 guest', 'instance-0000003a', *ONE) +
        '; Change of vgpu-device-mappings waits for guests using vGPUs: '
        '0000:41:00.0 keeps nvidia-697 for instance-0000003a (wanted: '
        'nvidia-692); it applies once they are gone (migrate, resize, '
        'shelve-offload or delete them; a stopped guest keeps its vGPU)',
        id='software and a retype wait for the same guest'),
    pytest.param(
        nova_plan(held=[model.HeldGpu('0000:84:00.0', (), ('nvidia-105',),
                                      GUESTS)]), None, GUESTS, False,
        'Change of vgpu-device-mappings waits for guests using vGPUs: '
        '0000:84:00.0 keeps its vGPUs for instance-1, instance-2, '
        'instance-3 and 2 more (wanted: nvidia-105); it applies once they '
        'are gone (migrate, resize, shelve-offload or delete them; a '
        'stopped guest keeps its vGPU); ' + NOT_GIVEN,
        id='five guests named as three and 2 more, and not given yet'),
    pytest.param(
        nova_plan(class_held=[CLASS_HELD]), SOFTWARE, GUESTS[:2], True,
        SOFTWARE_WAITS.format('2 guests', 'instance-1, instance-2',
                              *MANY) + '; Change of vgpu-resource-class '
        'waits for guests using vGPUs: nvidia-566 keeps VGPU for '
        'instance-0000002a (wanted: CUSTOM_VGPU_A40_48Q); it applies once '
        'they are gone (migrate, resize, shelve-offload or delete them; a '
        'stopped guest keeps its vGPU)',
        id='software and a class change wait'),
])
def test_waiting_for_nova(plan, software, guests, given, expected):
    assert status.waiting_for_nova(plan, software, guests, given) == (
        None if expected is None else ('waiting', expected))


V100_GUESTS = with_mdev_guests(
    host(v100('0000:84:00.0'), v100('0000:85:00.0')),
    ('0000:84:00.0', 'nvidia-108', ['instance-0000002a']),
    ('0000:84:00.0', 'nvidia-108', ['instance-0000002b']))
RETYPE_WAITS = (
    'Change of vgpu-device-mappings waits for guests using vGPUs: '
    '0000:84:00.0 keeps nvidia-108 for {} (wanted: nvidia-105); it applies '
    'once they are gone (migrate, resize, shelve-offload or delete them; a '
    'stopped guest keeps its vGPU)')


@pytest.mark.parametrize('snapshot, expected', [
    # guests/v100-shutoff-guest.yaml, steps 13 and 14
    pytest.param(
        shut_off(V100_GUESTS, 'instance-0000002a'),
        SOFTWARE_WAITS.format('1 guest', 'instance-0000002b', *ONE) + '; '
        + RETYPE_WAITS.format('instance-0000002a, instance-0000002b'),
        id='the new driver waits for the running guest, the retype for '
           'both'),
    pytest.param(
        shut_off(V100_GUESTS, 'instance-0000002a', 'instance-0000002b'),
        RETYPE_WAITS.format('instance-0000002a, instance-0000002b'),
        id='both shut off: only the retype waits'),
])
def test_running_or_only_defined(snapshot, expected):
    """What the unit says with guests shut off: the charm class names the
    running guests for the vGPU software (plan.vgpus_running), the plan
    holds the retype for every guest defined."""
    nova_plan = plan.plan_nova(
        snapshot, "{'nvidia-105': ['0000:84:00.0', '0000:85:00.0']}", None,
        rules(snapshot.nova_version), {'nvidia-108': ['0000:84:00.0']}, None)
    guests = guest_safety.guest_names(plan.vgpus_running(snapshot))
    waiting = SOFTWARE if guests else None
    assert status.waiting_or_ready(snapshot, nova_plan, waiting, guests,
                                   True) == ('waiting', expected)


@pytest.mark.parametrize('plan, expected', [
    pytest.param(nova_plan(), None, id='nothing to name'),
    pytest.param(
        nova_plan(resolution=model.Resolution({}, unresolved=[
            'A40-2Q', 'V100-8Q']), unnamed=['nvidia-105']),
        'Waiting for the NVIDIA driver to resolve vGPU profile names '
        'A40-2Q, V100-8Q (nothing is published for them until then)',
        id='profile names first'),
    pytest.param(
        nova_plan(resolution=model.Resolution({}), unnamed=[
            'nvidia-105', 'nvidia-108']),
        'Waiting for the NVIDIA driver to name vGPU types nvidia-105, '
        'nvidia-108 for their per-profile resource classes (nothing is '
        'published for them until then)',
        id='then per-profile types'),
])
def test_waiting_for_driver(plan, expected):
    assert status.waiting_for_driver(plan) == (
        None if expected is None else ('waiting', expected))


A100_HOST = host(a100(), nova=CARACAL)
A40_HOST = host(a40('0000:51:00.0'), a40('0000:52:00.0'))
NOVA_ADDS = (' (before Caracal, Nova gives a host\'s only vGPU type to '
             'every device offering it: give another GPU here a second '
             'type, or upgrade)')


@pytest.mark.parametrize('snapshot, plan, expected', [
    pytest.param(host(), nova_plan(absent=['0000:84:00.0']),
                 'no NVIDIA GPU on this host', id='no GPU'),
    pytest.param(host(v100('0000:84:00.0'), t4('0000:3b:00.0'),
                      t4('0000:af:00.0')), nova_plan(),
                 '3 NVIDIA GPUs (2 Tesla T4, 1 Tesla V100 PCIe 16GB)',
                 id='models counted'),
    pytest.param(host(l40s()), nova_plan(vf_count=8),
                 '1 NVIDIA GPU (device 10de:26b9); 8 SR-IOV VFs',
                 id='a board newer than pci.ids, its VFs'),
    pytest.param(host(l40s()), nova_plan(vf_count=8, live_migratable=True),
                 '1 NVIDIA GPU (device 10de:26b9); 8 SR-IOV VFs; typed VFs '
                 'live-migratable', id='typed VFs published live_migratable'),
    pytest.param(
        A40_HOST, nova_plan(vf_count=64, sriov_capacity={
            'nvidia-557': {'0000:51:00.0': 24, '0000:52:00.0': 12},
            'nvidia-566': {'0000:52:00.0': 1}}),
        '2 NVIDIA GPUs (A40); 64 SR-IOV VFs; nvidia-557: 24+12 vGPUs on 2 '
        'GPUs; nvidia-566: 1 vGPU on 1 GPU',
        id='capacities that differ per GPU'),
    pytest.param(
        host(v100('0000:84:00.0'), v100('0000:85:00.0'), a40(
            '0000:51:00.0'), a40('0000:52:00.0')),
        nova_plan(nova_adds={
            'nvidia-108': ['0000:84:00.0'],
            'nvidia-557': list(A40_51[24:] + A40_52[31:])}),
        '4 NVIDIA GPUs (2 A40, 2 Tesla V100 PCIe 16GB); Nova also gives '
        'nvidia-108 to 0000:84:00.0' + NOVA_ADDS + '; Nova also gives '
        'nvidia-557 to 8 VFs of 0000:51:00.0, 1 VF of 0000:52:00.0'
        + NOVA_ADDS,
        id='what nova adds: a GPU by address, VFs counted'),
    pytest.param(
        A100_HOST, nova_plan(
            resolution=model.Resolution(
                {}, resolved={'A100D-40C': ['nvidia-697']},
                unoffered=['T4-4Q', 'V100-8Q']),
            resource_class='per-profile',
            classes={'nvidia-697': 'CUSTOM_VGPU_A100D_40C'},
            selected={'nvidia-697': {'10de:20b5': ['0000:41:00.0'],
                                     '10de:1db4': []}},
            unmatched=['10de:1db4'], absent=['0000:84:00.0']),
        '1 NVIDIA GPU (A100 PCIe 80GB); A100D-40C is nvidia-697; no GPU '
        'here offers T4-4Q, V100-8Q; nvidia-697 as CUSTOM_VGPU_A100D_40C; '
        'nvidia-697 on 1 GPU (10de:20b5); no GPU here matches 10de:1db4; '
        'not on this host: 0000:84:00.0',
        id='names, classes, selectors and absent addresses, in order'),
    pytest.param(
        A100_HOST, nova_plan(classes={'nvidia-697': 'VGPU'}),
        '1 NVIDIA GPU (A100 PCIe 80GB)', id='VGPU classes go unsaid'),
])
def test_ready(snapshot, plan, expected):
    assert status.ready(snapshot, plan) == ('active',
                                            'Unit is ready: ' + expected)


NOT_MIGRATABLE = (
    'Typed VFs not live-migratable (this host has {}; Nova needs libvirt '
    '10.0.0 and QEMU 8.2.2): guests on them cannot be live-migrated until {} '
    'upgraded; 1 NVIDIA GPU (device 10de:26b9); 8 SR-IOV VFs')


@pytest.mark.parametrize('versions, shortfall, found, upgrade', [
    pytest.param(('9.0.0-0ubuntu1', '1:8.2.2+ds-0ubuntu1'), ['libvirt'],
                 'libvirt 9.0.0 and QEMU 8.2.2', 'libvirt is',
                 id='libvirt low'),
    pytest.param(('10.0.0-2ubuntu8', '1:6.2+dfsg-2ubuntu6'), ['QEMU'],
                 'libvirt 10.0.0 and QEMU 6.2', 'QEMU is', id='QEMU low'),
    pytest.param((None, None), ['libvirt', 'QEMU'],
                 'no libvirt package and no QEMU package',
                 'libvirt and QEMU are', id='neither known'),
])
def test_not_live_migratable_is_not_ready(versions, shortfall, found,
                                          upgrade):
    """The vGPUs work, but guests on them cannot move: active, and the
    line does not say the unit is ready; what falls short comes first."""
    snapshot = host(l40s(), libvirt_qemu=versions)
    assert status.ready(snapshot, nova_plan(
        vf_count=8, migration_shortfall=shortfall)) == (
            'active', NOT_MIGRATABLE.format(found, upgrade))
