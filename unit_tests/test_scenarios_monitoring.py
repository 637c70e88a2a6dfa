"""NRPE checks end to end (scenarios/monitoring/*.yaml): the charm's
hooks write the checks and the facts, and Nagios' own program runs as
the nagios user, without root, through the simulator's exec step."""
import json

from nvidia_vgpu.monitoring import exporter
from simulation import scenario

PLUGIN = '/usr/local/lib/nagios/plugins/check_nvidia_vgpu'
NRPE_D = '/etc/nagios/nrpe.d/'
FACTS = '/var/lib/nova-compute-nvidia-vgpu/monitoring.json'


def answers(output):
    """(check, exit code, its line) of each exec step, in order."""
    return [(step['step'], step['exec']['exit_code'],
             step['exec']['stdout'].rstrip('\n'))
            for step in output['steps'] if 'exec' in step]


def reloads(output):
    return [argv for argv in output['commands']
            if argv[:2] == ['systemctl', 'reload']]


def test_a_healthy_v100_host_answers_ok_to_each_of_seven_checks():
    output = scenario('monitoring/v100-healthy.yaml')
    found = answers(output)
    assert [code for _, code, _ in found] == [0] * 7
    assert [line.split(':')[0] for _, _, line in found] == ['OK'] * 7
    assert found[4][2].startswith('OK: Unit is ready: 2 NVIDIA GPUs')
    assert found[5][2] == (
        "OK: vGPUs: nvidia-105 (V100-1Q) 30 free of 32 | "
        "'nvidia-105_free'=30;;;0;32 'nvidia-105_in_use'=2;;;0;32")
    assert found[6][2] == ('OK: No GPU fault this boot on 2 GPUs (Xid '
                           'messages, ECC, row remapping)')
    assert sorted(path for path in output['files']
                  if path.startswith(NRPE_D)) == [
        NRPE_D + 'check_nvidia_vgpu_{}.cfg'.format(name) for name in
        ('capacity', 'drift', 'driver', 'hardware', 'services', 'status',
         'waits')]
    # The Nagios server knows the host by the name nrpe gave it.
    assert ('/var/lib/nagios/export/service__juju-compute-7_check_'
            'nvidia_vgpu_drift.cfg') in output['files']
    assert 'check_nvidia_vgpu_waits' in output['relations'][
        'nrpe-external-master:2']['monitors']
    # Written once; the hooks after it changed nothing and reloaded
    # nothing, and the nrpe relation was set once.
    assert reloads(output) == [['systemctl', 'reload', 'nagios-nrpe-server']]
    assert [step['step'] for step in output['steps']
            if ['systemctl', 'reload', 'nagios-nrpe-server'] in
            step['commands']] == ['install']


def test_an_a40_whose_vfs_failed_at_boot_is_critical_naming_gpu_and_fix():
    output = scenario('monitoring/a40-vfs-failed-at-boot.yaml')
    before, drift, services, capacity = answers(output)
    assert before[1] == 0
    code, line = drift[1:]
    assert code == 2
    assert line.startswith('CRITICAL: SR-IOV GPU 0000:41:00.0 has no VFs '
                           '(0 of 32) although the NVIDIA driver runs')
    assert 'fix: read journalctl -b -u nvidia-vgpu-sriov, then run sudo ' \
        'systemctl restart nvidia-vgpu-sriov or reboot the host' in line
    assert services[1] == 2 and 'failed (journalctl -b -u' in services[2]
    assert capacity[1:] == (
        0, "OK: vGPUs: nvidia-558 0 free of 0 | "
        "'nvidia-558_free'=0;;;0;0 'nvidia-558_in_use'=0;;;0;0")


def test_a_host_without_gpu_has_one_check_ok_and_nothing_once_nrpe_goes():
    output = scenario('monitoring/no-gpu.yaml')
    assert answers(output) == [(
        'exec ' + PLUGIN, 0,
        'OK: No NVIDIA GPU on this host: nothing to monitor')]
    joined = [step for step in output['steps']
              if step['step'] == 'update-status'][0]
    assert joined['relation_sets'] == 0
    # After relation-departed: no check, no program, no facts left.
    assert output['files'] == {}
    assert 'nrpe-external-master:2' not in output['relations']


