"""Every status is one finding, at one severity, in Nagios and in COS
alike (issue 37, item 1).

Over the guide's unit-status table: each message has its rule
(monitoring/severity.py), and the table's NRPE and alert column is that
rule's. Over every status the plan produces (test_precedence.ROWS, one
row per status of the guide): the monitoring document, the NRPE check
that answers for the status, the exporter's sample and the alert rule
that fires all carry the same severity. A host without GPUs never pages
CRITICAL for the application's options.
"""
import re

import pytest

import test_precedence
from nvidia_vgpu.hook_plan import decide, facts as hook_facts
from nvidia_vgpu.monitoring import exporter, report, severity
from test_cos_agent import all_rules
from test_docs_status import _read, _section

SEVERITY_LABEL = {severity.WARNING: 'warning', severity.CRITICAL: 'critical'}


def guide_rows():
    """(message, the NRPE and alert cell) of each row of the guide's
    unit-status table."""
    rows = []
    for line in _section(_read('docs/index.md'), 'Unit status').split('\n'):
        cells = [cell.strip() for cell in line.strip().strip('|').split('|')]
        if len(cells) == 4 and cells[0] in (
                'active', 'blocked', 'waiting', 'maintenance'):
            rows.append((re.findall(r'`([^`]+)`', cells[1])[0], cells[3]))
    return rows


@pytest.mark.parametrize('message,cell', guide_rows())
def test_each_status_of_the_guide_has_its_severity_and_its_alert(
        message, cell):
    rule = severity.rule_of(message)
    assert rule is not None, 'no severity rule for ' + message
    alert = severity.alert_for(rule.code, rule.severity)
    assert cell == severity.NAMES[rule.severity] + (
        ', `{}`'.format(alert) if alert else '')
    if alert:
        [found] = [found for found in all_rules() if found['alert'] == alert]
        assert found['labels']['severity'] == SEVERITY_LABEL[rule.severity]


def test_the_guide_lists_every_status():
    assert len(guide_rows()) >= 38


def test_the_status_alerts_leave_out_exactly_the_codes_with_their_own():
    rules = {rule['alert']: rule for rule in all_rules()}
    for level, name in severity.STATUS_ALERT.items():
        expr = rules[name]['expr']
        left_out = re.search(r'code!~"([^"]+)"', expr).group(1).split('|')
        assert sorted(left_out) == sorted(severity.OWN_ALERT)
        assert expr.strip().endswith('== {}'.format(level))
        assert rules[name]['labels']['severity'] == SEVERITY_LABEL[level]
    assert set(severity.OWN_ALERT.values()) <= set(rules)


def _exported_severity(document):
    for family in exporter.metric_families(document, 0.0, 0.0, 'host'):
        if family.name == 'nvidia_vgpu_status_severity':
            return {sample.labels['code']: sample.value
                    for sample in family.samples}
    return None


@pytest.mark.parametrize(
    'name,state,start,snapshot,config,unit,relation', test_precedence.ROWS,
    ids=[row[0] for row in test_precedence.ROWS])
def test_nrpe_and_cos_give_each_status_the_same_severity(
        name, state, start, snapshot, config, unit, relation):
    relations = test_precedence._relations(snapshot, config, unit, relation)
    options = dict({'vgpu-device-mappings': test_precedence.V100_MAPPINGS},
                   **(config or {}))
    plan = decide.decide(hook_facts.HookFacts(
        snapshot, relations, detail=hook_facts.Detail(unit='vgpu/7')),
        options, unit)
    document = plan.monitoring
    status = document['status']
    assert (status['workload'], status['message'][:len(start)]) == (
        state, start)
    code, level = severity.of_status(status['message'])
    assert (status['code'], status['severity']) == (code, level)
    assert code != 'unknown'
    checks = {check['name']: check['state'] for check in document['checks']}
    answering = report.STATUS if document['gpu_host'] else report.NO_GPU
    assert checks[answering] == level
    assert _exported_severity(document) == {code: float(level)}
    if not document['gpu_host']:
        assert level < severity.CRITICAL    # never pages the whole cloud
    if code in ('option-refused', 'mig-reboot-required'):
        # no NvidiaVgpuHostUnhealthy beside the status' own warning
        assert document['healthy'] is True
    if level != severity.OK:
        assert severity.alert_for(code, level) is not None


def test_a_paused_unit_warns_as_charms_openstack_shows_it():
    unit = test_precedence.UNIT._replace(paused=True)
    config = {'vgpu-device-mappings': test_precedence.V100_MAPPINGS}
    plan = decide.decide(hook_facts.HookFacts(
        test_precedence.V100S, test_precedence.published(
            test_precedence.V100S, config, unit),
        detail=hook_facts.Detail(unit='vgpu/7')), config, unit)
    assert plan.monitoring['status'] == {
        'workload': 'maintenance', 'code': 'paused',
        'severity': severity.WARNING,
        'message': os_utils_paused_message()}


def os_utils_paused_message():
    """charmhelpers' own text, read from its source (not copied)."""
    import inspect
    import charmhelpers.contrib.openstack.utils as os_utils
    return re.search(r'message = "(Paused\.[^"]*)"', inspect.getsource(
        os_utils)).group(1)
