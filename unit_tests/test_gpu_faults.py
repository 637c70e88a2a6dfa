"""GPU hardware faults (issue 37, item 3): what the host reader makes of
the kernel log and nvidia-smi, which faults page at which severity, and
what the on-call engineer reads: the GPU, its guests and the fix."""
import os
import stat
import time

import pytest

from nvidia_vgpu import model
from nvidia_vgpu.health import gpu_faults as policy, verdict
from nvidia_vgpu.host import bounded, gpu_faults
from nvidia_vgpu.monitoring import report
from test_health import V100_A, V100_B, v100_host

HEALTH = 'juju run vgpu/7 vgpu-health'
ECC_FORMAT = gpu_faults.ECC_QUERY[-1]
ROWS_FORMAT = gpu_faults.ROWS_QUERY[-1]
COUNTERS_OK = model.GpuErrorCounters(0, False, False)


# ---------------------------------------------------------------- reading

def test_xids_are_counted_per_gpu_and_number_with_the_last_line():
    log = '\n'.join([
        'NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.16',
        'NVRM: GPU at PCI:0000:84:00: GPU-5d5c1a0e',
        'NVRM: Xid (PCI:0000:84:00): 13, pid=812, Graphics Exception',
        'NVRM: Xid (PCI:0000:84:00): 13, pid=813, Graphics Exception',
        '[ 9.1] NVRM: Xid (PCI:0000:85:00): 79, pid=0, GPU has fallen off',
        'nvidia 0000:86:00.0: Xid 48 is not the kernel\'s form',
        'NVRM: Xid (PCI:0000:8A:00): 48, pid=1, DBE'])
    assert gpu_faults.xids_seen(log) == (
        model.XidSeen('0000:84:00.0', 13, 2, 'NVRM: Xid (PCI:0000:84:00): '
                      '13, pid=813, Graphics Exception'),
        model.XidSeen('0000:85:00.0', 79, 1, '[ 9.1] NVRM: Xid (PCI:0000:'
                      '85:00): 79, pid=0, GPU has fallen off'),
        model.XidSeen('0000:8a:00.0', 48, 1,
                      'NVRM: Xid (PCI:0000:8A:00): 48, pid=1, DBE'))


@pytest.mark.parametrize('ecc, rows, expected', [
    # nvidia-smi's own forms: an 8-digit domain, [N/A] where not
    # reported, 0/1 (or Yes/No) for the row remapping flags.
    ('00000000:84:00.0, 0\n', '00000000:84:00.0, 0, 0\n',
     {'0000:84:00.0': COUNTERS_OK}),
    ('00000000:41:00.0, 3\n', '00000000:41:00.0, 1, 0\n',
     {'0000:41:00.0': model.GpuErrorCounters(3, True, False)}),
    ('00000000:41:00.0, [N/A]\n', '00000000:41:00.0, [N/A], [N/A]\n',
     {'0000:41:00.0': model.GpuErrorCounters(None, None, None)}),
    ('00000000:41:00.0, 0\n', '00000000:41:00.0, No, Yes\n',
     {'0000:41:00.0': model.GpuErrorCounters(0, False, True)}),
    # The remapping query failed (a driver without it): counts stand.
    ('00000000:41:00.0, 0\n', None,
     {'0000:41:00.0': model.GpuErrorCounters(0, None, None)}),
    # Messages among the rows are not rows.
    ('Unable to determine the device handle for GPU0000:85:00.0: Unknown '
     'Error\n00000000:84:00.0, 0\n', '', {
         '0000:84:00.0': model.GpuErrorCounters(0, None, None)}),
])
def test_counters_read_the_csv_forms(ecc, rows, expected):
    assert gpu_faults.counters(ecc, rows) == expected


def bound(host_root, address, driver):
    device = host_root / 'sys/bus/pci/devices' / address
    device.mkdir(parents=True)
    target = host_root / 'sys/bus/pci/drivers' / driver
    target.mkdir(parents=True, exist_ok=True)
    os.symlink(str(target), str(device / 'driver'))


