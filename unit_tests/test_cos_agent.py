"""The cos-agent relation: what grafana-agent reads from this unit's data
bag, decoded as the cos_agent library and cosl decode it (the sources are
named in interfaces/cos-agent/provides.py); the exporter's service; the
alert rules and the dashboard against what the exporter emits, and
against the real promtool where the machine has it (Debian's prometheus
package)."""
import base64
import hashlib
import json
import lzma
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml
from charmhelpers.core import hookenv
from charms.reactive import is_flag_set

import cos_agent_layer
from nvidia_vgpu.host.hostfs import host_path
from nvidia_vgpu.monitoring import (
    cos_agent, exporter, facts_file, metrics_port)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(REPO, 'src')
CHARM = 'nova-compute-nvidia-vgpu'
MODEL, MODEL_UUID = 'openstack', '47bfebeb-92ee-4cfa-b768-cd29749d33ac'
RID = 'cos-agent:7'
RULES = os.path.join(SRC, cos_agent.ALERT_RULES_DIR)
DASHBOARD = os.path.join(SRC, cos_agent.DASHBOARDS_DIR, 'nvidia-vgpu.json')
TOPOLOGY = {'juju_model': MODEL, 'juju_model_uuid': MODEL_UUID,
            'juju_application': CHARM}
# CosAgentProviderUnitData (grafana-agent-operator's cos_agent library,
# LIBPATCH 26): every field, and those without a default.
UNIT_DATA_FIELDS = {'metrics_alert_rules', 'log_alert_rules', 'dashboards',
                    'subordinate', 'metrics_scrape_jobs', 'log_slots',
                    'tracing_protocols'}
UNIT_DATA_REQUIRED = {'metrics_alert_rules', 'log_alert_rules', 'dashboards',
                      'metrics_scrape_jobs', 'log_slots'}
PROMTOOL = shutil.which('promtool')
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason='promtool is not on PATH (Debian: apt-get '
    'install prometheus)')


@pytest.fixture(scope='module')
def provides():
    """The interface layer, loaded as in a charm (CHARM_DIR's metadata)."""
    return cos_agent_layer.load_provides()


@pytest.fixture
def unit(monkeypatch, fake_commands):
    """A hook's environment: unit 0 of the charm in model `openstack`."""
    for name, value in (('JUJU_UNIT_NAME', CHARM + '/0'),
                        ('JUJU_MODEL_NAME', MODEL),
                        ('JUJU_MODEL_UUID', MODEL_UUID),
                        ('JUJU_CHARM_DIR', SRC), ('CHARM_DIR', SRC)):
        monkeypatch.setenv(name, value)
    hookenv.cache.clear()
    yield fake_commands
    hookenv.cache.clear()


def publish(provides, unit, published=None, port=10320):
    """Run update_cos_agent on a relation whose unit data bag holds
    `published` (relation-get answers it); the relation, and whether
    anything changed."""
    unit.set('relation-get', stdout=json.dumps(published or {}))
    hookenv.cache.clear()
    endpoint = provides.CosAgentProvides('cos-agent', [RID])
    changed = endpoint.update_cos_agent(
        [endpoint.MetricsEndpoint(port, '/metrics', '127.0.0.1',
                                  'nvidia-vgpu')],
        alert_rules_dir=RULES,
        dashboards_dir=os.path.dirname(DASHBOARD))
    return endpoint.relations[0], changed


def config_of(relation):
    """The `config` key as grafana-agent parses it."""
    return json.loads(relation.to_publish_raw['config'])


def decode_dashboard(text):
    """cosl's LZMABase64.decompress, as grafana-agent reads dashboards."""
    return json.loads(lzma.decompress(base64.b64decode(
        text.encode('utf-8'))).decode())


# ------------------------------------------------------- the data bag


def test_the_data_bag_holds_the_cos_agent_provider_unit_data(
        provides, unit):
    relation, changed = publish(provides, unit)
    assert changed
    assert set(relation.to_publish_raw.data) == {'config'}
    config = config_of(relation)
    assert UNIT_DATA_REQUIRED <= set(config) <= UNIT_DATA_FIELDS
    assert config['metrics_scrape_jobs'] == [{
        'job_name': CHARM + '_nvidia-vgpu', 'metrics_path': '/metrics',
        'static_configs': [{'targets': ['127.0.0.1:10320']}]}]
    assert config['log_alert_rules'] == {}
    assert config['log_slots'] == []
    assert all(isinstance(text, str) for text in config['dashboards'])


