"""What opentelemetry-collector (channel 2/stable), the documented COS
path, accepts from this charm over cos-agent, written out here in our own
words, and what our interface layer (interfaces/cos-agent) writes held
to it.

Read from these sources (nothing of them is copied here):

- canonical/opentelemetry-collector-operator, branch track/2, from which
  channel 2/stable is released, commit COLLECTOR_COMMIT below:
  - lib/charms/grafana_agent/v0/cos_agent.py, LIBAPI 0, LIBPATCH 25 (last
    changed by 772331de7ca0a3ae648792b7db485ce1606a02c8):
    CosAgentProviderUnitData, and COSAgentRequirer's
    _validated_provider_data, metrics_jobs, metrics_alerts and
    dashboards;
  - src/charm.py (the cos-agent part of its reconcile: one Prometheus
    receiver for every cos-agent job of the machine) and
    src/integrations.py (_add_alerts, _add_dashboards, forward_dashboards,
    send_remote_write);
  - lib/charms/grafana_k8s/v0/grafana_dashboard.py, LIBPATCH 50
    (CharmedDashboard._replace_uid);
  - uv.lock: cosl 1.9.1, pydantic 2.13.4, ops 3.7.0;
- canonical/cos-lib 1.9.1 (d71b94c3765bbe176b46a05a9bb3ce740272c6bb):
  src/cosl/rules.py (Rules._from_dict, _is_already_modified),
  juju_topology.py, utils.py (LZMABase64) and grafana_dashboard.py
  (DashboardPath40UID.is_valid);
- open-telemetry/opentelemetry-collector-contrib,
  receiver/prometheusreceiver/README.md: `$` in a scrape config.

grafana-agent's own copy of the library (LIBPATCH 26) has the same data
model; it differs only in where it looks for a dashboard's title.

collector_tests/ runs that library itself on the same data and holds it
to BREAKAGES below (`tox -e collector`, with a copy of the repository).
"""
import base64
import copy
import gzip
import json
import lzma
import os
import re
from typing import Any, Callable, Dict, List, NamedTuple

import pytest
from charmhelpers.core import hookenv

import cos_agent_layer

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(REPO, 'src')

# The collector's code this contract was read from; collector_tests/
# checks that its copy is this one.
COLLECTOR_REPOSITORY = 'canonical/opentelemetry-collector-operator'
COLLECTOR_BRANCH = 'track/2'
COLLECTOR_COMMIT = '9f17dececeb44c39675a088d0159b6adca8ca485'
LIBRARY = 'lib/charms/grafana_agent/v0/cos_agent.py'
LIBAPI, LIBPATCH = 0, 25

CHARM = 'nova-compute-nvidia-vgpu'
APPLICATION = 'vgpu-v100'
MODEL, MODEL_UUID = 'openstack', '47bfebeb-92ee-4cfa-b768-cd29749d33ac'
RID = 'cos-agent:7'
PORT = 10320

# ---------------------------------------------------------- the contract
#
# 1. The unit data bag. The collector reads one key, `config`, a JSON
#    object, and validates it whole as CosAgentProviderUnitData: these
#    fields must be there, each of its JSON type; others are ignored.
#    One that is missing or of another type and the library drops the
#    unit's data, all of it: no scrape job, no alert rule, no dashboard.
#    It says so only by an event the collector's charm does not observe,
#    so nothing shows in `juju status`.
REQUIRED = {'metrics_alert_rules': dict, 'log_alert_rules': dict,
            'dashboards': (list, str), 'metrics_scrape_jobs': (list, dict),
            'log_slots': (list, str)}