def test_read_asks_the_journal_and_nvidia_smi_once_each_query(
        fake_commands, isolated_host):
    bound(isolated_host, V100_A, 'nvidia')
    bound(isolated_host, V100_B, 'nvidia')
    fake_commands.set('journalctl', stdout=(
        'NVRM: Xid (PCI:0000:84:00): 79, pid=0, GPU has fallen off the '
        'bus.\n'))
    fake_commands.set('nvidia-smi', by_last_argument={
        ECC_FORMAT: {'stdout': '00000000:85:00.0, 0\n', 'exit': 15},
        ROWS_FORMAT: {'stdout': '00000000:85:00.0, [N/A], [N/A]\n',
                      'exit': 15}})
    found = gpu_faults.read([V100_A, V100_B])
    assert found.xids[0][:3] == (V100_A, 79, 1)
    assert found.counters == {V100_B: model.GpuErrorCounters(0, None, None)}
    assert found.bound == {V100_A, V100_B}
    assert found.unanswered is None and found.kernel_log_problem is None
    assert fake_commands.calls == [
        list(gpu_faults.KERNEL_LOG), list(gpu_faults.ECC_QUERY),
        list(gpu_faults.ROWS_QUERY)]


def test_nvidia_smi_that_answers_nothing_is_said_and_not_asked_again(
        fake_commands):
    fake_commands.set('journalctl')
    fake_commands.set('nvidia-smi', exit=255, stdout=(
        'NVIDIA-SMI has failed because it couldn\'t communicate with the '
        'NVIDIA driver.\n'))
    found = gpu_faults.read([V100_A])
    assert found.counters is None
    assert found.unanswered.startswith('NVIDIA-SMI has failed')
    assert [call[0] for call in fake_commands.calls] == [
        'journalctl', 'nvidia-smi']


def test_a_gpu_given_whole_to_a_guest_is_not_nvidia_smis(isolated_host):
    bound(isolated_host, V100_A, 'nvidia')
    bound(isolated_host, V100_B, 'vfio-pci')
    assert gpu_faults.bound_to_nvidia([V100_A, V100_B, '0000:86:00.0']) == {
        V100_A}


def test_a_hung_command_costs_its_time_limit_not_the_hook(tmp_path):
    """A GPU that has failed can hang nvidia-smi: the reader gives up at
    its limit."""
    program = tmp_path / 'hangs'
    program.write_text('#!/bin/sh\ntrap "" TERM\nsleep 30\n')
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    started = time.monotonic()
    code, said = bounded.run([str(program)], 0.5)
    assert time.monotonic() - started < 5
    assert code is None
    assert said == '{} gave no answer within 0.5 s'.format(program)


def test_a_missing_command_is_not_found():
    assert bounded.run(['no-such-command-here'], 1)[0] == bounded.NOT_FOUND


# ----------------------------------------------------------------- policy

def facts(xids=(), counters=None, unanswered=None, bound=(V100_A, V100_B)):
    return model.GpuFaultFacts(
        tuple(model.XidSeen(gpu, xid, count, 'line') for gpu, xid, count
              in xids),
        counters if counters is not None or unanswered else {
            V100_A: COUNTERS_OK, V100_B: COUNTERS_OK},
        unanswered, frozenset(bound))


def found(fault_facts):
    return [(fault.gpu, fault.code, fault.critical) for fault in
            policy.faults(fault_facts, [V100_A, V100_B])]


@pytest.mark.parametrize('fault_facts, expected', [
    (facts(), []),
    # Guests' own faults (Xid 13, 31, 43) page for nothing.
    (facts(xids=[(V100_A, 13, 40), (V100_A, 43, 1)]), []),
    (facts(xids=[(V100_A, 79, 1)]), [(V100_A, 'fell-off-bus', True)]),
    # Not listed although the nvidia driver holds it: the same fault.
    (facts(counters={V100_B: COUNTERS_OK}, xids=[(V100_A, 79, 1)]),
     [(V100_A, 'fell-off-bus', True)]),
    (facts(counters={V100_B: COUNTERS_OK}), [
        (V100_A, 'fell-off-bus', True)]),
    # ... but not one the nvidia driver does not hold.
    (facts(counters={V100_B: COUNTERS_OK}, bound=[V100_B]), []),
    (facts(counters={V100_A: model.GpuErrorCounters(0, False, True),
                     V100_B: COUNTERS_OK}),
     [(V100_A, 'row-remap-failed', True)]),
    (facts(xids=[(V100_B, 95, 1)], counters={
        V100_A: COUNTERS_OK, V100_B: model.GpuErrorCounters(1, False,
                                                            False)}),
     [(V100_B, 'uncorrected-ecc', True)]),
    # A contained error and its count: one warning.
    (facts(xids=[(V100_B, 94, 1)], counters={
        V100_A: COUNTERS_OK, V100_B: model.GpuErrorCounters(1, False,
                                                            False)}),
     [(V100_B, 'contained-ecc', False)]),
    (facts(counters={V100_A: model.GpuErrorCounters(2, True, False),
                     V100_B: COUNTERS_OK}),
     [(V100_A, 'row-remap-pending', False),
      (V100_A, 'uncorrected-ecc', False)]),
    (facts(xids=[(V100_B, 92, 3), (V100_A, 64, 1)]), [
        (V100_A, 'row-remap-failed', True),
        (V100_B, 'single-bit-ecc-rate', False)]),
    # A GPU not on this host is not this host's.
    (facts(xids=[('0000:99:00.0', 79, 1)]), []),
    (facts(unanswered='nvidia-smi --query-gpu=... gave no answer within '
           '10 s'), [(None, 'nvidia-smi-no-answer', True)]),
])
def test_which_faults_page_at_which_severity(fault_facts, expected):
    assert found(fault_facts) == expected