def test_alert_rules_carry_the_topology_as_cos_agent_providers_send_them(
        provides, unit):
    relation, _ = publish(provides, unit)
    groups = config_of(relation)['metrics_alert_rules']['groups']
    # <model>_<uuid[:8]>_<application>_<group>_rules, sanitised: what
    # grafana-agent recognises as already named and leaves as it is.
    assert [group['name'] for group in groups] == [
        'openstack_47bfebeb_nova_compute_nvidia_vgpu_NvidiaVgpu_rules']
    assert re.match(r'^.*?_[\da-f]{8}_.*?rules$', groups[0]['name'])
    matchers = ('juju_model="openstack",juju_model_uuid="{}",'
                'juju_application="{}"'.format(MODEL_UUID, CHARM))
    for rule in groups[0]['rules']:
        assert dict(rule['labels'], severity=None) == dict(
            TOPOLOGY, juju_charm=CHARM, severity=None)
        assert '%%juju_topology%%' not in rule['expr']
        assert matchers in rule['expr']


def test_the_dashboard_decodes_as_grafana_agent_decodes_it(provides, unit):
    relation, _ = publish(provides, unit)
    [encoded] = config_of(relation)['dashboards']
    dashboard = decode_dashboard(encoded)
    with open(DASHBOARD) as stream:
        original = json.load(stream)
    # cosl's DashboardPath40UID: the charm's name and the file's path in
    # the charm, shake-256, 40 hex digits.
    assert dashboard.pop('uid') == hashlib.shake_256(
        '{}-files/grafana_dashboards/nvidia-vgpu.json'.format(
            CHARM).encode()).hexdigest(20)
    assert dashboard.pop('tags') == original.pop('tags') + [
        'charm: ' + CHARM]
    assert dashboard == original


def test_nothing_is_set_again_when_nothing_changed(provides, unit):
    first, _ = publish(provides, unit)
    again, changed = publish(provides, unit, dict(first.to_publish_raw.data))
    assert not changed
    assert not again.to_publish_raw.modified
    moved, changed = publish(provides, unit, dict(first.to_publish_raw.data),
                             port=10321)
    assert changed and moved.to_publish_raw.modified
    assert config_of(moved)['metrics_scrape_jobs'][0]['static_configs'] == [
        {'targets': ['127.0.0.1:10321']}]


def test_the_flags_follow_grafana_agents_unit(provides, unit):
    endpoint = provides.CosAgentProvides('cos-agent', [RID])
    endpoint.joined()
    assert is_flag_set('cos-agent.connected')
    assert not is_flag_set('cos-agent.available')
    endpoint.changed()
    assert is_flag_set('cos-agent.available')
    endpoint.departed()
    assert not is_flag_set('cos-agent.connected')
    assert not is_flag_set('cos-agent.available')


# ------------------------------------------------ the exporter service


LIB = os.path.join(SRC, 'lib')
PYTHON = '/var/lib/juju/agents/unit-{}-0/.venv/bin/python3'.format(CHARM)


def unit_file():
    with open(host_path('/etc/systemd/system/' + cos_agent.UNIT)) as stream:
        return stream.read()


def test_the_service_runs_the_venvs_python_on_the_port(fake_commands):
    fake_commands.set('systemctl')
    assert cos_agent.ensure_exporter(10320, PYTHON, LIB) is None
    text = unit_file()
    assert 'ExecStart={} -m nvidia_vgpu.monitoring.exporter --port 10320 ' \
        '--address 127.0.0.1\n'.format(PYTHON) in text
    assert 'Environment=PYTHONPATH={}\n'.format(LIB) in text
    assert 'Restart=on-failure\n' in text
    # Root without a single capability: it reads only root's own files.
    assert 'User=' not in text
    for hardening in ('CapabilityBoundingSet=\n', 'AmbientCapabilities=\n',
                      'NoNewPrivileges=yes',
                      'ProtectSystem=strict', 'ProtectHome=yes',
                      'PrivateTmp=yes'):
        assert hardening in text
    assert 'WantedBy=multi-user.target' in text
    assert fake_commands.calls == [
        ['systemctl', 'daemon-reload'],
        ['systemctl', 'enable', cos_agent.UNIT],
        ['systemctl', 'restart', cos_agent.UNIT]]


