"""opentelemetry-collector's own cos_agent library (channel 2/stable) on
the unit data bag our interface layer writes, read the way the collector
reads it: its COSAgentRequirer in a stand-in charm that builds it as the
collector's src/charm.py does, then the collector's next steps with their
own code (cosl's rules for what it forwards to Prometheus, its
grafana_dashboard library for what it forwards to Grafana). Last, each
way to get the data wrong that the contract names
(unit_tests/test_cos_agent_collector_contract.py) does to this library
what the contract says."""
import copy as copying
import importlib
import json
import os
import shutil
import subprocess
from typing import Any, Dict, List

import pytest
import yaml

from test_cos_agent_collector_contract import (
    APPLICATION, BREAKAGES, CHARM, COLLECTOR_COMMIT, KEY, LIBAPI, LIBPATCH,
    MODEL, MODEL_UUID, PORT, decode_dashboard, load_provides, write_bag)

COLLECTOR = 'opentelemetry-collector'
# The collector's two endpoints the library uses (its charmcraft.yaml).
META = '''
name: {}
subordinate: true
requires:
  cos-agent:
    interface: cos_agent
    scope: container
  juju-info:
    interface: juju-info
    scope: container
peers:
  peers:
    interface: otelcol_replica
'''.format(COLLECTOR)
UNIT = APPLICATION + '/3'
PROMTOOL = shutil.which('promtool')
# ops 3 deprecates Harness, which is still the simplest stand-in here.
pytestmark = pytest.mark.filterwarnings('ignore:Harness is deprecated')


@pytest.fixture(scope='module')
def library():
    return importlib.import_module('charms.grafana_agent.v0.cos_agent')


@pytest.fixture(scope='module')
def provides():
    return load_provides()


@pytest.fixture
def bag(provides, fake_commands, monkeypatch):
    return write_bag(provides, fake_commands, monkeypatch)


class Taken:
    """What the collector's requirer made of one unit's data bag."""

    def __init__(self, requirer, errors: List[str]) -> None:
        self.requirer = requirer
        self.errors = errors
        self.jobs = requirer.metrics_jobs
        self.alerts = requirer.metrics_alerts

    def dashboards(self) -> List[Dict[str, Any]]:
        """The collector reads them at every hook; this may raise, as it
        would there."""
        return self.requirer.dashboards


def collector_takes(library, data: Dict[str, str]) -> Taken:
    """A collector leader on our unit's machine, its cos-agent relation
    with our unit holding `data`."""
    import ops
    from ops.testing import Harness

    errors = []

    class Collector(ops.CharmBase):
        def __init__(self, framework):
            super().__init__(framework)
            # As the collector's reconcile builds it: tracing is always
            # ready there.
            self.cos = library.COSAgentRequirer(
                self, is_tracing_ready=lambda: True)
            framework.observe(self.cos.on.validation_error, self._invalid)

        def _invalid(self, event):
            errors.append(event.message)

    harness = Harness(Collector, meta=META)
    harness.set_model_name(MODEL)
    harness.set_model_uuid(MODEL_UUID)
    harness.set_leader(True)
    harness.add_relation('peers', COLLECTOR)
    harness.begin()
    relation = harness.add_relation('cos-agent', APPLICATION)
    harness.add_relation_unit(relation, UNIT)
    harness.update_relation_data(relation, UNIT, data)
    return Taken(harness.charm.cos, errors)


def forwarded_rules(alerts: Dict[str, Any], tmp_path) -> Dict[str, Any]:
    """What the collector's leader gives Prometheus: each application's
    rules written to a file as integrations._add_alerts does, then read
    back by cosl under the collector's own topology, as its
    prometheus_remote_write library does (without its own generic rules,
    which are not ours)."""
    from cosl import JujuTopology
    from cosl.rules import AlertRules

    directory = tmp_path / 'prometheus_alert_rules'
    directory.mkdir(exist_ok=True)
    for identifier, rules in alerts.items():
        with open(str(directory / 'juju_{}.rules'.format(identifier)),
                  'w') as stream:
            yaml.safe_dump(rules, stream)
    rules = AlertRules(query_type='promql', topology=JujuTopology(
        model=MODEL, model_uuid=MODEL_UUID, application=COLLECTOR,
        unit=COLLECTOR + '/0', charm_name=COLLECTOR))
    rules.add_path(str(directory))
    return rules.as_dict()


def promtool_accepts(rules: Dict[str, Any], directory) -> bool:
    path = str(directory / 'forwarded.rules')
    with open(path, 'w') as stream:
        yaml.safe_dump(rules, stream)
    return subprocess.run([PROMTOOL, 'check', 'rules', path],
                          stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT).returncode == 0


def forwarded_dashboards(dashboards: List[Dict[str, Any]],
                         tmp_path) -> List[Dict[str, Any]]:
    """What the collector's leader gives Grafana: each dashboard written
    to a file named as integrations._add_dashboards names it, then loaded
    by its grafana_dashboard library as forward_dashboards does."""
    from charms.grafana_k8s.v0.grafana_dashboard import CharmedDashboard
    from cosl import LZMABase64

    directory = tmp_path / 'grafana_dashboards'
    directory.mkdir(exist_ok=True)
    for dashboard in dashboards:
        name = 'juju_{}-{}-{}.json'.format(
            dashboard['title'].replace(' ', '_').replace('/', '_').lower(),
            dashboard['charm'], dashboard['relation_id'])
        with open(str(directory / name), 'w') as stream:
            json.dump(dashboard['content'], stream)
    templates = CharmedDashboard.load_dashboards_from_dir(
        dashboards_path=directory, charm_name=COLLECTOR,
        charm_dir=directory.parent, inject_dropdowns=True,
        juju_topology={'model': MODEL, 'model_uuid': MODEL_UUID,
                       'application': COLLECTOR,
                       'unit': COLLECTOR + '/0'})
    return [json.loads(LZMABase64.decompress(template['content']))
            for _, template in sorted(templates.items())]


