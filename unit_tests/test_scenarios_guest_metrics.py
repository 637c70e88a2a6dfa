"""Per-vGPU metrics end to end (scenarios/monitoring/v100-guest-metrics
.yaml): the charm's exporter, run once as its service runs it, reads
each running guest's vGPU through NVML (the simulator's stand-in, from
the host's guests) and Prometheus parses what it serves."""
from prometheus_client.parser import text_string_to_metric_families

from nvidia_vgpu.monitoring import guest_metrics
from simulation import scenario

ALPHA = '3f2b6c1a-8d4e-4f7a-9b2c-5e1d7a3c9f01'    # licensed, busy
BRAVO = '9a7e1d3b-2c5f-4b8a-a6d1-3f9c5e7b1a02'    # unlicensed
CHARLIE = 'c4d8a2e6-7b1f-4c3d-8e5a-9b2f6d4c8e03'  # licensed, other GPU
DELTA = 'e1b5f9c3-4a8d-4e2b-b7c6-1a3d5f9b2c04'    # shut off
GIB = 1024 ** 3


def scrapes():
    """{metric: {vm_uuid: value}} of each exec step's scrape, in order,
    and each scrape's label sets."""
    output = scenario('monitoring/v100-guest-metrics.yaml')
    found = []
    for step in output['steps']:
        if 'exec' not in step:
            continue
        assert step['exec']['exit_code'] == 0, step['exec']['stderr']
        by_metric = {}
        for family in text_string_to_metric_families(
                step['exec']['stdout']):
            for sample in family.samples:
                by_metric.setdefault(sample.name, {})[
                    sample.labels.get('vm_uuid')] = (sample.value,
                                                     sample.labels)
        found.append(by_metric)
    return output, found


def values(scrape, name):
    return {vm: value for vm, (value, _) in scrape.get(name, {}).items()}


def test_each_running_guest_is_a_series_by_its_nova_uuid():
    output, (first, _) = scrapes()
    assert all(step['exit_code'] == 0 for step in output['steps'])
    assert values(first, 'nvidia_vgpu_guest_metrics_read') == {None: 1.0}
    assert values(first, 'nvidia_vgpu_guest_licensed') == {
        ALPHA: 1.0, BRAVO: 0.0, CHARLIE: 1.0}
    assert values(first, 'nvidia_vgpu_guest_framebuffer_used_bytes') == {
        ALPHA: 6.0 * GIB, BRAVO: 0.5 * GIB, CHARLIE: 1.0 * GIB}
    assert values(first, 'nvidia_vgpu_guest_utilization_ratio') == {
        ALPHA: 0.62, BRAVO: 0.08, CHARLIE: 0.0}
    # The shut-off guest's vGPU is not active: no series for it.
    assert DELTA not in values(first, 'nvidia_vgpu_guest_info')
    labels = {vm: found for vm, (_, found) in
              first['nvidia_vgpu_guest_info'].items()}
    assert labels[BRAVO] == {
        'vm_uuid': BRAVO, 'gpu': '0000:84:00.0', 'vgpu_type': 'nvidia-108',
        'profile': 'V100-8Q', 'guest_driver': '550.54.15',
        'license_state': 'unlicensed'}
    assert labels[CHARLIE]['gpu'] == '0000:85:00.0'
    assert labels[CHARLIE]['guest_driver'] == '535.161.08'


def test_the_series_are_bounded_to_the_guest_the_gpu_and_the_type():
    _, (first, _) = scrapes()
    for name in ('nvidia_vgpu_guest_licensed',
                 'nvidia_vgpu_guest_framebuffer_used_bytes',
                 'nvidia_vgpu_guest_utilization_ratio'):
        assert {tuple(sorted(found)) for _, found in
                first[name].values()} == {('gpu', 'vgpu_type', 'vm_uuid')}
    assert set(first) == set(guest_metrics.METRICS)


def test_a_deleted_guests_series_are_gone_at_the_next_scrape():
    """Nova deletes the unlicensed guest: no hook runs, and the next
    scrape has no series of it (so its alert resolves); the others carry
    on with fresh figures."""
    output, (_, after) = scrapes()
    assert [step['step'] for step in output['steps']][-2:] == [
        'guests', 'exec /var/lib/juju/agents/unit-nova-compute-nvidia-'
        'vgpu-0/.venv/bin/python3']
    assert output['steps'][-2]['hooks'] == []
    assert values(after, 'nvidia_vgpu_guest_licensed') == {
        ALPHA: 1.0, CHARLIE: 1.0}
    assert values(after, 'nvidia_vgpu_guest_utilization_ratio') == {
        ALPHA: 0.71, CHARLIE: 0.0}
    assert set(values(after, 'nvidia_vgpu_guest_info')) == {ALPHA, CHARLIE}