def test_nothing_restarts_unless_the_unit_changed(fake_commands):
    fake_commands.set('systemctl')
    cos_agent.ensure_exporter(10320, PYTHON, LIB)
    calls = len(fake_commands.calls)
    cos_agent.ensure_exporter(10320, PYTHON, LIB)
    assert len(fake_commands.calls) == calls
    cos_agent.ensure_exporter(10400, PYTHON, LIB)
    assert '--port 10400 ' in unit_file()
    assert fake_commands.calls[calls:] == [
        ['systemctl', 'daemon-reload'],
        ['systemctl', 'enable', cos_agent.UNIT],
        ['systemctl', 'restart', cos_agent.UNIT]]


@pytest.mark.parametrize('source', cos_agent.EXPORTER_SOURCES)
def test_a_changed_exporter_restarts_the_service(fake_commands, tmp_path,
                                                 source):
    """A charm upgrade that changes the exporter's code, any module of it,
    changes the unit (its sources' digest), hence a restart onto the new
    code."""
    lib = tmp_path / 'lib'
    shutil.copytree(LIB, str(lib))
    fake_commands.set('systemctl')
    cos_agent.ensure_exporter(10320, PYTHON, str(lib))
    with open(str(lib / source), 'a') as stream:
        stream.write('# a new revision\n')
    cos_agent.ensure_exporter(10320, PYTHON, str(lib))
    assert fake_commands.calls.count(
        ['systemctl', 'restart', cos_agent.UNIT]) == 2


def test_the_digest_covers_every_module_the_exporter_loads():
    """Run as its service runs it: every module of ours it imports is one
    the digest reads."""
    probe = ('import sys; sys.path.insert(0, sys.argv[1]); '
             'import nvidia_vgpu.monitoring.exporter; '
             'print("\\n".join(sorted(m.__file__ for n, m in '
             'sys.modules.items() if n.startswith("nvidia_vgpu"))))')
    loaded = subprocess.run(
        [sys.executable, '-c', probe, LIB], check=True,
        stdout=subprocess.PIPE, universal_newlines=True).stdout.split()
    assert sorted(os.path.relpath(path, LIB) for path in loaded) == sorted(
        cos_agent.EXPORTER_SOURCES)


def test_a_service_that_does_not_start_is_reported_and_still_published(
        provides, unit, monkeypatch):
    """The scrape job stays published: the exporter-down alert is what
    tells the operator."""
    def fails(name):
        raise subprocess.CalledProcessError(1, ['systemctl', 'restart',
                                                name])
    monkeypatch.setattr(cos_agent.systemd, 'run_unit', fails)
    unit.set('systemctl')
    unit.set('relation-get', stdout='{}')
    endpoint = provides.CosAgentProvides('cos-agent', [RID])
    assert cos_agent.configure(endpoint, 10320, SRC, PYTHON) == (
        'nvidia-vgpu-exporter.service did not start: see journalctl -u '
        'nvidia-vgpu-exporter.service')
    assert config_of(endpoint.relations[0])['metrics_scrape_jobs']


def test_the_service_is_stopped_and_removed_with_the_relation(
        fake_commands):
    fake_commands.set('systemctl')
    cos_agent.ensure_exporter(10320, PYTHON, LIB)
    calls = len(fake_commands.calls)
    assert cos_agent.remove_exporter()
    assert not os.path.exists(host_path('/etc/systemd/system/' +
                                        cos_agent.UNIT))
    assert fake_commands.calls[calls:] == [
        ['systemctl', 'stop', cos_agent.UNIT],
        ['systemctl', 'disable', cos_agent.UNIT],
        ['systemctl', 'daemon-reload']]
    assert not cos_agent.remove_exporter()
    assert len(fake_commands.calls) == calls + 3


