"""Provides side of the cos_agent relation: a reactive charm toward the
machine subordinate that takes its metrics, alert rules and dashboards to
COS, opentelemetry-collector (Juju 3.6 or later, 22.04 and 24.04) or
grafana-agent (Juju 2.9, focal). Written from the protocol as read in:

- canonical/charm-interface-cos-agent 19658364bec84adb9dde14e22a04baa55e67895f
  (src/provides.py, README.md): the reactive layer, its flags and
  MetricsEndpoint; it sends no alert rules, and dashboards only from a
  fork;
- canonical/opentelemetry-collector-operator
  9f17dececeb44c39675a088d0159b6adca8ca485 (branch track/2, which channel
  2/stable is released from): lib/charms/grafana_agent/v0/cos_agent.py,
  LIBAPI 0, LIBPATCH 25, and src/charm.py, src/integrations.py: how the
  collector validates the unit data bag (one failure drops all of it),
  labels the scrape jobs and forwards the rules and dashboards.
  unit_tests/test_cos_agent_collector_contract.py states those rules and
  holds what this layer writes to them; collector_tests/ runs that
  library itself on it;
- canonical/grafana-agent-operator de1252e7966c0b2ff1c613dbec341efd303d708b
  (lib/charms/grafana_agent/v0/cos_agent.py, LIBPATCH 26, whose data
  model is LIBPATCH 25's, and LIBPATCH 21's of branch track/1, channel
  1/stable, 867f1f7fe093f9833209ee47b48c63a7f46a4d2c, the one Juju 2.9
  deploys): the unit data bag key `config`,
  CosAgentProviderUnitData's fields, and how the requirer reads them
  (scrape jobs get the Juju topology labels of the unit that sent them;
  alert rules and dashboards are forwarded as sent);
- canonical/cos-lib d8a21d211c04691802f0af5441020dbe051ba387
  (src/cosl/utils.py LZMABase64, grafana_dashboard.py DashboardPath40UID,
  rules.py, juju_topology.py; the collector pins cosl 1.9.1, the same
  there): the dashboard encoding and uid, and what the provider does to
  alert rules before sending them.

The published layer needs pydantic and cosl in the charm's wheelhouse;
this one needs only the standard library and PyYAML, which every series
(Python 3.6 on bionic included) has.
"""
import base64
import hashlib
import json
import lzma
import os
import re
from typing import Any, Dict, List, Optional, Sequence

import yaml
from charmhelpers.core import hookenv
from charms.reactive import Endpoint, clear_flag, set_flag, when, when_not

# The one key of the unit's data bag the requirer reads (CosAgentProvider-
# UnitData.KEY), holding all of the provider's data as one JSON object.
KEY = 'config'
# Where a rule's expression wants the topology's label matchers (cosl's
# convention: `up{%%juju_topology%%} < 1`).
TOPOLOGY_PLACEHOLDER = '%%juju_topology%%'
RULE_SUFFIXES = ('.rule', '.rules', '.yml', '.yaml')


def canonical_json(value: Any) -> str:
    """Equal data, byte-identical text: an unchanged publication is an
    unchanged string, so nothing is set again."""
    return json.dumps(value, sort_keys=True, separators=(',', ':'))


def lzma_base64(text: str) -> str:
    """How the protocol carries a dashboard: LZMA-compressed (xz, the
    module's defaults), then base64 (cosl's LZMABase64.compress)."""
    return base64.b64encode(lzma.compress(text.encode('utf-8'))).decode(
        'utf-8')


def dashboard_uid(charm_name: str, path: str) -> str:
    """Grafana's 40-character uid of a charm's dashboard, from the charm's
    name and the file's path in the charm (cosl's DashboardPath40UID), so
    a new revision replaces the dashboard instead of adding one."""
    return hashlib.shake_256('-'.join((charm_name, path)).encode(
        'utf-8')).hexdigest(20)


class Topology:
    """The Juju topology the requirer labels this unit's metrics with,
    which alert rules must therefore select (cosl's JujuTopology)."""

    def __init__(self, model: str, model_uuid: str, application: str,
                 charm: str) -> None:
        self.model = model
        self.model_uuid = model_uuid
        self.application = application
        self.charm = charm

    @classmethod
    def of_this_unit(cls) -> 'Topology':
        return cls(hookenv.model_name(), hookenv.model_uuid(),
                   hookenv.application_name(), hookenv.charm_name())

    @property
    def identifier(self) -> str:
        """model_<first 8 of the uuid>_application: the rule groups'
        prefix, which cosl (in either agent, and in the collector again
        before it forwards the rules) recognises as already applied, so
        it keeps the group's name and our labels."""
        return '{}_{}_{}'.format(self.model, self.model_uuid[:8],
                                 self.application)

    @property
    def labels(self) -> Dict[str, str]:
        """The labels every alert carries."""
        return {'juju_model': self.model,
                'juju_model_uuid': self.model_uuid,
                'juju_application': self.application,
                'juju_charm': self.charm}

    @property
    def matchers(self) -> str:
        """PromQL label matchers selecting this application's series (not
        one unit's: every unit sends the same rules)."""
        return ','.join('{}={}'.format(name, json.dumps(value))
                        for name, value in (
                            ('juju_model', self.model),
                            ('juju_model_uuid', self.model_uuid),
                            ('juju_application', self.application)))