def test_a_driver_upgrade_waiting_for_a_guest_warns_naming_it():
    output = scenario('monitoring/v100-driver-upgrade-waits.yaml')
    waiting, waits_after, reboot_pending, after_reboot = answers(output)
    assert waiting[1] == 1
    assert waiting[2].startswith(
        'WARNING: Attached vGPU software nvidia-vgpu-ubuntu-550 550.90.05 '
        'waits for 1 guest using vGPUs (instance-0000002a)')
    assert 'install-vgpu-software with force=true' in waiting[2]
    assert waits_after[1:] == (0, 'OK: No change waits for guests')
    assert reboot_pending[1] == 1 and 'Reboot required' in reboot_pending[2]
    assert after_reboot[1:] == (0, 'OK: NVIDIA vGPU software '
                                'nvidia-vgpu-ubuntu-550 550.90.05 installed '
                                'and running')


def test_grafana_agent_gets_the_exporter_once_and_a_bad_port_blocks():
    output = scenario('monitoring/v100-cos-agent.yaml')
    unit = 'nvidia-vgpu-exporter.service'
    started = [step['step'] for step in output['steps']
               if ['systemctl', 'restart', unit] in step['commands']]
    # Started at the first hook, then only for the new port.
    assert started == ['install', 'config']
    by_step = {(index, step['step']): step
               for index, step in enumerate(output['steps'])}
    bad_port = by_step[(6, 'config')]
    assert bad_port['status'] == {
        'workload': 'blocked', 'message':
        'Invalid metrics-port: 0 is not a TCP port (1 to 65535), so the '
        'vGPU metrics are not served: set it to a free port, e.g. 10320'}
    assert bad_port['relation_sets'] == 0
    # Hooks with nothing new set nothing on the relation.
    assert [step['relation_sets'] for step in output['steps']
            if step['step'] == 'update-status'] == [0, 0]
    departed = output['steps'][-1]
    assert ['systemctl', 'stop', unit] in departed['commands']
    assert '/etc/systemd/system/' + unit not in output['files']
    assert FACTS not in output['files']


def test_nagios_names_that_would_add_directives_are_refused_or_ignored():
    """Monitoring input is input (issue 38): the nrpe unit's host name
    and context with line breaks are ignored, a nagios option that would
    add a directive or write elsewhere blocks, nothing is written for
    Nagios meanwhile, and every hook succeeds."""
    output = scenario('monitoring/hostile-nagios-names.yaml')
    assert {step['exit_code'] for step in output['steps']} == {0}
    shown = [(step['step'], step['status']['workload'],
              step['status']['message'].split(':')[0])
             for step in output['steps'][6:]]
    assert shown == [
        ('config', 'blocked', 'Invalid nagios_context'),
        ('update-status', 'blocked', 'Invalid nagios_context'),
        ('config', 'blocked', 'Invalid nagios_servicegroups'),
        ('update-status', 'blocked', 'Invalid nagios_servicegroups'),
        ('config', 'active', 'Unit is ready'),
        ('update-status', 'active', 'Unit is ready')]
    reloads = [step['step'] for step in output['steps']
               if ['systemctl', 'reload', 'nagios-nrpe-server']
               in step['commands']]
    # Written at install; not while refused; once more when set right.
    assert reloads == ['install', 'config']
    assert output['steps'][10]['step'] == 'config'
    assert ['systemctl', 'reload', 'nagios-nrpe-server'] in \
        output['steps'][10]['commands']
    nagios = {path: text for path, text in output['files'].items()
              if 'nagios' in path and not path.endswith('check_nvidia_vgpu')}
    assert sorted(nagios) == [
        '/etc/nagios/nrpe.d/check_nvidia_vgpu_host.cfg',
        '/var/lib/nagios/export/'
        'service__juju-nova-compute-nvidia-vgpu-0_check_nvidia_vgpu_host.cfg']
    service = nagios['/var/lib/nagios/export/service__juju-nova-compute-'
                     'nvidia-vgpu-0_check_nvidia_vgpu_host.cfg']
    assert '    host_name                       ' \
        'juju-nova-compute-nvidia-vgpu-0\n' in service
    assert '    servicegroups                   juju,gpu\n' in service
    # One service, one closing brace: nothing the nrpe unit sent got in.
    assert service.count('define ') == 1 and service.count('}') == 1
    assert 'check_nrpe!rm_rf' not in service and 'ctx' not in service


def test_a_gpu_host_mapped_as_another_board_warns_until_mapped():
    """Issue 37, item 5 (and the silent selector of issue 36): the unit
    blocks and the capacity check warns, in the same words, naming the
    GPU and the fix; drift stays OK (nothing is missing); mapped right,
    both are fine."""
    output = scenario('monitoring/v100-mapped-as-another-board.yaml')
    assert {step['exit_code'] for step in output['steps']} == {0}
    blocked = output['steps'][5]['status']
    assert blocked['workload'] == 'blocked'
    assert blocked['message'].startswith(
        'This GPU host gives Nova no vGPU: no GPU here matches 10de:2330. '
        'Its GPUs: 0000:84:00.0 (10de:1db4, Tesla V100 PCIe 16GB)')
    warned, drift, fixed = answers(output)
    assert warned[1] == 1
    assert warned[2].startswith('WARNING: ' + blocked['message'] + '; ')
    assert drift[1] == 0
    assert output['status']['workload'] == 'active'
    assert fixed[1] == 0 and fixed[2].startswith(
        'OK: vGPUs: nvidia-105 (V100-1Q) 16 free of 16')