@pytest.mark.parametrize('port', [0, -1, 65536, '10320', True, None])
def test_a_port_that_is_not_one_serves_and_publishes_nothing(
        port, fake_commands):
    class Endpoint:
        def update_cos_agent(self, *args, **kwargs):
            raise AssertionError('published')
    fake_commands.set('systemctl')
    problem = cos_agent.configure(Endpoint(), port, SRC, PYTHON)
    assert problem.startswith('Invalid metrics-port: ')
    assert 'is not a TCP port (1 to 65535)' in problem
    assert fake_commands.calls == []


def test_configure_serves_and_publishes(provides, unit):
    unit.set('systemctl')
    unit.set('relation-get', stdout='{}')
    endpoint = provides.CosAgentProvides('cos-agent', [RID])
    assert cos_agent.configure(endpoint, 10320, SRC, PYTHON) is None
    assert ['systemctl', 'restart', cos_agent.UNIT] in unit.calls
    config = config_of(endpoint.relations[0])
    assert config['metrics_scrape_jobs'][0]['static_configs'] == [
        {'targets': ['127.0.0.1:10320']}]
    assert config['metrics_alert_rules']['groups']
    assert len(config['dashboards']) == 1


def test_the_default_port_is_the_options(provides):
    with open(os.path.join(SRC, 'config.yaml')) as stream:
        option = yaml.safe_load(stream)['options'][metrics_port.OPTION]
    assert option['type'] == 'int'
    assert metrics_port.problem(option['default']) is None


# ---------------------------------------- alert rules and the dashboard


METRIC = re.compile(r'\b(nvidia_vgpu_[a-z_]+)\b')
KNOWN = set(exporter.METRICS) | {'up'}


def rule_files():
    return sorted(os.path.join(RULES, name) for name in os.listdir(RULES))


def all_rules():
    for path in rule_files():
        with open(path) as stream:
            for group in yaml.safe_load(stream)['groups']:
                for rule in group['rules']:
                    yield rule


def test_every_rule_uses_only_what_the_exporter_emits():
    rules = list(all_rules())
    assert {rule['alert'] for rule in rules} >= {
        'NvidiaVgpuHostDrift', 'NvidiaVgpuRebootRequired',
        'NvidiaVgpuManagerDown', 'NvidiaVgpuFactsStale',
        'NvidiaVgpuTypeExhausted'}
    for rule in rules:
        names = set(METRIC.findall(rule['expr']))
        if rule['expr'].startswith('up{'):
            names.add('up')
        assert names and names <= KNOWN, rule['alert']
        # Every selector is limited to this application's series.
        selectors = re.findall(r'\b(?:nvidia_vgpu_[a-z_]+|up)(\{[^}]*\})?',
                               rule['expr'])
        assert all('%%juju_topology%%' in selector
                   for selector in selectors), rule['alert']
        assert rule['labels']['severity'] in ('critical', 'warning', 'info')
        assert rule['annotations']['summary']
        assert rule['annotations']['description']


def test_stale_means_what_the_nrpe_checks_call_stale():
    [rule] = [rule for rule in all_rules()
              if rule['alert'] == 'NvidiaVgpuFactsStale']
    assert rule['expr'].endswith('> {}'.format(facts_file.MAX_AGE_SECONDS))


def test_the_fixes_are_named():
    described = {rule['alert']: rule['annotations']['description']
                 for rule in all_rules()}
    assert 'vgpu-health' in described['NvidiaVgpuHostDrift']
    assert 'reboot the host' in described['NvidiaVgpuRebootRequired']
    assert 'nvidia-vgpu-mgr' in described['NvidiaVgpuManagerDown']
    assert 'juju status' in described['NvidiaVgpuFactsStale']
    assert 'list-vgpu-types' in described['NvidiaVgpuHostOffersNovaNothing']
    assert 'Replacing' in described['NvidiaVgpuGpuFailed']
    assert 'vgpu-health' in described['NvidiaVgpuGpuDegraded']


def dashboard():
    with open(DASHBOARD) as stream:
        return json.load(stream)


def dashboard_exprs():
    return [target['expr'] for panel in dashboard()['panels']
            for target in panel.get('targets', [])]


