"""The vGPU metrics exporter: what Prometheus gets from the charm's facts
document, through prometheus_client's own exposition and parser, and over
HTTP as its service serves it."""
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from nvidia_vgpu.host.hostfs import host_path
from nvidia_vgpu.monitoring import exporter, guest_metrics

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOW = 1_800_000_000.0
V100 = 'Tesla V100-PCIE-32GB'


READY = {'workload': 'active', 'message': 'Unit is ready', 'code': 'ready',
         'severity': 0}


def v100_host(**changes):
    """A healthy host with two V100s, one type each, as the hooks write
    it (format version 1)."""
    document = {
        'version': 1, 'gpu_host': True, 'healthy': True, 'paused': False,
        'driver': {'package': 'nvidia-vgpu-ubuntu-550',
                   'installed': '550.54.16', 'running': '550.54.16',
                   'reboot_required': False},
        'services': {'nvidia-vgpu-mgr': 'active',
                     'nvidia-vgpud': 'inactive'},
        'vgpus': [
            {'gpu': '0000:84:00.0', 'model': V100, 'type': 'nvidia-105',
             'profile': 'GRID V100-1Q', 'capacity': 16, 'in_use': 4,
             'free': 12},
            {'gpu': '0000:85:00.0', 'model': V100, 'type': 'nvidia-106',
             'profile': 'GRID V100-2Q', 'capacity': 8, 'in_use': 8,
             'free': 0}],
        'drift': [], 'waits': [],
        'status': READY,
        'checks': [{'name': 'nvidia_vgpu_drift', 'description': 'drift',
                    'state': 0, 'text': 'OK', 'perfdata': ''}]}
    document.update(changes)
    return document


def no_gpu_host():
    return {'version': 1, 'gpu_host': False, 'healthy': True,
            'paused': False,
            'driver': {'package': None, 'installed': None, 'running': None,
                       'reboot_required': False},
            'services': {}, 'vgpus': [], 'drift': [], 'waits': [],
            'status': READY, 'checks': []}


def write_facts(document, age=60.0):
    """The document where the hooks write it, read `age` seconds before
    NOW (the file's mtime)."""
    path = host_path(exporter.FACTS_PATH)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as stream:
        if isinstance(document, str):
            stream.write(document)
        else:
            json.dump(document, stream)
    os.utime(path, (NOW - age, NOW - age))
    return path


def exposition():
    """What a scrape returns (text format), at NOW."""
    registry = exporter.registry(host_path(exporter.FACTS_PATH),
                                 clock=lambda: NOW, hostname='compute-1')
    return generate_latest(registry).decode()


def samples(text):
    """{(name, ((label, value), ...)): value}, as Prometheus parses the
    exposition."""
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples}


def families(text):
    return {family.name for family in text_string_to_metric_families(text)}


def row(gpu, vgpu_type, profile, model=V100):
    return (('gpu', gpu), ('model', model), ('profile', profile),
            ('vgpu_type', vgpu_type))


def test_a_healthy_v100_host():
    write_facts(v100_host())
    found = samples(exposition())
    first = row('0000:84:00.0', 'nvidia-105', 'GRID V100-1Q')
    second = row('0000:85:00.0', 'nvidia-106', 'GRID V100-2Q')
    assert found == {
        ('nvidia_vgpu_facts_available', ()): 1.0,
        ('nvidia_vgpu_facts_timestamp_seconds', ()): NOW - 60,
        ('nvidia_vgpu_facts_age_seconds', ()): 60.0,
        ('nvidia_vgpu_host_info', (('hostname', 'compute-1'),)): 1.0,
        ('nvidia_vgpu_gpu_host', ()): 1.0,
        ('nvidia_vgpu_healthy', ()): 1.0,
        ('nvidia_vgpu_paused', ()): 0.0,
        ('nvidia_vgpu_driver_info', (
            ('installed', '550.54.16'), ('package', 'nvidia-vgpu-ubuntu-550'),
            ('running', '550.54.16'))): 1.0,
        ('nvidia_vgpu_reboot_required', ()): 0.0,
        ('nvidia_vgpu_service_active',
         (('service', 'nvidia-vgpu-mgr'),)): 1.0,
        ('nvidia_vgpu_service_active', (('service', 'nvidia-vgpud'),)): 0.0,
        ('nvidia_vgpu_instances_capacity', first): 16.0,
        ('nvidia_vgpu_instances_in_use', first): 4.0,
        ('nvidia_vgpu_instances_free', first): 12.0,
        ('nvidia_vgpu_instances_capacity', second): 8.0,
        ('nvidia_vgpu_instances_in_use', second): 8.0,
        ('nvidia_vgpu_instances_free', second): 0.0,
        ('nvidia_vgpu_offer_gaps', ()): 0.0,
        ('nvidia_vgpu_status_severity', (('code', 'ready'),)): 0.0,
        ('nvidia_vgpu_gpu_faults_read', ()): 0.0}
    # Families without samples still say what they are.
    assert {'nvidia_vgpu_drift_findings', 'nvidia_vgpu_waiting_changes',
            'nvidia_vgpu_waiting_guests'} <= families(exposition())