# ... and these may be left out, or null.
OPTIONAL = {'subordinate': bool, 'tracing_protocols': (list, str)}
KEY = 'config'
#
# 2. Scrape jobs. The collector labels each job's static_configs with the
#    sending unit's Juju topology (juju_model, juju_model_uuid,
#    juju_application, juju_unit), over any such label of ours, and puts
#    every cos-agent job of its machine in one Prometheus receiver of the
#    OpenTelemetry Collector's configuration. So: a job_name that no other
#    charm's job has (ours start with the application's name), no juju_
#    labels of our own, and no `$`, which that configuration reads as the
#    start of an environment variable. A job with `path`, `port` and
#    `job_name` is the library's old form, which it rewrites to scrape
#    localhost:<port>.
TOPOLOGY_LABELS = ('juju_model', 'juju_model_uuid', 'juju_application',
                   'juju_unit')
TARGET = re.compile(r'^[^\s:/]+:\d{1,5}$')
#
# 3. Alert rules. The collector's leader writes each application's rules
#    to a file as they came (one unit's: every unit must send the same),
#    then reads the files back with cosl under its own topology before
#    forwarding them to Prometheus, which validates them as one set and
#    refuses all of it for one bad rule (a group name twice, a `for` that
#    is no duration, an expression that does not parse: promtool, where
#    the machine has it, checks ours in test_cos_agent.py). cosl keeps a
#    group's name only where it already carries a topology
#    (<model>_<8 hex>_..._rules, the pattern below), else renames it after
#    the collector's; it changes every character Prometheus does not allow
#    in a name to `_`; and it adds the topology labels a rule lacks, from
#    the collector's own application, with matchers for them. A rule
#    without our labels would so select the collector's series and never
#    fire for ours.
ALREADY_NAMED = re.compile(r'^.*?_[\da-f]{8}_.*?rules$')
GROUP_NAME = re.compile(r'^[a-zA-Z0-9_:]+$')
RULE_LABELS = ('juju_model', 'juju_model_uuid', 'juju_application',
               'juju_charm')
DURATION = re.compile(r'^(\d+(ms|s|m|h|d|w|y))+$')
#
# 4. Dashboards. Each is base64 (the standard alphabet) of LZMA-compressed
#    (xz or the older "alone" format) UTF-8 JSON, an object. The library
#    decodes them without catching anything: a dashboard it cannot decode
#    fails the collector's hooks. LIBPATCH 25 reads the title at the top
#    level only, and the collector names each dashboard's file after it
#    (`no_title` without one): two dashboards of one application with
#    the same title, or none, overwrite each other. The uid must be 40
#    hex digits, cosl's "path-40" form: any other, and the collector's
#    dashboard provider makes one from its own charm's name and the file
#    it wrote, whose name holds the relation's id, so each new relation
#    would add the dashboard to Grafana again. Like the rules, one unit's
#    dashboards are kept per application.
UID = re.compile(r'^[0-9a-fA-F]{40}$')


def _is(value: Any, kind: Any) -> bool:
    """JSON's types, exactly (bool is no int, a list holds one kind)."""
    if isinstance(kind, tuple):
        return isinstance(value, kind[0]) and all(
            _is(item, kind[1]) for item in value)
    if kind is bool:
        return isinstance(value, bool)
    return isinstance(value, kind) and not isinstance(value, bool)


def decode_dashboard(text: str) -> Any:
    """As the library decodes one: base64, LZMA, UTF-8, JSON."""
    return json.loads(lzma.decompress(base64.b64decode(
        text.encode('utf-8'), validate=True)).decode('utf-8'))


KIND_NAMES = {dict: 'an object', bool: 'true or false',
              (list, str): 'a list of strings',
              (list, dict): 'a list of objects'}


def _bag_problems(bag: Dict[str, str]) -> List[str]:
    if KEY not in bag:
        return ['no `config` key: the collector reads nothing']
    try:
        config = json.loads(bag[KEY])
    except ValueError:
        return ['`config` is not JSON: the unit is dropped']
    if not isinstance(config, dict):
        return ['`config` is not a JSON object: the unit is dropped']
    problems = ['{} is missing: the unit is dropped'.format(name)
                for name in sorted(REQUIRED) if name not in config]
    problems += ['{} is not {}: the unit is dropped'.format(
                     name, KIND_NAMES[kind])
                 for fields, optional in ((REQUIRED, False),
                                          (OPTIONAL, True))
                 for name, kind in sorted(fields.items(), key=str)
                 if name in config and not (
                     optional and config[name] is None)
                 and not _is(config[name], kind)]
    return problems