def test_the_dashboard_uses_only_what_the_exporter_emits():
    exprs = dashboard_exprs()
    assert len(exprs) > 10
    for expr in exprs:
        names = set(METRIC.findall(expr))
        assert names and names <= KNOWN, expr
        # Each selector follows the topology variables.
        for selector in re.findall(r'nvidia_vgpu_[a-z_]+(\{[^}]*\})?',
                                   expr):
            for variable in ('juju_model', 'juju_application',
                             'juju_unit'):
                assert '{0}=~"${0}"'.format(variable) in selector, expr


def test_the_dashboard_is_templated_as_cos_expects():
    content = dashboard()
    variables = {item['name']: item for item in
                 content['templating']['list']}
    assert variables['prometheusds']['type'] == 'datasource'
    assert variables['prometheusds']['query'] == 'prometheus'
    assert {'juju_model', 'juju_application', 'juju_unit'} <= set(variables)
    for panel in content['panels']:
        if panel['type'] != 'row':
            assert panel['datasource']['uid'] == '${prometheusds}'
            assert all(target['datasource']['uid'] == '${prometheusds}'
                       for target in panel['targets'])
    for item in variables.values():
        if item['type'] == 'query':
            assert set(METRIC.findall(item['query']['query'])) <= KNOWN


def promtool(*args, cwd):
    done = subprocess.run([PROMTOOL] + list(args), cwd=cwd,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=120)
    assert done.returncode == 0, done.stdout
    return done.stdout


@needs_promtool
def test_promtool_accepts_the_rules_as_published(provides, unit, tmp_path):
    """What Prometheus gets: the rules from the data bag."""
    relation, _ = publish(provides, unit)
    with open(str(tmp_path / 'published.rules'), 'w') as stream:
        yaml.safe_dump(config_of(relation)['metrics_alert_rules'], stream)
    assert 'SUCCESS: 15 rules found' in promtool(
        'check', 'rules', 'published.rules', cwd=str(tmp_path))


@needs_promtool
def test_promtool_accepts_every_dashboard_query(tmp_path):
    exprs = [re.sub(r'\$(juju_model|juju_application|juju_unit|vgpu_type)',
                    '.*', expr) for expr in dashboard_exprs()]
    with open(str(tmp_path / 'dashboard.rules'), 'w') as stream:
        yaml.safe_dump({'groups': [{'name': 'dashboard', 'rules': [
            {'record': 'dashboard:query{}'.format(index), 'expr': expr}
            for index, expr in enumerate(exprs)]}]}, stream)
    assert 'SUCCESS: {} rules found'.format(len(exprs)) in promtool(
        'check', 'rules', 'dashboard.rules', cwd=str(tmp_path))


def series(metric, unit_index, values, application=CHARM, **labels):
    labels = dict(TOPOLOGY, juju_application=application,
                  juju_unit='{}/{}'.format(application, unit_index),
                  **labels)
    return {'series': '{}{{{}}}'.format(metric, ','.join(
        '{}="{}"'.format(name, value)
        for name, value in sorted(labels.items()))), 'values': values}


def alert(unit_index, severity, **labels):
    return {'exp_labels': dict(
        TOPOLOGY, juju_charm=CHARM, severity=severity,
        juju_unit='{}/{}'.format(CHARM, unit_index), **labels)}


def write_published_rules(provides, unit, tmp_path) -> None:
    """The alert rules the unit publishes, as published.rules in tmp_path
    for promtool's rule tests (without annotations, which promtool
    compares otherwise)."""
    relation, _ = publish(provides, unit)
    rules = config_of(relation)['metrics_alert_rules']
    for group in rules['groups']:
        for rule in group['rules']:
            del rule['annotations']
    with open(str(tmp_path / 'published.rules'), 'w') as stream:
        yaml.safe_dump(rules, stream)