def test_drift_findings_are_counted_by_code():
    write_facts(v100_host(healthy=False, drift=[
        {'code': 'vfs-missing', 'message': '0000:41:00.0 has no VFs'},
        {'code': 'vfs-missing', 'message': '0000:42:00.0 has no VFs'},
        {'code': 'mdev-missing', 'message': 'a vGPU is gone'}]))
    found = samples(exposition())
    assert found[('nvidia_vgpu_healthy', ())] == 0.0
    assert {labels: value for (name, labels), value in found.items()
            if name == 'nvidia_vgpu_drift_findings'} == {
        (('code', 'mdev-missing'),): 1.0, (('code', 'vfs-missing'),): 2.0}


def test_waits_count_changes_and_guests_but_never_name_them():
    write_facts(v100_host(waits=[
        {'code': 'software-waits',
         'guests': ['instance-0000002a', 'instance-0000002b'],
         'message': 'nvidia-vgpu-ubuntu-550 550.90.05 waits'},
        {'code': 'retype-pending', 'guests': ['instance-0000002a'],
         'message': 'nvidia-106 on 0000:85:00.0 waits'},
        {'code': 'retype-pending', 'guests': ['instance-0000002a'],
         'message': 'nvidia-105 on 0000:84:00.0 waits'}]))
    text = exposition()
    found = samples(text)
    assert found[('nvidia_vgpu_waiting_changes',
                  (('code', 'software-waits'),))] == 1.0
    assert found[('nvidia_vgpu_waiting_guests',
                  (('code', 'software-waits'),))] == 2.0
    assert found[('nvidia_vgpu_waiting_changes',
                  (('code', 'retype-pending'),))] == 2.0
    # One guest holding two changes of a kind is one guest.
    assert found[('nvidia_vgpu_waiting_guests',
                  (('code', 'retype-pending'),))] == 1.0
    assert 'instance-0000002' not in text


def test_a_pending_reboot_shows_both_versions():
    write_facts(v100_host(driver={
        'package': 'nvidia-vgpu-ubuntu-550', 'installed': '550.90.05',
        'running': '550.54.16', 'reboot_required': True}))
    found = samples(exposition())
    assert found[('nvidia_vgpu_reboot_required', ())] == 1.0
    assert found[('nvidia_vgpu_driver_info', (
        ('installed', '550.90.05'), ('package', 'nvidia-vgpu-ubuntu-550'),
        ('running', '550.54.16')))] == 1.0


def test_a_host_without_gpu_has_no_gpu_rows_services_or_driver():
    write_facts(no_gpu_host())
    found = samples(exposition())
    assert found == {
        ('nvidia_vgpu_facts_available', ()): 1.0,
        ('nvidia_vgpu_facts_timestamp_seconds', ()): NOW - 60,
        ('nvidia_vgpu_facts_age_seconds', ()): 60.0,
        ('nvidia_vgpu_host_info', (('hostname', 'compute-1'),)): 1.0,
        ('nvidia_vgpu_gpu_host', ()): 0.0,
        ('nvidia_vgpu_healthy', ()): 1.0,
        ('nvidia_vgpu_paused', ()): 0.0,
        ('nvidia_vgpu_reboot_required', ()): 0.0,
        ('nvidia_vgpu_offer_gaps', ()): 0.0,
        ('nvidia_vgpu_status_severity', (('code', 'ready'),)): 0.0,
        ('nvidia_vgpu_gpu_faults_read', ()): 0.0}


def test_numbers_not_known_have_no_sample_rather_than_a_false_zero():
    write_facts(v100_host(vgpus=[
        {'gpu': '0000:84:00.0', 'model': V100, 'type': 'nvidia-105',
         'profile': None, 'capacity': None, 'in_use': 3, 'free': None}]))
    found = samples(exposition())
    assert {name: value for (name, labels), value in found.items()
            if name.startswith('nvidia_vgpu_instances_')} == {
        'nvidia_vgpu_instances_in_use': 3.0}
    # A profile not known is an empty label (no label, to Prometheus).
    assert ('nvidia_vgpu_instances_in_use',
            row('0000:84:00.0', 'nvidia-105', '')) in found


@pytest.mark.parametrize('content', [
    None, '', '{"version": 1', '[]', json.dumps(v100_host(version=2))])
def test_no_readable_document_means_no_facts_yet(content):
    if content is not None:
        write_facts(content)
    assert samples(exposition()) == {
        ('nvidia_vgpu_facts_available', ()): 0.0,
        ('nvidia_vgpu_host_info', (('hostname', 'compute-1'),)): 1.0}