def _job_problems(config: Dict[str, Any]) -> List[str]:
    problems = []
    names = [job.get('job_name') for job in config['metrics_scrape_jobs']]
    if len(set(map(str, names))) != len(names):
        problems.append('two scrape jobs named alike: {}'.format(names))
    for job in config['metrics_scrape_jobs']:
        name = job.get('job_name')
        if not isinstance(name, str) or not name.startswith(
                APPLICATION + '_'):
            problems.append('job_name {!r} does not start with the '
                            'application\'s name'.format(name))
        if {'path', 'port', 'job_name'} <= set(job):
            problems.append('job {!r} is in the old form, rewritten to '
                            'localhost'.format(name))
        if '$' in json.dumps(job):
            problems.append('job {!r} holds a `$`'.format(name))
        if not str(job.get('metrics_path', '/')).startswith('/'):
            problems.append('job {!r}: metrics_path'.format(name))
        statics = job.get('static_configs')
        if not _is(statics, (list, dict)) or not statics:
            problems.append('job {!r} has no static_configs'.format(name))
            continue
        for static in statics:
            targets = static.get('targets')
            if not _is(targets, (list, str)) or not targets or not all(
                    TARGET.match(target) for target in targets):
                problems.append('job {!r}: targets {!r} are not host:port'
                                .format(name, targets))
            mine = set(static.get('labels') or {}) & set(TOPOLOGY_LABELS)
            if mine:
                problems.append('job {!r} sets {} itself'.format(
                    name, sorted(mine)))
    return problems


def _rule_problems(rule: Dict[str, Any], group: str) -> List[str]:
    where = '{}/{}'.format(group, rule.get('alert'))
    problems = []
    if not isinstance(rule.get('alert'), str) or not isinstance(
            rule.get('expr'), str):
        return ['{}: an alert rule needs alert and expr'.format(where)]
    labels = rule.get('labels') or {}
    wanted = {'juju_model': MODEL, 'juju_model_uuid': MODEL_UUID,
              'juju_application': APPLICATION, 'juju_charm': CHARM}
    for label in RULE_LABELS:
        if labels.get(label) != wanted[label]:
            problems.append('{}: label {} is {!r}, not ours'.format(
                where, label, labels.get(label)))
    if 'juju_unit' in labels:
        problems.append('{}: labelled with a unit'.format(where))
    if 'for' in rule and not DURATION.match(str(rule['for'])):
        problems.append('{}: for {!r} is no duration'.format(
            where, rule['for']))
    return problems


def _rules_problems(config: Dict[str, Any]) -> List[str]:
    rules = config['metrics_alert_rules']
    if rules == {}:
        return []
    if set(rules) != {'groups'} or not _is(rules['groups'], (list, dict)):
        return ['metrics_alert_rules is not {"groups": [...]}']
    problems = []
    names = [group.get('name') for group in rules['groups']]
    if len(set(map(str, names))) != len(names):
        problems.append('two groups named alike: {}'.format(names))
    for group in rules['groups']:
        name = group.get('name')
        if not isinstance(name, str) or not ALREADY_NAMED.match(name):
            problems.append('group {!r} carries no topology: the collector '
                            'renames it after its own'.format(name))
        elif not GROUP_NAME.match(name):
            problems.append('group {!r}: characters cosl changes'.format(
                name))
        if not _is(group.get('rules'), (list, dict)) or not group['rules']:
            problems.append('group {!r} has no rules'.format(name))
            continue
        for rule in group['rules']:
            problems += _rule_problems(rule, str(name))
    return problems


