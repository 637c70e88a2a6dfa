"""Set-up for the Nova tier: Nova's own libvirt driver, from PyPI, reading
what the charm publishes.

Kept out of unit_tests/ so that the default py3 run never imports nova;
it runs under tox -e nova34 and -e nova29 (tox.ini).
"""
import os
import sys

import charmhelpers.osplatform
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
UNIT_TESTS = os.path.join(REPO, 'unit_tests')

# charmhelpers refuses charmhelpers.core.host off Ubuntu (unit_tests too).
charmhelpers.osplatform.get_platform = lambda: 'ubuntu'
try:
    import charms_openstack  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(REPO, 'sim', 'stand_ins'))
for path in (UNIT_TESTS, os.path.join(REPO, 'src', 'lib'),
             os.path.join(REPO, 'src'), REPO):
    if path not in sys.path:
        sys.path.insert(0, path)

from fake_commands import FakeCommands  # noqa: E402


@pytest.fixture
def fake_commands(tmp_path, monkeypatch):
    for name in ('NVIDIA_VGPU_HOST_ROOT', 'UNIT_STATE_DB', 'CHARM_DIR',
                 'JUJU_CHARM_DIR'):
        monkeypatch.setenv(name, '')  # undone after each test
    return FakeCommands(str(tmp_path), monkeypatch)