@needs_promtool
def test_the_alerts_fire_where_they_should(provides, unit, tmp_path):
    """promtool's rule tests over an hour of two hosts' metrics: unit 0
    drifts, its vGPU Manager is down and its facts go stale; unit 1 is
    paused (its stopped vGPU Manager is no alert); another application's
    drift is not this one's. Unit 0's status is its drift, whose alert is
    its own (no status alert too); unit 1's a refused option, a warning;
    unit 1 gives Nova nothing."""
    write_published_rules(provides, unit, tmp_path)
    tests = {'rule_files': ['published.rules'], 'evaluation_interval': '1m',
             'tests': [{'interval': '1m', 'input_series': [
                 series('nvidia_vgpu_drift_findings', 0, '1x60',
                        code='vfs-missing'),
                 series('nvidia_vgpu_drift_findings', 0, '1x60',
                        application='other', code='vfs-missing'),
                 series('nvidia_vgpu_healthy', 0, '0x60'),
                 series('nvidia_vgpu_gpu_host', 0, '1x60'),
                 series('nvidia_vgpu_gpu_host', 1, '1x60'),
                 series('nvidia_vgpu_paused', 0, '0x60'),
                 series('nvidia_vgpu_paused', 1, '1x60'),
                 series('nvidia_vgpu_reboot_required', 0, '0x60'),
                 series('nvidia_vgpu_reboot_required', 1, '0x60'),
                 series('nvidia_vgpu_service_active', 0, '0x60',
                        service='nvidia-vgpu-mgr'),
                 series('nvidia_vgpu_service_active', 1, '0x60',
                        service='nvidia-vgpu-mgr'),
                 series('nvidia_vgpu_facts_age_seconds', 0, '6000+60x60'),
                 series('nvidia_vgpu_facts_age_seconds', 1, '60x60'),
                 series('nvidia_vgpu_offer_gaps', 0, '0x60'),
                 series('nvidia_vgpu_offer_gaps', 1, '1x60'),
                 series('nvidia_vgpu_status_severity', 0, '2x60',
                        code='host-drift'),
                 series('nvidia_vgpu_status_severity', 1, '1x60',
                        code='option-refused'),
             ],
                 'alert_rule_test': [
                     {'eval_time': '30m', 'alertname': 'NvidiaVgpuHostDrift',
                      'exp_alerts': [alert(0, 'critical',
                                           code='vfs-missing')]},
                     {'eval_time': '30m',
                      'alertname': 'NvidiaVgpuHostUnhealthy',
                      'exp_alerts': []},
                     {'eval_time': '30m',
                      'alertname': 'NvidiaVgpuManagerDown',
                      'exp_alerts': [alert(0, 'critical',
                                           service='nvidia-vgpu-mgr')]},
                     {'eval_time': '5m', 'alertname': 'NvidiaVgpuFactsStale',
                      'exp_alerts': []},
                     {'eval_time': '30m',
                      'alertname': 'NvidiaVgpuFactsStale',
                      'exp_alerts': [alert(0, 'warning')]},
                     {'eval_time': '20m',
                      'alertname': 'NvidiaVgpuHostOffersNovaNothing',
                      'exp_alerts': []},
                     {'eval_time': '40m',
                      'alertname': 'NvidiaVgpuHostOffersNovaNothing',
                      'exp_alerts': [alert(1, 'warning')]},
                     {'eval_time': '40m',
                      'alertname': 'NvidiaVgpuUnitCritical',
                      'exp_alerts': []},
                     {'eval_time': '20m', 'alertname': 'NvidiaVgpuUnitWarning',
                      'exp_alerts': []},
                     {'eval_time': '40m', 'alertname': 'NvidiaVgpuUnitWarning',
                      'exp_alerts': [alert(1, 'warning',
                                           code='option-refused')]}]}]}
    with open(str(tmp_path / 'tests.yaml'), 'w') as stream:
        yaml.safe_dump(tests, stream)
    assert 'SUCCESS' in promtool('test', 'rules', 'tests.yaml',
                                 cwd=str(tmp_path))


