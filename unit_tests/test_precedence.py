"""The unit's status, decided whole by the hook's plan: one table row per
status of the guide's unit-status table that the charm decides (the
others are charms.openstack's or set mid-hook), and rows where several
apply, showing which the unit shows. The facts go through decide(), as
in a hook: a snapshot, the options and what the unit remembers."""
import os
import re

import pytest

from nvidia_vgpu import model
from nvidia_vgpu.hook_plan import decide, facts as hook_facts
from snapshots import (
    A100_VFS, CARACAL, DRIVER, EPOXY, GUEST_A, L40S_VFS, V100S, a100,
    host, l40s, l40s_mdev, v100, with_mdev_guests, with_vf_guests)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INSTALLED = model.Installed('0' * 64, 'nvidia-vgpu-ubuntu-550', DRIVER,
                            ('nvidia-vgpu-mgr',))
V100_MAPPINGS = "{'nvidia-105': ['0000:84:00.0', '0000:85:00.0']}"
RELATED = hook_facts.Relations(nova_vgpu=({},), juju_version='3.6.4')
UNIT = hook_facts.UnitState(installed=INSTALLED)


def shown(snapshot, config=None, unit=UNIT, relations=RELATED):
    """What the unit shows: the first answer of the three, in
    charms.openstack's order (its own checks find nothing here)."""
    config = dict({'vgpu-device-mappings': V100_MAPPINGS}, **(config or {}))
    plan = decide.decide(hook_facts.HookFacts(snapshot, relations), config,
                         unit)
    status = plan.status
    for answer in (status.held_upgrade, status.blocked, status.last):
        if answer[0] is not None:
            return answer
    return 'active', 'Unit is ready'


def published(snapshot, config=None, unit=UNIT):
    """The relation as it is once this plan has been published."""
    config = dict({'vgpu-device-mappings': V100_MAPPINGS}, **(config or {}))
    plan = decide.decide(hook_facts.HookFacts(snapshot, RELATED), config,
                         unit)
    return RELATED._replace(nova_vgpu=(dict(plan.settings),))


def given(snapshot, config=None, unit=UNIT):
    return shown(snapshot, config, unit,
                 published(snapshot, config, unit))


V100_GUEST = with_mdev_guests(V100S, ('0000:84:00.0', 'nvidia-105',
                                      [GUEST_A]))
A100_HOST = host(a100(), nova=CARACAL)
A100_IDLE = A100_HOST._replace(mig={'0000:41:00.0': model.MigGpu(
    '0000:41:00.0', 0, 'Disabled', 'Disabled')})
V100_GUEST_CARACAL = with_mdev_guests(
    host(v100('0000:84:00.0'), v100('0000:85:00.0'), nova=CARACAL),
    ('0000:84:00.0', 'nvidia-105', [GUEST_A]))
A100_PENDING = A100_HOST._replace(mig={'0000:41:00.0': model.MigGpu(
    '0000:41:00.0', 0, 'Disabled', 'Enabled')})
L40S_HOST = host(l40s(), nova=EPOXY)
L40S_OLD_LIBVIRT = host(l40s(), nova=EPOXY,
                        libvirt_qemu=('8.0.0-1ubuntu7', '1:6.2+dfsg-2'))