def _dashboard_problems(config: Dict[str, Any]) -> List[str]:
    problems = []
    titles = []
    for index, text in enumerate(config['dashboards']):
        try:
            dashboard = decode_dashboard(text)
        except (ValueError, lzma.LZMAError, UnicodeDecodeError) as error:
            problems.append('dashboard {} does not decode ({}): the '
                            'collector\'s hooks fail'.format(index, error))
            continue
        if not isinstance(dashboard, dict):
            problems.append('dashboard {} is no JSON object: the '
                            'collector\'s hooks fail'.format(index))
            continue
        title = dashboard.get('title')
        if not isinstance(title, str) or not title:
            problems.append('dashboard {} has no title'.format(index))
        titles.append(title)
        if not UID.match(str(dashboard.get('uid'))):
            problems.append('dashboard {}: uid {!r} is not 40 hex digits'
                            .format(index, dashboard.get('uid')))
        if 'charm: {}'.format(CHARM) not in (dashboard.get('tags') or []):
            problems.append('dashboard {} lacks the tag charm: {}'.format(
                index, CHARM))
    if len(set(map(str, titles))) != len(titles):
        problems.append('two dashboards titled alike: {}'.format(titles))
    return problems


def problems(bag: Dict[str, str]) -> List[str]:
    """Every way this unit data bag breaks the contract above; [] if
    none."""
    found = _bag_problems(bag)
    if found:
        return found
    config = json.loads(bag[KEY])
    return _job_problems(config) + _rules_problems(config) + \
        _dashboard_problems(config) + _unit_problems(config)


def _unit_problems(config: Dict[str, Any]) -> List[str]:
    """The collector keeps one unit's rules and dashboards for the whole
    application: none may name a unit (any of ours: vgpu-v100/N)."""
    texts = [json.dumps(config['metrics_alert_rules'])]
    for encoded in config['dashboards']:
        try:
            texts.append(json.dumps(decode_dashboard(encoded)))
        except (ValueError, lzma.LZMAError, UnicodeDecodeError):
            pass   # named above
    if any(re.search(re.escape(APPLICATION) + r'/\d', text)
           for text in texts):
        return ['a unit\'s name in the rules or dashboards: the '
                'collector keeps one unit\'s']
    return []


# ------------------------------------- what our interface layer writes


def load_provides():
    """The interface layer, loaded as in a charm (CHARM_DIR's metadata)."""
    return cos_agent_layer.load_provides(
        'cos_agent_provides_for_the_collector')


def write_bag(provides, fake_commands, monkeypatch,
              unit: int = 3) -> Dict[str, str]:
    """Run the layer's update_cos_agent, as the charm's cos-agent handler
    does (monitoring/cos_agent.py's endpoint, directories and address),
    in a hook of unit `unit` of application vgpu-v100, and return the
    unit data bag it wrote."""
    for name, value in (('JUJU_UNIT_NAME', '{}/{}'.format(APPLICATION,
                                                          unit)),
                        ('JUJU_MODEL_NAME', MODEL),
                        ('JUJU_MODEL_UUID', MODEL_UUID),
                        ('JUJU_CHARM_DIR', SRC), ('CHARM_DIR', SRC)):
        monkeypatch.setenv(name, value)
    hookenv.cache.clear()
    try:
        fake_commands.set('relation-get', stdout='{}')
        endpoint = provides.CosAgentProvides('cos-agent', [RID])
        assert endpoint.update_cos_agent(
            [endpoint.MetricsEndpoint(PORT, '/metrics', '127.0.0.1',
                                      'nvidia-vgpu')],
            alert_rules_dir=os.path.join(SRC, 'files',
                                         'prometheus_alert_rules'),
            dashboards_dir=os.path.join(SRC, 'files', 'grafana_dashboards'))
        return dict(endpoint.relations[0].to_publish_raw.data)
    finally:
        hookenv.cache.clear()