@needs_promtool
def test_a_type_is_exhausted_only_when_no_gpu_of_it_is_free(provides, unit,
                                                            tmp_path):
    write_published_rules(provides, unit, tmp_path)

    def free(unit_index, vgpu_type, values):
        return series('nvidia_vgpu_instances_free', unit_index, values,
                      gpu='0000:84:00.0', model='Tesla V100',
                      vgpu_type=vgpu_type, profile='GRID V100-1Q')
    exhausted = dict(TOPOLOGY, juju_charm=CHARM, severity='warning',
                     vgpu_type='nvidia-105', profile='GRID V100-1Q')
    tests = {'rule_files': ['published.rules'], 'evaluation_interval': '1m',
             'tests': [{'interval': '1m', 'input_series': [
                 free(0, 'nvidia-105', '0x60'),
                 free(1, 'nvidia-105', '2x20 0x40'),
                 free(0, 'nvidia-106', '0x60')],
                 'alert_rule_test': [
                     {'eval_time': '40m',
                      'alertname': 'NvidiaVgpuTypeExhausted',
                      'exp_alerts': [{'exp_labels': dict(
                          exhausted, vgpu_type='nvidia-106')}]},
                     {'eval_time': '59m',
                      'alertname': 'NvidiaVgpuTypeExhausted',
                      'exp_alerts': [
                          {'exp_labels': exhausted},
                          {'exp_labels': dict(
                              exhausted, vgpu_type='nvidia-106')}]}]}]}
    with open(str(tmp_path / 'tests.yaml'), 'w') as stream:
        yaml.safe_dump(tests, stream)
    assert 'SUCCESS' in promtool('test', 'rules', 'tests.yaml',
                                 cwd=str(tmp_path))


@needs_promtool
def test_a_failed_gpu_pages_at_once_and_one_wanting_a_reset_warns(
        provides, unit, tmp_path):
    """Unit 0's GPU falls off the bus at minute 10: critical a minute
    later, and its host's unhealthy verdict is that alert's, not a second
    page. Unit 1's GPU 85 waits for a row remapping: a warning after 15
    minutes; its GPU 86 has a contained and an uncontained ECC error: the
    failure pages, the warning of the same GPU does not."""
    write_published_rules(provides, unit, tmp_path)

    def fault(unit_index, gpu, code, values):
        return series('nvidia_vgpu_gpu_fault', unit_index, values,
                      gpu=gpu, code=code)
    tests = {'rule_files': ['published.rules'], 'evaluation_interval': '1m',
             'tests': [{'interval': '1m', 'input_series': [
                 fault(0, '0000:84:00.0', 'fell-off-bus', '_x10 2x50'),
                 series('nvidia_vgpu_healthy', 0, '1x10 0x50'),
                 fault(1, '0000:85:00.0', 'row-remap-pending', '1x60'),
                 fault(1, '0000:86:00.0', 'contained-ecc', '1x60'),
                 fault(1, '0000:86:00.0', 'uncorrected-ecc', '2x60')],
                 'alert_rule_test': [
                     {'eval_time': '10m', 'alertname': 'NvidiaVgpuGpuFailed',
                      'exp_alerts': [alert(1, 'critical', gpu='0000:86:00.0',
                                           code='uncorrected-ecc')]},
                     {'eval_time': '12m', 'alertname': 'NvidiaVgpuGpuFailed',
                      'exp_alerts': [
                          alert(0, 'critical', gpu='0000:84:00.0',
                                code='fell-off-bus'),
                          alert(1, 'critical', gpu='0000:86:00.0',
                                code='uncorrected-ecc')]},
                     {'eval_time': '40m',
                      'alertname': 'NvidiaVgpuHostUnhealthy',
                      'exp_alerts': []},
                     {'eval_time': '10m',
                      'alertname': 'NvidiaVgpuGpuDegraded',
                      'exp_alerts': []},
                     {'eval_time': '20m',
                      'alertname': 'NvidiaVgpuGpuDegraded',
                      'exp_alerts': [alert(1, 'warning', gpu='0000:85:00.0',
                                           code='row-remap-pending')]}]}]}
    with open(str(tmp_path / 'tests.yaml'), 'w') as stream:
        yaml.safe_dump(tests, stream)
    assert 'SUCCESS' in promtool('test', 'rules', 'tests.yaml',
                                 cwd=str(tmp_path))


# --------------------------------------- the hook simulator, end to end