ROWS = [
    # (the status, the guide's message start, snapshot, config, unit,
    #  the relations: True nova-vgpu holds the plan's settings, False it
    #  does not yet, None it is not related)
    ('no GPU', 'active', 'Unit is ready: no NVIDIA GPU on this host',
     host(), {}, UNIT, True),
    # The application's typo, on a host without GPUs (issue 37).
    ('invalid mappings, no GPU', 'blocked', 'Invalid vgpu-device-mappings: ',
     host(), {'vgpu-device-mappings': '{'}, UNIT, None),
    ('ready', 'active', 'Unit is ready: 2 NVIDIA GPUs (',
     V100S, {}, UNIT, True),
    ('typed VFs not live-migratable', 'active',
     'Typed VFs not live-migratable (', L40S_OLD_LIBVIRT,
     {'vgpu-device-mappings': "{'nvidia-1148': ['0000:41:00.0']}"},
     UNIT, True),
    ('series upgrade held', 'blocked', 'Series upgrade to ',
     V100_GUEST, {}, UNIT._replace(series_upgrade_held={'target': 'noble'}),
     True),
    ('invalid mappings', 'blocked', 'Invalid vgpu-device-mappings: ',
     V100S, {'vgpu-device-mappings': '{'}, UNIT, True),
    ('no software attached', 'blocked',
     'NVIDIA GPU found but no vGPU host software attached: ',
     V100S, {}, UNIT._replace(installed=None), True),
    ('a software problem', 'blocked', 'apt-get could not install ',
     V100S, {}, UNIT._replace(software_problem='apt-get could not install '
                              'mdevctl (Nova needs it)'), True),
    ('reboot for the driver', 'blocked',
     'Reboot required: installed NVIDIA software ',
     host(v100('0000:84:00.0'), driver=None), {}, UNIT, True),
    ('drift', 'blocked', 'Host drift: ',
     host(a100(vfs_enabled=False), nova=CARACAL),
     {'vgpu-device-mappings': "{'nvidia-692': ['0000:41:00.0']}"},
     UNIT._replace(published_mappings={'nvidia-692': list(A100_VFS[:1])}),
     True),
    # Decided before the hook sets the mode, or after nvidia-smi failed.
    ('mixed-size mode not set', 'blocked',
     "NVIDIA's mixed-size mode of 0000:41:00.0 is not yet what "
     'vgpu-device-mappings needs', l40s_mdev(),
     {'vgpu-device-mappings': "{'L40S-1Q': ['0000:41:00.0'], "
                              "'L40S-2Q': ['0000:41:00.0']}"}, UNIT, True),
    ('typed VFs before Epoxy', 'blocked',
     'GPUs at 0000:41:00.0 run NVIDIA\'s vendor-specific VFIO driver',
     host(l40s(), nova=CARACAL),
     {'vgpu-device-mappings': "{'nvidia-1148': ['0000:41:00.0']}"},
     UNIT, True),
    ('invalid class', 'blocked', 'Invalid vgpu-resource-class: ',
     V100S, {'vgpu-resource-class': 'not a class!'}, UNIT, True),
    ('invalid port', 'blocked', 'Invalid metrics-port: ',
     V100S, {'metrics-port': 0}, UNIT, 'metrics served'),
    ('a GPU host that gives Nova nothing', 'blocked',
     'This GPU host gives Nova no vGPU: no GPU here matches 10de:2330. Its '
     'GPUs: 0000:84:00.0 (10de:1db4, ', V100S,
     {'vgpu-device-mappings': "{'H100XM-1-10C': ['10de:2330']}"}, UNIT, True),
    ('invalid context', 'blocked', 'Invalid nagios_context: ',
     host(), {'nagios_context': 'juju\n}'}, UNIT, 'nrpe related'),
    ('invalid groups', 'blocked', 'Invalid nagios_servicegroups: ',
     V100S, {'nagios_servicegroups': 'juju,../x'}, UNIT, 'nrpe related'),
    ('invalid layout', 'blocked', 'Invalid mig-layout: ',
     V100S, {'mig-layout': '{'}, UNIT, True),
    ('MIG mode at the next boot', 'blocked',
     'Reboot required: MIG mode of 0000:41:00.0 applies at the next boot',
     A100_PENDING, {'mig-layout': "{'0000:41:00.0': {'1g.10gb': 7}}",
                    'vgpu-device-mappings': ''}, UNIT, True),
    ('layout waits for guests', 'waiting',
     'Change of mig-layout waits for guests using vGPUs: ',
     with_mdev_guests(A100_IDLE, (A100_VFS[0], 'nvidia-692', [GUEST_A])),
     {'mig-layout': "{'0000:41:00.0': {'1g.10gb': 7}}",
      'vgpu-device-mappings': "{'nvidia-692': ['0000:41:00.0']}"},
     UNIT, True),
    ('nova not installed', 'waiting',
     'Waiting for nova-compute to install nova-common',
     host(v100('0000:84:00.0'), nova=None), {}, UNIT, True),
    ('relation missing', 'waiting',
     'Waiting for the nova-vgpu relation: juju integrate ',
     V100S, {}, UNIT, None),
    ('software waits for guests', 'waiting', 'Attached vGPU software ',
     V100_GUEST, {}, UNIT._replace(waiting_software={
         'package': 'nvidia-vgpu-ubuntu-550', 'version': '550.90.05'}),
     True),
    ('mappings change waits', 'waiting',
     'Change of vgpu-device-mappings waits for guests using vGPUs: ',
     V100_GUEST, {'vgpu-device-mappings':
                  "{'nvidia-108': ['0000:84:00.0', '0000:85:00.0']}"},
     UNIT._replace(published_mappings={'nvidia-105': ['0000:84:00.0']}),
     True),
    ('class change waits', 'waiting',
     'Change of vgpu-resource-class waits for guests using vGPUs: ',
     V100_GUEST_CARACAL, {'vgpu-resource-class': 'per-profile'},
     UNIT._replace(published_mappings={
         'nvidia-105': ['0000:84:00.0', '0000:85:00.0']},
         published_classes={'nvidia-105': 'VGPU'}), True),
    ('not given yet', 'waiting',
     'Nova has not been given this host\'s vGPU settings yet',
     V100S, {}, UNIT, False),
]


def _relations(snapshot, config, unit, relation):
    if relation is None:
        return RELATED._replace(nova_vgpu=None)
    if relation == 'metrics served':   # an agent takes the metrics
        return published(snapshot, config, unit)._replace(cos_agent=True)
    if relation == 'nrpe related':
        return published(snapshot, config, unit)._replace(nrpe=True)
    if relation:
        return published(snapshot, config, unit)
    return RELATED


@pytest.mark.parametrize('name,state,start,snapshot,config,unit,relation',
                         ROWS, ids=[row[0] for row in ROWS])
def test_each_status_of_the_guide(name, state, start, snapshot, config,
                                  unit, relation):
    found = shown(snapshot, config, unit,
                  _relations(snapshot, config, unit, relation))
    assert found[0] == state, found
    assert found[1].startswith(start), found


