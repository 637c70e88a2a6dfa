"""The collector tier: opentelemetry-collector's own cos_agent library
(with its grafana_dashboard library, and cosl, ops and pydantic from PyPI)
run on what our interface layer writes. The libraries come from a copy of
canonical/opentelemetry-collector-operator that $OTELCOL_OPERATOR names:
they are not on PyPI, and nothing of them is kept in this repository.

Without the copy every test skips, saying how to get one (on a connected
machine; CI has none and does not run this tier):

    git clone https://github.com/canonical/opentelemetry-collector-operator
    git -C opentelemetry-collector-operator checkout <COLLECTOR_COMMIT>
    OTELCOL_OPERATOR=$PWD/opentelemetry-collector-operator tox -e collector

COLLECTOR_COMMIT, and the contract this tier holds the library to, are in
unit_tests/test_cos_agent_collector_contract.py.
"""
import os
import sys

import charmhelpers.osplatform
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for path in (os.path.join(REPO, 'unit_tests'), REPO,
             os.path.join(REPO, 'src'), os.path.join(REPO, 'src', 'lib')):
    if path not in sys.path:
        sys.path.insert(0, path)

from fake_commands import FakeCommands  # noqa: E402
from test_cos_agent_collector_contract import (  # noqa: E402
    COLLECTOR_COMMIT, COLLECTOR_REPOSITORY, LIBRARY)

# The charm only ever runs on Ubuntu (as unit_tests/conftest.py says).
charmhelpers.osplatform.get_platform = lambda: 'ubuntu'

COPY = os.environ.get('OTELCOL_OPERATOR', '')
HAVE_COPY = os.path.isfile(os.path.join(COPY, LIBRARY))
if HAVE_COPY:
    sys.path.insert(0, os.path.join(COPY, 'lib'))
WHY_SKIPPED = (
    'OTELCOL_OPERATOR={!r} is no copy of {}: git clone '
    'https://github.com/{}; git -C opentelemetry-collector-operator checkout '
    '{}; OTELCOL_OPERATOR=$PWD/opentelemetry-collector-operator tox -e '
    'collector (CI checks our data against the contract instead: '
    'unit_tests/test_cos_agent_collector_contract.py)'.format(
        COPY, COLLECTOR_REPOSITORY, COLLECTOR_REPOSITORY, COLLECTOR_COMMIT))


def pytest_report_header(config):
    return 'collector copy: {}'.format(COPY if HAVE_COPY else 'none')


def pytest_collection_modifyitems(config, items):
    if not HAVE_COPY:
        skip = pytest.mark.skip(reason=WHY_SKIPPED)
        for item in items:
            item.add_marker(skip)


@pytest.fixture(scope='session')
def copy():
    return COPY


@pytest.fixture
def fake_commands(tmp_path, monkeypatch):
    monkeypatch.setenv('UNIT_STATE_DB', str(tmp_path / 'unit-state.db'))
    return FakeCommands(str(tmp_path), monkeypatch)