class MetricsEndpoint:
    """One HTTP endpoint for the agent to scrape on this machine."""

    def __init__(self, port: int, path: str = '/metrics',
                 host: str = 'localhost', job_name: str = 'default') -> None:
        self.port = port
        self.path = path
        self.host = host
        self.job_name = job_name

    def scrape_config(self, application: str) -> Dict[str, Any]:
        """A Prometheus scrape_config. The job name starts with the
        application's, as COSAgentProvider's do: one agent may scrape
        several charms, and its job names must differ (the collector puts
        every cos-agent job of its machine in one Prometheus receiver)."""
        return {'job_name': '{}_{}'.format(application, self.job_name),
                'metrics_path': self.path,
                'static_configs': [{'targets': ['{}:{}'.format(
                    self.host, self.port)]}]}


def _rule_group(group: Dict[str, Any], topology: Topology) -> Dict[str, Any]:
    """A group as COSAgentProvider sends it: named <identifier>_<name>
    ending in _rules (characters Prometheus refuses made '_'), each rule
    labelled with the topology (its own labels kept) and its expression's
    placeholder replaced by the topology's matchers."""
    name = '{}_{}'.format(topology.identifier, group['name'])
    if not name.endswith('_rules'):
        name += '_rules'
    rules = []
    for rule in group['rules']:
        labels = topology.labels
        labels.update(rule.get('labels') or {})
        rules.append(dict(rule, labels=labels, expr=rule['expr'].replace(
            TOPOLOGY_PLACEHOLDER, topology.matchers)))
    return dict(group, name=re.sub(r'[^a-zA-Z0-9_:]', '_', name),
                rules=rules)


def alert_rules(directory: Optional[str],
                topology: Topology) -> Dict[str, Any]:
    """The rule groups of every rule file (Prometheus' own format) in the
    directory, in file name order; {} without any."""
    groups: List[Dict[str, Any]] = []
    names = sorted(os.listdir(directory)) \
        if directory and os.path.isdir(directory) else []
    for name in names:
        if not name.endswith(RULE_SUFFIXES):
            continue
        with open(os.path.join(directory, name)) as stream:
            content = yaml.safe_load(stream) or {}
        groups += [_rule_group(group, topology)
                   for group in content.get('groups', [])]
    return {'groups': groups} if groups else {}


def dashboards(directory: Optional[str], charm_dir: str,
               charm_name: str) -> List[str]:
    """Every dashboard (*.json) in the directory, in file name order, with
    its uid and a `charm: <name>` tag, encoded for the data bag."""
    encoded = []
    names = sorted(os.listdir(directory)) \
        if directory and os.path.isdir(directory) else []
    for name in names:
        if not name.endswith('.json'):
            continue
        path = os.path.join(directory, name)
        with open(path) as stream:
            dashboard = json.load(stream)
        dashboard['uid'] = dashboard_uid(
            charm_name, os.path.relpath(path, charm_dir))
        tags = list(dashboard.get('tags') or [])
        if not any(tag.startswith('charm: ') for tag in tags):
            tags.append('charm: {}'.format(charm_name))
        dashboard['tags'] = tags
        encoded.append(lzma_base64(json.dumps(dashboard, sort_keys=True)))
    return encoded


def unit_data(scrape_jobs: List[Dict[str, Any]], rules: Dict[str, Any],
              encoded_dashboards: List[str]) -> Dict[str, Any]:
    """CosAgentProviderUnitData's fields (no logs, no traces)."""
    return {'metrics_alert_rules': rules,
            'log_alert_rules': {},
            'dashboards': encoded_dashboards,
            'metrics_scrape_jobs': scrape_jobs,
            'log_slots': [],
            'tracing_protocols': []}


class CosAgentProvides(Endpoint):
    """A reactive charm's end of cos_agent, toward opentelemetry-collector
    or grafana-agent."""

    MetricsEndpoint = MetricsEndpoint

    @when('endpoint.{endpoint_name}.joined')
    def joined(self) -> None:
        set_flag(self.expand_name('{endpoint_name}.connected'))

    @when('endpoint.{endpoint_name}.changed')
    def changed(self) -> None:
        """The agent's unit is there with its data (at least the
        addresses Juju gives every unit): publish."""
        set_flag(self.expand_name('{endpoint_name}.available'))

    @when_not('endpoint.{endpoint_name}.joined')
    def departed(self) -> None:
        clear_flag(self.expand_name('{endpoint_name}.connected'))
        clear_flag(self.expand_name('{endpoint_name}.available'))

    def update_cos_agent(self, metrics_endpoints: Sequence[MetricsEndpoint],
                         alert_rules_dir: Optional[str] = None,
                         dashboards_dir: Optional[str] = None) -> bool:
        """Publish the scrape jobs, the alert rules of a directory's rule
        files and the dashboards of a directory's JSON files, where they
        differ from what the relation has. Returns whether anything
        changed."""
        topology = Topology.of_this_unit()
        text = canonical_json(unit_data(
            [endpoint.scrape_config(topology.application)
             for endpoint in metrics_endpoints],
            alert_rules(alert_rules_dir, topology),
            dashboards(dashboards_dir, hookenv.charm_dir(), topology.charm)))
        changed = False
        for relation in self.relations:
            if relation.to_publish_raw.get(KEY) != text:
                relation.to_publish_raw[KEY] = text
                changed = True
        return changed