@pytest.fixture(scope='module')
def provides():
    return load_provides()


@pytest.fixture
def bag(provides, fake_commands, monkeypatch):
    return write_bag(provides, fake_commands, monkeypatch)


# ------------------------- ways to break the contract (tests that fail)


def _config(change: Callable[[Dict[str, Any]], Any]):
    def apply(bag):
        config = json.loads(bag[KEY])
        change(config)
        return dict(bag, config=json.dumps(config))
    return apply


def _dashboard(change: Callable[[Dict[str, Any]], Any]):
    def apply(config):
        dashboard = decode_dashboard(config['dashboards'][0])
        change(dashboard)
        config['dashboards'][0] = base64.b64encode(lzma.compress(
            json.dumps(dashboard).encode())).decode()
    return _config(apply)


def _encoded(encode: Callable[[bytes], bytes]):
    def apply(config):
        text = json.dumps(decode_dashboard(config['dashboards'][0]))
        config['dashboards'][0] = base64.b64encode(
            encode(text.encode())).decode()
    return _config(apply)


def _first_rule(change: Callable[[Dict[str, Any]], Any]):
    return _config(lambda config: change(
        config['metrics_alert_rules']['groups'][0]['rules'][0]))


def _first_group(change: Callable[[Dict[str, Any]], Any]):
    return _config(lambda config: change(
        config['metrics_alert_rules']['groups'][0]))


def _first_job(change: Callable[[Dict[str, Any]], Any]):
    return _config(lambda config: change(config['metrics_scrape_jobs'][0]))


class Breakage(NamedTuple):
    """One way to get the data wrong: the problem the contract names, and
    what then happens: 'dropped' (the collector ignores the unit's data),
    'hook fails' (the collector's), 'refused' (Prometheus refuses every
    rule the collector forwards) or 'misread' (taken, not as meant)."""

    name: str
    change: Callable[[Dict[str, str]], Dict[str, str]]
    problem: str
    effect: str


def _without(field):
    return _config(lambda config: config.pop(field))


def _set(field, value):
    return _config(lambda config: config.__setitem__(field, value))