SCENARIO = '''
name: no GPU, related to grafana-agent, then not
host:
  series: jammy
  packages: {nova-common: "3:25.2.1-0ubuntu2"}
  pci:
    - {address: "0000:00:00.0", vendor: "8086", device: "09a2",
       class: "060000"}
relations:
  nova-vgpu:
    - {remote_unit: nova-compute/0, data: {}}
  cos-agent:
    # Juju gives every unit's data bag its addresses.
    - remote_unit: grafana-agent/0
      data: {private-address: 192.0.2.10, ingress-address: 192.0.2.10,
             egress-subnets: 192.0.2.10/32}
steps:
  - install
  - cos-agent-relation-created
  - cos-agent-relation-joined
  - cos-agent-relation-changed
  - config-changed
  - update-status
  - config: {metrics-port: 10400}
  - relation-departed: cos-agent
  - update-status
'''


@pytest.mark.host_side
def test_the_relation_serves_publishes_and_removes_through_real_hooks(
        tmp_path):
    """charms.reactive dispatches the interface layer installed as charm
    build installs it (hooks/relations/cos_agent), then the charm's
    handlers: the exporter starts and the data bag is set once, nothing
    changes again until the port does, and departing removes it all."""
    from simulation import simulate_text
    path = tmp_path / 'cos-agent.yaml'
    path.write_text(SCENARIO)
    output = json.loads(simulate_text(str(path)))
    steps = [(step['step'],
              [command[1:] for command in step['commands']
               if command[0] == 'systemctl'],
              step['relation_sets']) for step in output['steps']]
    start = [['daemon-reload'], ['enable', cos_agent.UNIT],
             ['restart', cos_agent.UNIT]]
    assert steps == [
        # nova-vgpu's data, and cos-agent's.
        ('install', start, 2),
        ('cos-agent-relation-created', [], 0),
        ('cos-agent-relation-joined', [], 0),
        ('cos-agent-relation-changed', [], 0),
        ('config-changed', [], 0),
        ('update-status', [], 0),
        ('config', start, 1),
        ('relation-departed cos-agent',
         [['stop', cos_agent.UNIT], ['disable', cos_agent.UNIT],
          ['daemon-reload']], 0),
        ('update-status', [], 0)]
    assert all(step['exit_code'] == 0 for step in output['steps'])
    assert not [flag for flag in output['flags']
                if flag.startswith('cos-agent.') or
                flag == 'nova-compute-nvidia-vgpu.exporter']
    assert output['status'] == {
        'workload': 'active',
        'message': 'Unit is ready: no NVIDIA GPU on this host'}


@needs_promtool
def test_an_unlicensed_guest_warns_after_15_minutes(
        provides, unit, tmp_path):
    """Unit 0's guest A runs unlicensed from minute 0 and is licensed at
    minute 40; guest B is licensed throughout. The alert names the guest
    by its UUID (its Nova instance), its GPU and type."""
    write_published_rules(provides, unit, tmp_path)
    guest_a = {'vm_uuid': '0f6a5d1e-4b7c-4e63-9a57-4d0b1a2c3e4f',
               'gpu': '0000:84:00.0', 'vgpu_type': 'nvidia-108'}
    guest_b = dict(guest_a, vm_uuid='6c2b9e4a-0d1f-4a8b-b7c3-5e6f7a8b9c0d')
    tests = {'rule_files': ['published.rules'], 'evaluation_interval': '1m',
             'tests': [{'interval': '1m', 'input_series': [
                 series('nvidia_vgpu_guest_licensed', 0, '0x40 1x20',
                        **guest_a),
                 series('nvidia_vgpu_guest_licensed', 0, '1x60', **guest_b),
                 series('nvidia_vgpu_guest_metrics_read', 0, '1x60')],
                 'alert_rule_test': [
                     {'eval_time': '14m',
                      'alertname': 'NvidiaVgpuGuestUnlicensed',
                      'exp_alerts': []},
                     {'eval_time': '16m',
                      'alertname': 'NvidiaVgpuGuestUnlicensed',
                      'exp_alerts': [alert(0, 'warning', **guest_a)]},
                     {'eval_time': '45m',
                      'alertname': 'NvidiaVgpuGuestUnlicensed',
                      'exp_alerts': []}]}]}
    with open(str(tmp_path / 'tests.yaml'), 'w') as stream:
        yaml.safe_dump(tests, stream)
    assert 'SUCCESS' in promtool('test', 'rules', 'tests.yaml',
                                 cwd=str(tmp_path))
