"""The monitoring document (nvidia_vgpu.monitoring.report): which NRPE
check says what, in which state, for the hosts an operator pages on."""
import pytest

import test_precedence
from nvidia_vgpu import model
from nvidia_vgpu.health import verdict
from nvidia_vgpu.hook_plan import decide, facts as hook_facts
from nvidia_vgpu.monitoring import report
from snapshots import V100S
from test_health import (A100, A100_VFS, UUID_A, V100_A, V100_B, a100, l40s,
                         v100_host)

HEALTH = 'juju run vgpu/7 vgpu-health'
OK, WARNING, CRITICAL = report.OK, report.WARNING, report.CRITICAL


def checks(facts):
    document = report.document(facts, 'vgpu/7', HEALTH)
    return {check['name']: (check['state'], check['text'])
            for check in document['checks']}


def test_a_healthy_host_has_five_checks_all_ok():
    found = checks(v100_host())
    assert sorted(found) == sorted(report.GPU_HOST_CHECKS)
    assert {state for state, _ in found.values()} == {OK}
    assert found[report.SERVICES][1] == (
        'vGPU Manager running: nvidia-vgpu-mgr active')


def test_capacity_counts_free_created_and_in_use_per_type_as_perfdata():
    document = report.document(v100_host(), 'vgpu/7', HEALTH)
    capacity = [check for check in document['checks']
                if check['name'] == report.CAPACITY][0]
    # Each V100: 15 more can be created, 1 created and used by a guest.
    assert capacity['text'] == (
        'vGPUs: nvidia-105 (V100-1Q) 30 free of 32')
    assert capacity['perfdata'] == (
        "'nvidia-105_free'=30;;;0;32 'nvidia-105_in_use'=2;;;0;32")
    assert document['vgpus'][0] == {
        'gpu': V100_A, 'model': 'Tesla V100 PCIe 16GB', 'type': 'nvidia-105',
        'profile': 'V100-1Q', 'capacity': 16, 'in_use': 1, 'free': 15}


def test_an_unused_created_vgpu_counts_as_free():
    facts = v100_host(mdev_users={UUID_A: ['instance-2a']})
    rows = {row['gpu']: row for row in report.vgpu_rows(facts)}
    assert rows[V100_B]['in_use'] == 0
    assert rows[V100_B]['free'] == 16 and rows[V100_B]['capacity'] == 16


def test_typed_vfs_no_guest_uses_are_free_on_the_vendor_vfio_driver():
    vf_types = dict.fromkeys(A100_VFS, 1148)
    facts = v100_host(gpus=[l40s(vf_types)], published={
        'nvidia-1148': list(A100_VFS)}, wanted=None, mdevs=[],
        mdev_users={}, pci_users={A100_VFS[0]: ['instance-9']})
    assert report.vgpu_rows(facts) == [{
        'gpu': A100, 'model': 'L40S', 'type': 'nvidia-1148',
        'profile': 'L40S-2Q', 'in_use': 1, 'free': 2,
        'capacity': 3}]


def test_vfs_gone_after_a_boot_are_critical_naming_the_gpu_and_the_fix():
    facts = v100_host(gpus=[a100(vfs=())], published={
        'nvidia-697': list(A100_VFS)}, wanted=None, mdevs=[],
        mdev_users={}, recorded={})
    found = checks(facts)
    state, text = found[report.DRIFT]
    assert state == CRITICAL
    assert text.startswith('SR-IOV GPU {} has no VFs (0 of 16)'.format(A100))
    assert 'fix: read journalctl -b -u nvidia-vgpu-sriov, then run sudo ' \
        'systemctl restart nvidia-vgpu-sriov or reboot the host' in text
    assert text.endswith('(and 1 more: {})'.format(HEALTH))
    # Nova still offers the type: it counts none now.
    assert found[report.CAPACITY] == (
        OK, 'vGPUs: nvidia-697 0 free of 0')


def test_a_guest_that_lost_its_vgpu_is_critical():
    facts = v100_host(mdevs=[(UUID_A, V100_A, 'nvidia-105')])
    state, text = checks(facts)[report.DRIFT]
    assert state == CRITICAL
    assert text.startswith('Guest instance-2b has lost its vGPU')
    assert 'sudo systemctl restart nova-compute' in text


@pytest.mark.parametrize('changes,state,start', [
    ({'services': {'nvidia-vgpu-mgr': 'failed'}}, CRITICAL,
     'Service nvidia-vgpu-mgr is failed (systemctl status nvidia-vgpu-mgr)'),
    ({'boot_units': {'nvidia-vgpu-sriov': 'failed'}}, CRITICAL,
     'Boot unit nvidia-vgpu-sriov failed'),
    ({'services': {'nvidia-vgpu-mgr': 'inactive'}, 'paused': True}, WARNING,
     'The unit is paused'),
])
def test_the_vgpu_manager_services(changes, state, start):
    found_state, text = checks(v100_host(**changes))[report.SERVICES]
    assert (found_state, text[:len(start)]) == (state, start)