def test_two_mig_sizes_on_one_gpu_are_counted_each_with_its_profile():
    """Issue 37, item 2: where two MIG sizes share an H100, the capacity
    check counts each type on its own VFs, named by its profile, and a
    guest on the 3g.40gb vGPU leaves that type none free."""
    output = scenario('monitoring/h100-two-sizes-capacity.yaml')
    before, after = answers(output)
    assert before[1] == after[1] == 0
    assert before[2] == (
        "OK: vGPUs: nvidia-1130 (H100XM-1-10C) 4 free of 4, nvidia-1133 "
        "(H100XM-3-40C) 1 free of 1 | 'nvidia-1130_free'=4;;;0;4 "
        "'nvidia-1130_in_use'=0;;;0;4 'nvidia-1133_free'=1;;;0;1 "
        "'nvidia-1133_in_use'=0;;;0;1")
    assert after[2].startswith(
        'OK: vGPUs: nvidia-1130 (H100XM-1-10C) 4 free of 4, nvidia-1133 '
        '(H100XM-3-40C) 0 free of 1 |')
    document = json.loads(output['files'][FACTS])
    assert [(row['type'], row['profile'], row['in_use'], row['free'])
            for row in document['vgpus']] == [
        ('nvidia-1130', 'H100XM-1-10C', 0, 4),
        ('nvidia-1133', 'H100XM-3-40C', 1, 0)]
    # The exporter, scraping those facts: the layout left no room for
    # another GPU instance of either size (nor any other).
    scraped = {(sample.name, tuple(sorted(sample.labels.items()))):
               sample.value for family in exporter.metric_families(
                   document, 0.0, 0.0, 'compute-41')
               for sample in family.samples}
    at = ('gpu', '0000:41:00.0')
    assert scraped[('nvidia_vgpu_gpu_instances', (
        at, ('profile', '1g.10gb')))] == 4.0
    assert scraped[('nvidia_vgpu_gpu_instances', (
        at, ('profile', '3g.40gb')))] == 1.0
    assert {value for (name, _), value in scraped.items()
            if name == 'nvidia_vgpu_gpu_instances_free'} == {0.0}


def test_a_gpu_fallen_off_the_bus_is_critical_naming_its_guest_and_fix():
    output = scenario('monitoring/v100-falls-off-the-bus.yaml')
    before, after = answers(output)
    assert before[1:] == (0, 'OK: No GPU fault this boot on 2 GPUs (Xid '
                             'messages, ECC, row remapping)')
    assert after[1:] == (2, (
        'CRITICAL: GPU 0000:84:00.0 fell off the bus (Xid 79, once this '
        'boot) and is not listed by nvidia-smi although the nvidia driver '
        'holds it; guests on it: instance-0000002a; fix: move its guests '
        'off this host (cold-migrate those whose vGPU is gone), then '
        'replace the GPU (Replacing a failed GPU)'))
    [health] = output['actions']
    assert health['failed'] == 'Host not healthy: ' + after[2][
        len('CRITICAL: '):]
    # The guest on the other GPU is not blamed, and nothing was changed
    # on the host for it: no hook touches a failing GPU.
    assert 'instance-0000002b' not in after[2]
    assert not [argv for argv in output['commands']
                if argv[:1] in (['sriov-manage'], ['mdevctl'])]


def test_a_row_remapping_waiting_for_a_reset_warns_until_the_reboot():
    output = scenario('monitoring/a100-row-remap-waits-for-reset.yaml')
    waiting, rebooted = answers(output)
    assert waiting[1] == 1
    assert waiting[2].startswith(
        'WARNING: GPU 0000:41:00.0 had a contained ECC error (Xid 94, once '
        'this boot) and has had 1 uncorrected ECC error since the driver '
        'loaded; guests on it: instance-0000003a; fix: when its guests can '
        'be moved off this host, reboot it to reset the GPU (and 1 more: ')
    assert rebooted[1:] == (0, 'OK: No GPU fault this boot on 1 GPU (Xid '
                               'messages, ECC, row remapping)')