BREAKAGES = [
    Breakage('no config key', lambda bag: {'data': bag[KEY]},
             'no `config` key', 'dropped'),
    Breakage('config not JSON', lambda bag: dict(bag, config='{groups'),
             'not JSON', 'dropped'),
] + [
    Breakage('no ' + field, _without(field), field + ' is missing',
             'dropped') for field in sorted(REQUIRED)
] + [
    Breakage('dashboards a string', _set('dashboards', 'xyz'),
             'dashboards is not', 'dropped'),
    Breakage('a dashboard an object', _config(
        lambda config: config['dashboards'].__setitem__(0, {})),
        'dashboards is not', 'dropped'),
    Breakage('scrape jobs an object', _set('metrics_scrape_jobs', {}),
             'metrics_scrape_jobs is not', 'dropped'),
    Breakage('alert rules a list', _set('metrics_alert_rules', []),
             'metrics_alert_rules is not', 'dropped'),
    Breakage('log_slots null', _set('log_slots', None),
             'log_slots is not', 'dropped'),
    Breakage('tracing_protocols a string', _set('tracing_protocols', 'x'),
             'tracing_protocols is not', 'dropped'),
    Breakage('a dashboard gzip-compressed', _encoded(gzip.compress),
             'does not decode', 'hook fails'),
    Breakage('a dashboard not compressed', _encoded(lambda data: data),
             'does not decode', 'hook fails'),
    Breakage('a dashboard a JSON list', _config(
        lambda config: config['dashboards'].__setitem__(
            0, base64.b64encode(lzma.compress(b'[]')).decode())),
        'no JSON object', 'hook fails'),
    Breakage('a dashboard without a title',
             _dashboard(lambda dashboard: dashboard.pop('title')),
             'has no title', 'misread'),
    Breakage('a dashboard with a UUID for uid', _dashboard(
        lambda dashboard: dashboard.__setitem__(
            'uid', '1b9a7e3c-5f2d-4a8e-9c61-0d4f2e7b8a90')),
        'not 40 hex digits', 'misread'),
    Breakage('a unit in the dashboard', _dashboard(
        lambda dashboard: dashboard.__setitem__(
            'description', APPLICATION + '/3')),
        'a unit\'s name', 'misread'),
    Breakage('a group without topology', _first_group(
        lambda group: group.__setitem__('name', 'NvidiaVgpu')),
        'carries no topology', 'misread'),
    Breakage('a group name with a dash', _first_group(
        lambda group: group.__setitem__(
            'name', group['name'].replace('_NvidiaVgpu', '-NvidiaVgpu'))),
        'characters cosl changes', 'misread'),
    Breakage('a rule without our application', _first_rule(
        lambda rule: rule['labels'].pop('juju_application')),
        'label juju_application', 'misread'),
    Breakage('a rule labelled with a unit', _first_rule(
        lambda rule: rule['labels'].update(juju_unit=APPLICATION + '/3')),
        'labelled with a unit', 'misread'),
    Breakage('a rule for an odd duration', _first_rule(
        lambda rule: rule.__setitem__('for', '15 minutes')),
        'no duration', 'refused'),
    Breakage('a group twice', _config(
        lambda config: config['metrics_alert_rules']['groups'].append(
            config['metrics_alert_rules']['groups'][0])),
        'two groups named alike', 'refused'),
    Breakage('a job without the application', _first_job(
        lambda job: job.__setitem__('job_name', 'nvidia-vgpu')),
        'does not start with the application', 'misread'),
    Breakage('a job in the old form', _first_job(
        lambda job: job.update(path='/metrics', port=PORT)),
        'old form', 'misread'),
    Breakage('a job with a juju label', _first_job(
        lambda job: job['static_configs'][0].__setitem__(
            'labels', {'juju_unit': 'x/0'})),
        'sets [\'juju_unit\'] itself', 'misread'),
    Breakage('a job with a dollar', _first_job(
        lambda job: job.__setitem__('metrics_path', '/metrics$')),
        'holds a `$`', 'misread'),
    Breakage('a target without a port', _first_job(
        lambda job: job['static_configs'][0].__setitem__(
            'targets', ['127.0.0.1'])),
        'are not host:port', 'misread'),
]


# ----------------------------------------------------------------- tests


def test_what_our_layer_writes_meets_the_collectors_contract(bag):
    assert set(bag) == {KEY}
    assert problems(bag) == []
    config = json.loads(bag[KEY])
    assert config['metrics_scrape_jobs'] and config['dashboards']
    assert config['metrics_alert_rules']['groups']


def test_every_unit_sends_the_same_rules_and_dashboards(
        provides, fake_commands, monkeypatch):
    """The collector keeps one unit's rules and dashboards per
    application."""
    first = json.loads(write_bag(provides, fake_commands, monkeypatch,
                                 unit=0)[KEY])
    other = json.loads(write_bag(provides, fake_commands, monkeypatch,
                                 unit=3)[KEY])
    assert first == other


@pytest.mark.parametrize('breakage', BREAKAGES,
                         ids=[breakage.name for breakage in BREAKAGES])
def test_the_contract_catches_each_breakage(bag, breakage):
    """The check can fail: each way to get the data wrong is named."""
    broken = breakage.change(copy.deepcopy(bag))
    found = problems(broken)
    assert any(breakage.problem in problem for problem in found), found


def test_each_effect_is_one_the_collector_has():
    assert {breakage.effect for breakage in BREAKAGES} == {
        'dropped', 'hook fails', 'refused', 'misread'}
    assert len({breakage.name for breakage in BREAKAGES}) == len(BREAKAGES)