@pytest.mark.parametrize('changes,state,start', [
    ({'driver': '550.54.16', 'installed': model.Installed(
        'cd' * 32, 'nvidia-vgpu-ubuntu-550', '550.90.05', ())}, WARNING,
     'Reboot required: installed NVIDIA software nvidia-vgpu-ubuntu-550 '
     '550.90.05, driver 550.54.16 is still running: reboot the host'),
    ({'installed': None, 'driver': None}, CRITICAL,
     'NVIDIA GPU found but no vGPU host software attached'),
    ({'software_problem': 'Installing nvidia-vgpu-ubuntu-550 failed'},
     CRITICAL, 'Installing nvidia-vgpu-ubuntu-550 failed'),
])
def test_the_driver(changes, state, start):
    found_state, text = checks(v100_host(**changes))[report.DRIVER]
    assert (found_state, text[:len(start)]) == (state, start)


def test_a_driver_waiting_for_guests_is_a_warning_naming_them():
    facts = v100_host(waiting_software=('nvidia-vgpu-ubuntu-550',
                                        '550.90.05'))
    state, text = checks(facts)[report.WAITS]
    assert state == WARNING
    assert 'waits for 2 guests using vGPUs (instance-2a, instance-2b)' \
        in text
    document = report.document(facts, 'vgpu/7', HEALTH)
    assert document['waits'] == [{
        'code': verdict.SOFTWARE_WAITS,
        'guests': ['instance-2a', 'instance-2b'], 'message': text}]
    assert checks(facts)[report.DRIFT][0] == OK


def test_a_retype_waiting_for_guests_names_them():
    held = model.HeldGpu(V100_B, ('nvidia-105',), ('nvidia-108',),
                         ['instance-2b'])
    facts = v100_host(held=[held])
    state, text = checks(facts)[report.WAITS]
    assert state == WARNING
    assert text.startswith('Change of vgpu-device-mappings waits for '
                           'guests using vGPUs: {} keeps'.format(V100_B))
    assert report.document(facts, 'u/0', HEALTH)['waits'][0]['guests'] == [
        'instance-2b']


def test_refused_mappings_warn_in_the_status_check_and_are_no_harm():
    facts = v100_host(config_problem='vgpu-device-mappings: bad address')
    refused = ('blocked', 'Invalid vgpu-device-mappings: bad address')
    document = report.document(facts, 'vgpu/7', HEALTH, refused)
    found = {check['name']: (check['state'], check['text'])
             for check in document['checks']}
    assert found[report.STATUS] == (WARNING, refused[1])
    assert found[report.WAITS][0] == OK
    # Nova keeps what it had: nothing broken, nothing pages CRITICAL.
    assert document['healthy'] is True
    assert document['status']['code'] == 'option-refused'


def test_a_host_without_gpu_has_one_check_which_is_ok():
    facts = verdict.HostFacts(gpus=[], driver=None, installed=None,
                              published=None)
    document = report.document(facts, 'vgpu/3', HEALTH)
    assert document['gpu_host'] is False and document['vgpus'] == []
    assert [(check['name'], check['state'], check['text'])
            for check in document['checks']] == [(
                report.NO_GPU, OK,
                'No NVIDIA GPU on this host: nothing to monitor')]


def test_descriptions_name_the_unit_without_characters_nagios_refuses():
    document = report.document(v100_host(), 'prod:vgpu/7', HEALTH)
    for check in document['checks']:
        assert check['description'].endswith(' prod:vgpu/7')
        assert not set(check['description']) & set('`~!$%^&*"|\'<>?,()=')


def test_gpu_instances_missing_after_a_boot_are_critical_drift():
    facts = v100_host(gis_missing={V100_A: ['1g.10gb', '1g.10gb']})
    state, text = checks(facts)[report.DRIFT]
    assert state == CRITICAL
    assert text.startswith(
        'GPU 0000:84:00.0 lacks 2 of the GPU instances of its mig-layout '
        '(1g.10gb, 1g.10gb): they were not made after the last boot')
    assert 'fix: read journalctl -b -u nvidia-vgpu-mig-instances' in text


def test_a_mig_layout_change_waiting_for_guests_warns_naming_them():
    facts = v100_host(mig_held={V100_A: ('instance-2a',)},
                      mig_held_message='Change of mig-layout waits ...')
    assert checks(facts)[report.WAITS] == (
        WARNING, 'Change of mig-layout waits ...')
    assert report.document(facts, 'u/0', HEALTH)['waits'] == [{
        'code': verdict.MIG_LAYOUT_WAITS, 'guests': ['instance-2a'],
        'message': 'Change of mig-layout waits ...'}]