def test_each_fault_has_its_fix():
    assert set(policy.FIXES) >= {code for code, _, _ in
                                 policy.XIDS.values()}


# ------------------------------------------------- what the engineer reads

def test_a_failed_gpu_is_critical_naming_it_its_guests_and_the_runbook():
    host = v100_host(gpu_faults=facts(
        xids=[(V100_A, 79, 1)], counters={V100_B: COUNTERS_OK}))
    result = verdict.report(host)
    assert not result['healthy']
    [finding] = [item for item in result['findings']
                 if item['code'] == verdict.GPU_FAILED]
    assert finding['message'] == (
        'GPU 0000:84:00.0 fell off the bus (Xid 79, once this boot) and is '
        'not listed by nvidia-smi although the nvidia driver holds it; '
        'guests on it: instance-2a; fix: move its guests off this host '
        '(cold-migrate those whose vGPU is gone), then replace the GPU '
        '(Replacing a failed GPU)')
    checks = {check['name']: check for check in report.document(
        host, 'vgpu/7', HEALTH)['checks']}
    assert checks[report.HARDWARE]['state'] == report.CRITICAL
    assert checks[report.HARDWARE]['text'] == finding['message']
    # The other checks keep to their own concerns.
    assert checks[report.DRIFT]['state'] == report.OK


def test_the_guests_of_a_gpu_whose_vgpus_vanished_are_still_named():
    host = v100_host(mdevs=[], gpu_faults=facts(xids=[(V100_A, 48, 1)]))
    assert verdict.guests_on(host, V100_A) == ['instance-2a']


def test_a_reset_waiting_for_guests_is_a_warning_and_the_rest_counted():
    host = v100_host(gpu_faults=facts(
        xids=[(V100_A, 63, 1), (V100_B, 92, 1)]))
    result = verdict.report(host)
    assert result['healthy']
    check = {check['name']: check for check in report.document(
        host, 'vgpu/7', HEALTH)['checks']}[report.HARDWARE]
    assert check['state'] == report.WARNING
    assert check['text'] == (
        'GPU 0000:84:00.0 recorded a row remapping (Xid 63, once this boot);'
        ' guests on it: instance-2a; fix: when its guests can be moved off '
        'this host, reboot it to reset the GPU (and 1 more: {})'.format(
            HEALTH))


def test_not_read_without_the_driver_is_ok_and_says_so():
    checks = {check['name']: check for check in report.document(
        v100_host(driver=None), 'vgpu/7', HEALTH)['checks']}
    assert checks[report.HARDWARE]['state'] == report.OK
    assert 'not read while the NVIDIA driver does not run' in checks[
        report.HARDWARE]['text']


def test_the_document_carries_each_gpus_counts_for_the_exporter():
    host = v100_host(gpu_faults=facts(
        xids=[(V100_A, 79, 1), (V100_A, 13, 4)],
        counters={V100_B: model.GpuErrorCounters(0, None, None)}))
    rows = report.document(host, 'vgpu/7', HEALTH)['gpu_faults']
    assert rows == {'host_faults': [], 'gpus': [
        {'gpu': V100_A, 'listed': False, 'ecc_uncorrected': None,
         'rows_pending': None, 'rows_failed': None,
         'xids': {'79': 1, '13': 4},
         'faults': [{'code': 'fell-off-bus', 'severity': 2, 'guests': 1}]},
        {'gpu': V100_B, 'listed': True, 'ecc_uncorrected': 0,
         'rows_pending': None, 'rows_failed': None, 'xids': {},
         'faults': []}]}
    assert report.document(v100_host(), 'vgpu/7', HEALTH)[
        'gpu_faults'] is None