# Where several apply: (what the unit shows, what it hides), each from a
# row above, combined.
PRECEDENCE = [
    ('invalid layout', 'invalid mappings',
     V100S, {'mig-layout': '{', 'vgpu-device-mappings': '{'}, UNIT),
    ('MIG mode before the mappings', 'invalid mappings',
     A100_PENDING, {'mig-layout': "{'0000:41:00.0': {'1g.10gb': 7}}",
                    'vgpu-device-mappings': "{'nvidia-1': ['0000:99:00.0']"},
     UNIT),
    ('invalid mappings before the software', 'no software',
     V100S, {'vgpu-device-mappings': '{'}, UNIT._replace(installed=None)),
    ('the software before a reboot', 'reboot',
     host(v100('0000:84:00.0'), driver=None), {},
     UNIT._replace(software_problem='apt-get could not install x')),
    ('nova not installed before the relation', 'relation missing',
     host(v100('0000:84:00.0'), nova=None), {}, UNIT),
]


@pytest.mark.parametrize('first,hidden,snapshot,config,unit', PRECEDENCE,
                         ids=[row[0] for row in PRECEDENCE])
def test_the_first_to_act_on_is_shown(first, hidden, snapshot, config,
                                      unit):
    starts = {row[0]: row[2] for row in ROWS}
    wanted = {'invalid layout': starts['invalid layout'],
              'MIG mode before the mappings':
                  starts['MIG mode at the next boot'],
              'invalid mappings before the software':
                  starts['invalid mappings'],
              'the software before a reboot': 'apt-get could not install x',
              'nova not installed before the relation':
                  starts['nova not installed']}[first]
    relations = RELATED._replace(nova_vgpu=None) if 'relation' in hidden \
        else RELATED
    assert shown(snapshot, config, unit, relations)[1].startswith(wanted)


# What the driver has not named yet waits, once nothing blocks: while it
# does not run, its reboot blocks first.
WAITING_FOR_THE_DRIVER = [
    ('profile names unresolved',
     'Waiting for the NVIDIA driver to resolve vGPU profile names ',
     {'vgpu-device-mappings': "{'V100-1Q': ['0000:84:00.0']}"}),
    ('types unnamed', 'Waiting for the NVIDIA driver to name vGPU types ',
     {'vgpu-resource-class': 'per-profile'}),
]


@pytest.mark.parametrize('name,start,config', WAITING_FOR_THE_DRIVER,
                         ids=[row[0] for row in WAITING_FOR_THE_DRIVER])
def test_what_the_driver_has_not_named_waits_after_its_reboot(
        name, start, config):
    snapshot = host(v100('0000:84:00.0'), nova=CARACAL, driver=None)
    config = dict({'vgpu-device-mappings': "{'nvidia-105': "
                   "['0000:84:00.0']}"}, **config)
    plan = decide.decide(hook_facts.HookFacts(snapshot, RELATED), config,
                         UNIT)
    assert plan.status.blocked[1].startswith('Reboot required: ')
    assert plan.status.last[0] == 'waiting'
    assert plan.status.last[1].startswith(start)


def test_a_held_series_upgrade_needs_running_guests():
    unit = UNIT._replace(series_upgrade_held={'target': 'noble'})
    assert given(V100S, {}, unit)[1].startswith('Unit is ready')


def test_typed_vf_guests_count_as_running():
    snapshot = with_vf_guests(L40S_HOST, (L40S_VFS[0], 1148, [GUEST_A]))
    unit = UNIT._replace(series_upgrade_held={'target': 'noble'})
    assert shown(snapshot, {}, unit)[1].startswith('Series upgrade to ')


# The guide's statuses the charm does not decide: charms.openstack's own
# checks (charmhelpers' messages) and the one set while apt runs.
NOT_DECIDED_HERE = (
    'Paused. ', 'Ready for do-release-upgrade', 'Services should be paused',
    'Installing NVIDIA vGPU host software', 'Services not running that',
    # software problems: any of them is shown as the row
    # 'a software problem' shows (the text is the install step's)
    'Resource nvidia-vgpu-software', 'apt-get could not install',
    'Kernel headers for the running kernel', 'The kernel only loads',
    'NVIDIA kernel module of')


def _guide_table():
    with open(os.path.join(REPO, 'docs', 'index.md')) as stream:
        text = stream.read()
    table = text.split('## Unit status', 1)[1].split('\n## ', 1)[0]
    return re.findall(r'^\| (\w+) \| `([^`]+)` \|', table, re.MULTILINE)


def test_every_status_of_the_guide_is_a_row():
    starts = [start for _, _, start, *_ in ROWS] + [
        start for _, start, _ in WAITING_FOR_THE_DRIVER]
    missing = []
    for state, message in _guide_table():
        prefix = re.split(r'<|\.\.\.|\bN\b', message)[0]
        if prefix.startswith(NOT_DECIDED_HERE):
            continue
        if not any(start.startswith(prefix) or prefix.startswith(start)
                   for start in starts):
            missing.append((state, message))
    assert len(_guide_table()) > 25
    assert missing == []
