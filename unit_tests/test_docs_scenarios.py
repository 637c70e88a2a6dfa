"""The scenarios the docs name exist and were recorded, and what a
runbook quotes of the unit is what its scenario shows: the runbook and
the simulator tell one story."""
import json
import os
import re

import pytest

from sim import outputs

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = ['README.md'] + sorted(
    os.path.join('docs', name) for name in os.listdir(
        os.path.join(REPO, 'docs')) if name.endswith('.md'))
NAMED = re.compile(r'scenarios/[A-Za-z0-9_./-]*[A-Za-z0-9_/-]')


def _named(page):
    with open(os.path.join(REPO, page)) as stream:
        text = stream.read()
    return sorted(set(NAMED.findall(text)))


@pytest.mark.parametrize('page', PAGES)
def test_every_scenario_named_exists_and_is_recorded(page):
    for path in _named(page):
        assert os.path.exists(os.path.join(REPO, path)), (page, path)
        if path.endswith('.yaml'):
            name = path[len('scenarios/'):]
            assert outputs.recorded(name) is not None, (page, path)


def _section(page, heading):
    with open(os.path.join(REPO, page)) as stream:
        text = stream.read()
    start = text.index(heading)
    end = text.find('\n#', start + len(heading))
    return text[start:end if end > 0 else None]


# (page, section heading, scenario, what the section quotes of the unit)
RUNBOOKS = [
    ('docs/index.md', '### Replacing a failed GPU',
     'gpu-failure/v100-fails-and-is-swapped.yaml',
     ['Host drift: Guest ', 'has lost its vGPU', 'with its device',
      'which is not on this host any more']),
    ('docs/index.md', '### `Series upgrade to <series> (<base>) prepared',
     'series-upgrade/v100-held-guest-shut-down.yaml',
     ['prepared without stopping the vGPU Manager',
      'Ready for do-release-upgrade and reboot. Set complete when '
      'finished.']),
    ('docs/index.md', '### Series upgrades',
     'series-upgrade/v100-checked-before-prepare.yaml',
     ['check-series-upgrade']),
    ('docs/reference.md', "## Guests' vGPUs after a reboot",
     'openstack-upgrade/caracal-to-dalmatian-v100.yaml',
     ['mdevctl define --uuid', '--auto']),
    ('docs/index.md', '## Removing the charm',
     'removal/a100-mig-back-to-normal.yaml',
     ['-mig 0', 'nvidia-vgpu-mig-mode.service']),
]


@pytest.mark.parametrize('page,heading,name,quoted', RUNBOOKS,
                         ids=[row[2] for row in RUNBOOKS])
def test_what_a_runbook_quotes_is_what_its_scenario_shows(page, heading,
                                                          name, quoted):
    section = ' '.join(_section(page, heading).split())
    recorded = json.loads(outputs.recorded(name))
    shown = json.dumps(recorded)
    commands = ' '.join(' '.join(argv) for argv in recorded['commands'])
    for phrase in quoted:
        assert phrase in section, (heading, phrase)
        assert phrase in shown or phrase in commands, (name, phrase)