def test_stale_facts_show_their_age_from_the_files_mtime():
    """The document has no time of its own: the file's mtime is when the
    hooks read the host, so a stopped unit agent shows as a growing
    age."""
    write_facts(v100_host(), age=2 * 3600)
    found = samples(exposition())
    assert found[('nvidia_vgpu_facts_age_seconds', ())] == 7200.0
    assert found[('nvidia_vgpu_facts_timestamp_seconds', ())] == NOW - 7200
    assert found[('nvidia_vgpu_facts_available', ())] == 1.0


def test_each_scrape_reads_the_document_again():
    write_facts(v100_host())
    registry = exporter.registry(host_path(exporter.FACTS_PATH),
                                 clock=lambda: NOW, hostname='compute-1')
    assert samples(generate_latest(registry).decode())[
        ('nvidia_vgpu_healthy', ())] == 1.0
    write_facts(v100_host(healthy=False))
    assert samples(generate_latest(registry).decode())[
        ('nvidia_vgpu_healthy', ())] == 0.0


def test_metrics_lists_exactly_what_is_emitted():
    """Rules and dashboards are checked against METRICS: it must be the
    exporter's real vocabulary, no more, no less."""
    emitted = set()
    for document in (v100_host(drift=[{'code': 'x', 'message': ''}],
                               waits=[{'code': 'y', 'guests': ['g'],
                                       'message': ''}],
                               gpu_faults=FAULTS,
                               gpu_instances=INSTANCES), no_gpu_host()):
        write_facts(document)
        emitted |= {name for name, _ in samples(exposition())}
    # The per-vGPU metrics come from NVML, not the facts: test_guest_
    # metrics.py holds them to what the exporter emits.
    assert emitted == set(exporter.METRICS) - set(guest_metrics.METRICS)
    assert all(name.startswith(exporter.PREFIX) for name in emitted)


# One GPU fell off the bus with a guest on it, another wants a reset,
# and nvidia-smi (asked once more) did not answer for the host.
FAULTS = {
    'gpus': [
        {'gpu': '0000:84:00.0', 'listed': False, 'ecc_uncorrected': None,
         'rows_pending': None, 'rows_failed': None, 'xids': {'79': 1},
         'faults': [{'code': 'fell-off-bus', 'severity': 2, 'guests': 1}]},
        {'gpu': '0000:85:00.0', 'listed': True, 'ecc_uncorrected': 2,
         'rows_pending': True, 'rows_failed': False,
         'xids': {'63': 1, '94': 2},
         'faults': [{'code': 'row-remap-pending', 'severity': 1,
                     'guests': 0}]}],
    'host_faults': [{'code': 'nvidia-smi-no-answer', 'severity': 2,
                     'guests': 0}]}


# An H100 cut into four 1g.10gb and one 3g.40gb: no room for another of
# either size.
INSTANCES = [
    {'gpu': '0000:41:00.0', 'profile': '1g.10gb', 'existing': 4, 'free': 0},
    {'gpu': '0000:41:00.0', 'profile': '3g.40gb', 'existing': 1, 'free': 0},
    {'gpu': '0000:41:00.0', 'profile': '7g.80gb', 'existing': 0, 'free': 0},
    {'gpu': '0000:42:00.0', 'profile': '1g.10gb', 'existing': 0,
     'free': None}]


def test_gpu_instances_per_size_are_counted_per_gpu():
    write_facts(v100_host(gpu_instances=INSTANCES))
    found = samples(exposition())
    at = (('gpu', '0000:41:00.0'),)
    assert {labels: value for (name, labels), value in found.items()
            if name == 'nvidia_vgpu_gpu_instances'} == {
        at + (('profile', '1g.10gb'),): 4.0,
        at + (('profile', '3g.40gb'),): 1.0,
        at + (('profile', '7g.80gb'),): 0.0,
        (('gpu', '0000:42:00.0'), ('profile', '1g.10gb')): 0.0}
    # A count the driver did not give has no sample, not a false 0.
    assert {labels for (name, labels), _ in found.items()
            if name == 'nvidia_vgpu_gpu_instances_free'} == {
        at + (('profile', size),) for size in ('1g.10gb', '3g.40gb',
                                               '7g.80gb')}