# ----------------------------------------------------------------- tests


def test_the_copy_is_the_library_the_contract_was_read_from(copy, library):
    assert (library.LIBAPI, library.LIBPATCH) == (LIBAPI, LIBPATCH), (
        'the contract describes LIBPATCH {}: read the new library, update '
        'unit_tests/test_cos_agent_collector_contract.py'.format(LIBPATCH))
    if not os.path.isdir(os.path.join(copy, '.git')):
        pytest.skip('{} is no git checkout: its commit is unknown'.format(
            copy))
    head = subprocess.run(['git', '-C', copy, 'rev-parse', 'HEAD'],
                          stdout=subprocess.PIPE,
                          universal_newlines=True).stdout.strip()
    assert head == COLLECTOR_COMMIT, (
        'the contract was read at {}; check it against {} and update '
        'COLLECTOR_COMMIT'.format(COLLECTOR_COMMIT, head))


def test_the_library_takes_our_data_whole(library, bag):
    config = json.loads(bag[KEY])
    taken = collector_takes(library, bag)
    assert taken.errors == []
    [job] = config['metrics_scrape_jobs']
    topology = {'juju_model': MODEL, 'juju_model_uuid': MODEL_UUID,
                'juju_application': APPLICATION, 'juju_unit': UNIT}
    assert taken.jobs == [dict(job, static_configs=[
        {'targets': ['127.0.0.1:{}'.format(PORT)], 'labels': topology}])]
    assert taken.alerts == {'openstack_47bfebeb_' + APPLICATION:
                            config['metrics_alert_rules']}
    [dashboard] = taken.dashboards()
    sent = decode_dashboard(config['dashboards'][0])
    assert dashboard['content'] == sent
    assert dashboard['title'] == sent['title'] != 'no_title'
    assert dashboard['charm'] == 'cos-agent-' + APPLICATION


def test_the_rules_reach_prometheus_as_we_wrote_them(library, bag,
                                                     tmp_path):
    config = json.loads(bag[KEY])
    rules = forwarded_rules(collector_takes(library, bag).alerts, tmp_path)
    assert rules == config['metrics_alert_rules']
    if PROMTOOL:
        assert promtool_accepts(rules, tmp_path)


def test_the_dashboard_reaches_grafana_with_its_uid(library, bag,
                                                    tmp_path):
    from charms.grafana_k8s.v0.grafana_dashboard import CharmedDashboard

    sent = decode_dashboard(json.loads(bag[KEY])['dashboards'][0])
    [forwarded] = forwarded_dashboards(
        collector_takes(library, bag).dashboards(), tmp_path)
    assert forwarded == sent
    assert 'charm: ' + CHARM in forwarded['tags']
    # Grafana adds the topology dropdowns we lack (juju_model_uuid) and
    # keeps ours.
    shown = json.loads(CharmedDashboard._convert_dashboard_fields(
        json.dumps(forwarded), True))
    names = [variable['name'] for variable in shown['templating']['list']]
    assert {'juju_model', 'juju_application', 'juju_unit', 'vgpu_type',
            'prometheusds'} <= set(names)


def _misread_as_the_contract_says(name, taken, tmp_path, sent):
    """Where the contract says how the collector misreads it, check it."""
    if name == 'a dashboard without a title':
        assert taken.dashboards()[0]['title'] == 'no_title'
    elif name == 'a dashboard with a UUID for uid':
        # Replaced by one of the collector's, from its file's name.
        [forwarded] = forwarded_dashboards(taken.dashboards(), tmp_path)
        assert forwarded['uid'] != sent['uid']
    elif name in ('a group without topology', 'a group name with a dash'):
        groups = forwarded_rules(taken.alerts, tmp_path)['groups']
        assert groups[0]['name'] not in sent['groups']
    elif name == 'a rule without our application':
        groups = forwarded_rules(taken.alerts, tmp_path)['groups']
        assert groups[0]['rules'][0]['labels']['juju_application'] == \
            COLLECTOR
    elif name == 'a job in the old form':
        assert taken.jobs[0]['static_configs'][0]['targets'] == [
            'localhost:{}'.format(PORT)]
    elif name == 'a job with a juju label':
        assert taken.jobs[0]['static_configs'][0]['labels'][
            'juju_unit'] == UNIT


@pytest.mark.parametrize('breakage', BREAKAGES,
                         ids=[breakage.name for breakage in BREAKAGES])
def test_the_library_does_what_the_contract_says(library, bag, breakage,
                                                 tmp_path):
    broken = breakage.change(copying.deepcopy(bag))
    taken = collector_takes(library, broken)
    if breakage.effect == 'dropped':
        assert taken.errors or KEY not in broken
        assert (taken.jobs, taken.alerts, taken.dashboards()) == (
            [], {}, [])
        return
    # Anything else passes the library's validation without a word.
    assert taken.errors == []
    assert taken.jobs
    if breakage.effect == 'hook fails':
        with pytest.raises(Exception):
            taken.dashboards()
    elif breakage.effect == 'refused':
        if not PROMTOOL:
            pytest.skip('promtool is not on PATH (Debian: apt-get install '
                        'prometheus)')
        assert not promtool_accepts(
            forwarded_rules(taken.alerts, tmp_path), tmp_path)
    else:
        config = json.loads(broken[KEY])
        _misread_as_the_contract_says(breakage.name, taken, tmp_path, {
            'uid': decode_dashboard(config['dashboards'][0]).get('uid'),
            'groups': [group['name'] for group in
                       config['metrics_alert_rules']['groups']]})