def test_a_gpu_host_that_gives_nova_nothing_warns_in_the_status_words():
    """Issue 37, item 5: the unit's blocked status, the NRPE capacity
    check (WARNING) and the exporter's count say the same thing."""
    config = {'vgpu-device-mappings': "{'H100XM-1-10C': ['10de:2330']}"}
    relations = test_precedence.published(V100S, config)
    plan = decide.decide(hook_facts.HookFacts(
        V100S, relations, detail=hook_facts.Detail(unit='vgpu/7')),
        config, test_precedence.UNIT)
    state, message = plan.status.last
    assert state == 'blocked'
    assert message.startswith('This GPU host gives Nova no vGPU: no GPU '
                              'here matches 10de:2330.')
    capacity = [check for check in plan.monitoring['checks']
                if check['name'] == report.CAPACITY][0]
    assert capacity['state'] == WARNING
    assert capacity['text'].startswith(message + '; ')
    assert plan.monitoring['offer_gaps'] == [message]
    # Nothing is broken: no guest is hurt, nothing pages CRITICAL.
    assert plan.monitoring['healthy'] is True


def test_a_host_that_gives_nova_vgpus_has_no_gap():
    config = {'vgpu-device-mappings': "{'nvidia-108': ['10de:1db4']}"}
    plan = decide.decide(hook_facts.HookFacts(
        V100S, test_precedence.published(V100S, config),
        detail=hook_facts.Detail(unit='vgpu/7')), config,
        test_precedence.UNIT)
    assert plan.status.last[0] == 'active'
    assert plan.monitoring['offer_gaps'] == []


def test_two_mig_sizes_on_one_gpu_each_have_their_counts():
    """Issue 37, item 2: the guide's two-size H100 layout (four 1g.10gb
    VFs, one 3g.40gb VF); a guest on a 1g.10gb vGPU."""
    vfs = tuple('0000:41:00.{}'.format(n) for n in range(4, 8)) + (
        '0000:41:01.0',)
    # In MIG mode every VF lists both types; the one with the guest's
    # vGPU has no free instance left.
    types = {vf: {'nvidia-1130': 1, 'nvidia-1133': 1} for vf in vfs}
    types[vfs[0]] = {'nvidia-1130': 0, 'nvidia-1133': 0}
    gpu = model.GpuState(A100, 'H100 SXM5 80GB', 16, vfs, types=types,
                         names={'nvidia-1130': 'NVIDIA H100XM-1-10C',
                                'nvidia-1133': 'NVIDIA H100XM-3-40C'})
    facts = v100_host(
        gpus=[gpu], wanted=None,
        published={'nvidia-1130': list(vfs[:4]), 'nvidia-1133': [vfs[4]]},
        mdevs=[(UUID_A, vfs[0], 'nvidia-1130')],
        mdev_users={UUID_A: ['instance-1']}, pci_users={})
    assert report.vgpu_rows(facts) == [
        {'gpu': A100, 'model': gpu.model, 'type': 'nvidia-1130',
         'profile': 'H100XM-1-10C', 'in_use': 1, 'free': 3, 'capacity': 4},
        {'gpu': A100, 'model': gpu.model, 'type': 'nvidia-1133',
         'profile': 'H100XM-3-40C', 'in_use': 0, 'free': 1, 'capacity': 1}]
    capacity = checks(facts)[report.CAPACITY]
    assert capacity == (OK, 'vGPUs: nvidia-1130 (H100XM-1-10C) 3 free of 4, '
                            'nvidia-1133 (H100XM-3-40C) 1 free of 1')


def test_free_gpu_instances_are_counted_per_size_on_gpus_in_mig_mode():
    """Issue 37, item 2: the same H100 with four 1g.10gb and one
    3g.40gb: no room left for either size (the driver's Free counts);
    a GPU not in MIG mode has no rows."""
    def instance(number, profile_id, profile, placement):
        return model.GpuInstance(number, profile_id, profile, placement)
    h100 = model.MigGpu(
        A100, 0, 'Enabled', 'Enabled',
        profiles=(model.GiProfile(19, '1g.10gb', 0, 7),
                  model.GiProfile(9, '3g.40gb', 0, 2)),
        instances=(instance(1, 9, '3g.40gb', '4:4'),
                   instance(7, 19, '1g.10gb', '0:1'),
                   instance(8, 19, '1g.10gb', '1:1'),
                   instance(9, 19, '1g.10gb', '2:1'),
                   instance(10, 19, '1g.10gb', '3:1')))
    idle = model.MigGpu('0000:42:00.0', 1, 'Disabled', 'Disabled')
    facts = v100_host(mig={A100: h100, idle.address: idle})
    assert report.document(facts, 'vgpu/7', HEALTH)['gpu_instances'] == [
        {'gpu': A100, 'profile': '1g.10gb', 'existing': 4, 'free': 0},
        {'gpu': A100, 'profile': '3g.40gb', 'existing': 1, 'free': 0}]
    assert report.document(v100_host(), 'vgpu/7', HEALTH)[
        'gpu_instances'] == []
