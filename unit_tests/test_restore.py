"""What the boot gives guests back (driver/restore_plan.py, pure):
where their vGPUs go (before Dalmatian), which type each VF takes, what
the inventory keeps."""
import pytest

from nvidia_vgpu import model
from nvidia_vgpu.driver import restore_plan
from nvidia_vgpu.driver.restore_plan import (Creation, inventory_to_keep,
                                             plan)

A = '4b20d080-1b54-4048-85b3-a6a62d165c01'
B = '9f1c2a7e-3d5b-4e8f-a0c6-1b2d3e4f5a6b'
C = '0c2e4a6b-8d1f-4e3a-b5c7-d9e1f3a5b7c9'
FREE = {'0000:84:00.0': {'nvidia-105': 16, 'nvidia-108': 2},
        '0000:85:00.0': {'nvidia-105': 16, 'nvidia-108': 2}}


P84, P85 = '0000:84:00.0', '0000:85:00.0'
BOTH_108 = {'nvidia-108': [P84, P85]}


PLACEMENTS = [
    pytest.param([A, B], set(), {A: (P84, 'nvidia-108'),
                                 B: (P85, 'nvidia-105')}, {}, FREE,
                 [(A, P84, 'nvidia-108'), (B, P85, 'nvidia-105')], [],
                 id='back where they were'),
    pytest.param([A, B], {A, B}, {A: (P84, 'nvidia-108')}, {}, FREE,
                 [], [], id='existing ones left alone'),
    # Two fit per GPU: the first fills, then the next GPU (in the UUIDs'
    # order).
    pytest.param([A, B, C], set(), {}, BOTH_108, FREE,
                 [(C, P84, 'nvidia-108'), (A, P84, 'nvidia-108'),
                  (B, P85, 'nvidia-108')], [],
                 id='unrecorded onto the single mapped type'),
    pytest.param([A], set(), {}, {'nvidia-108': [P84], 'nvidia-105': [P85]},
                 FREE, [], [A],
                 id='no record and several types cannot be guessed'),
    pytest.param([A], set(), {A: (P84, 'nvidia-108')}, BOTH_108,
                 {P84: {'nvidia-108': 0}, P85: {'nvidia-108': 2}},
                 [(A, P85, 'nvidia-108')], [],
                 id='a place without the type falls back'),
    pytest.param([A], set(), {A: (P84, 'nvidia-108')}, {},
                 {P84: {'nvidia-108': 0}}, [], [A],
                 id='a full place and no mapping to fall back on'),
    # Its GPU failed: the guest's allocation is on that GPU, and the
    # other GPU's free instance is Placement's to give to another guest.
    pytest.param([A], set(), {A: (P85, 'nvidia-108')}, BOTH_108,
                 {P84: {'nvidia-108': 2}}, [], [A],
                 id='a vGPU whose device is gone is not moved to another'),
]


@pytest.mark.parametrize('wanted,existing,inventory,mappings,free,placed,'
                         'unresolved', PLACEMENTS)
def test_where_vgpus_go_back(wanted, existing, inventory, mappings, free,
                             placed, unresolved):
    assert plan(wanted, existing, inventory, mappings, free) == (
        [Creation(*place) for place in placed], unresolved)


def test_the_plan_leaves_what_it_was_given_alone():
    free = {P84: {'nvidia-108': 1}}
    plan([A], set(), {}, {'nvidia-108': [P84]}, free)
    assert free == {P84: {'nvidia-108': 1}}


def test_the_record_keeps_a_missing_vgpu_a_guest_still_names():
    # B's mdev is gone (not recreated at a boot), its guest still names
    # it: the record keeps where it was, for the next boot and for the
    # health check. C is gone and no guest names it: forgotten.
    kept = inventory_to_keep(
        {A: ('0000:84:00.0', 'nvidia-108')},
        {A: ('0000:84:00.0', 'nvidia-108'), B: ('0000:85:00.0', 'nvidia-105'),
         C: ('0000:85:00.0', 'nvidia-105')}, {A, B})
    assert kept == {A: ['0000:84:00.0', 'nvidia-108'],
                    B: ['0000:85:00.0', 'nvidia-105']}


def test_where_a_vgpu_is_now_wins_over_the_record():
    kept = inventory_to_keep({A: ('0000:85:00.0', 'nvidia-105')},
                             {A: ('0000:84:00.0', 'nvidia-108')}, {A})
    assert kept == {A: ['0000:85:00.0', 'nvidia-105']}


@pytest.mark.parametrize('inventory,mappings,devices', [
    ({}, {}, []),
    # Where vGPUs were, and what the mappings name, each once, in order.
    ({A: ('0000:85:00.0', 'nvidia-105'), B: ('0000:84:00.0', 'nvidia-108')},
     {}, ['0000:84:00.0', '0000:85:00.0']),
    ({A: ('0000:85:00.0', 'nvidia-105')},
     {'nvidia-105': ['0000:85:00.0', '0000:84:00.0'],
      'nvidia-108': ['0000:86:00.0']},
     ['0000:84:00.0', '0000:85:00.0', '0000:86:00.0']),
])
def test_the_devices_read_are_those_the_plan_may_place_on(
        inventory, mappings, devices):
    assert restore_plan.devices_to_read(inventory, mappings) == devices


@pytest.mark.parametrize('vf_types,numbers', [
    ({}, {}),
    ({'nvidia-1148': ['0000:41:00.5', '0000:41:00.4']},
     {'0000:41:00.4': 1148, '0000:41:00.5': 1148}),
    ({'nvidia-1148': ['0000:41:00.4'], 'nvidia-1149': ['0000:41:01.0']},
     {'0000:41:00.4': 1148, '0000:41:01.0': 1149}),
])
def test_a_vf_takes_the_number_of_the_type_nova_was_given_it_with(
        vf_types, numbers):
    assert restore_plan.vf_type_numbers(vf_types) == numbers


@pytest.mark.parametrize('recorded,to_set', [
    ({}, []),
    # As the record says, in the VFs' order (JSON keeps numbers as such).
    ({'0000:41:01.0': 1149, '0000:41:00.4': 1148},
     [('0000:41:00.4', 1148), ('0000:41:01.0', 1149)]),
    ({'0000:41:00.4': '1148'}, [('0000:41:00.4', 1148)]),
])
def test_each_vf_is_given_the_type_the_record_says(recorded, to_set):
    assert restore_plan.vf_types_to_set(recorded) == to_set


def test_the_inventory_is_what_the_hook_read_and_what_guests_still_name():
    host = model.HostSnapshot(
        (), (), '550.54.16', None,
        mdevs=(model.Mdev(A, '0000:84:00.0', 'nvidia-108'),),
        mdev_users={A: ['instance-1'], B: ['instance-2']},
        recorded_mdevs={B: ('0000:85:00.0', 'nvidia-105'),
                        C: ('0000:85:00.0', 'nvidia-105')})
    assert restore_plan.inventory(host) == {
        A: ['0000:84:00.0', 'nvidia-108'], B: ['0000:85:00.0', 'nvidia-105']}