def test_gpu_faults_are_series_per_gpu_and_fault_guests_counted():
    write_facts(v100_host(gpu_faults=FAULTS))
    found = samples(exposition())
    first, second = (('gpu', '0000:84:00.0'),), (('gpu', '0000:85:00.0'),)
    faults = {labels: value for (name, labels), value in found.items()
              if name == 'nvidia_vgpu_gpu_fault'}
    assert faults == {
        (('code', 'fell-off-bus'),) + first: 2.0,
        (('code', 'row-remap-pending'),) + second: 1.0,
        (('code', 'nvidia-smi-no-answer'), ('gpu', '')): 2.0}
    assert found[('nvidia_vgpu_gpu_fault_guests',
                  (('code', 'fell-off-bus'),) + first)] == 1.0
    assert found[('nvidia_vgpu_gpu_faults_read', ())] == 1.0
    assert found[('nvidia_vgpu_gpu_listed', first)] == 0.0
    assert found[('nvidia_vgpu_gpu_listed', second)] == 1.0
    assert found[('nvidia_vgpu_gpu_xid_events',
                  first + (('xid', '79'),))] == 1.0
    assert found[('nvidia_vgpu_gpu_xid_events',
                  second + (('xid', '94'),))] == 2.0
    assert found[('nvidia_vgpu_gpu_ecc_uncorrected', second)] == 2.0
    assert found[('nvidia_vgpu_gpu_remapped_rows_pending', second)] == 1.0
    assert found[('nvidia_vgpu_gpu_remapped_rows_failure', second)] == 0.0
    # Not reported is no sample, not a false 0.
    assert ('nvidia_vgpu_gpu_ecc_uncorrected', first) not in found


def test_an_xid_label_is_only_ever_a_number():
    hostile = dict(FAULTS, gpus=[dict(FAULTS['gpus'][0], xids={
        '79': 1, 'a"b': 3, '13\n14': 1})])
    write_facts(v100_host(gpu_faults=hostile))
    assert {labels for (name, labels), _ in samples(exposition()).items()
            if name == 'nvidia_vgpu_gpu_xid_events'} == {
        (('gpu', '0000:84:00.0'), ('xid', '79'))}


def _get(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.headers['Content-Type'], response.read().decode()


def test_the_http_server_serves_a_scrape_on_an_ephemeral_port():
    write_facts(v100_host())
    server = exporter.serve('127.0.0.1', 0, exporter.registry(
        host_path(exporter.FACTS_PATH), clock=lambda: NOW,
        hostname='compute-1'))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        content_type, text = _get('http://127.0.0.1:{}/metrics'.format(
            server.server_address[1]))
    finally:
        server.shutdown()
        server.server_close()
    assert content_type.startswith('text/plain')
    assert text == exposition()


def _free_port():
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def test_the_services_command_line_serves_the_hooks_facts(isolated_host):
    """python -m nvidia_vgpu.monitoring.exporter --port N, as the systemd
    unit runs it, reads the document where the hooks write it."""
    write_facts(v100_host(paused=True))
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, '-m', 'nvidia_vgpu.monitoring.exporter',
         '--port', str(port)],
        env=dict(os.environ, PYTHONPATH=os.path.join(REPO, 'src', 'lib')),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                _, text = _get('http://127.0.0.1:{}/metrics'.format(port))
                break
            except OSError:
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline
                time.sleep(0.1)
    finally:
        process.terminate()
        process.communicate(timeout=30)
    found = samples(text)
    assert found[('nvidia_vgpu_paused', ())] == 1.0
    assert found[('nvidia_vgpu_host_info',
                  (('hostname', socket.gethostname()),))] == 1.0


def test_the_document_the_hooks_write_is_read_as_written():
    """What the charm's hooks wrote in a simulated V100 host
    (scenarios/monitoring/v100-healthy.yaml, recorded), as the exporter
    reads it."""
    with open(os.path.join(REPO, 'unit_tests', 'data', 'scenario_outputs',
                           'monitoring', 'v100-healthy.json')) as stream:
        written = json.load(stream)['files'][exporter.FACTS_PATH]
    write_facts(written)
    found = samples(exposition())
    model = 'Tesla V100 PCIe 16GB'
    for gpu in ('0000:84:00.0', '0000:85:00.0'):
        labels = row(gpu, 'nvidia-105', 'V100-1Q', model)
        assert found[('nvidia_vgpu_instances_capacity', labels)] == 16.0
        assert found[('nvidia_vgpu_instances_in_use', labels)] == 1.0
        assert found[('nvidia_vgpu_instances_free', labels)] == 15.0
    assert found[('nvidia_vgpu_healthy', ())] == 1.0
    assert found[('nvidia_vgpu_status_severity', (('code', 'ready'),))] \
        == 0.0
    assert found[('nvidia_vgpu_service_active',
                  (('service', 'nvidia-vgpu-mgr'),))] == 1.0


def test_a_gpu_host_that_gives_nova_nothing_counts_its_reasons():
    facts = dict(v100_host(), offer_gaps=[
        'This GPU host gives Nova no vGPU: no GPU here matches 10de:2330'])
    write_facts(facts)
    assert samples(exposition())[('nvidia_vgpu_offer_gaps', ())] == 1.0
