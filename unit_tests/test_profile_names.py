"""Every vGPU profile name NVIDIA publishes is a key of vgpu-device-mappings,
and makes a Placement class; anything near one is refused.

The names (unit_tests/data/nvidia_vgpu_profile_names.json) were read in
public sources for the boards of NVIDIA vGPU software 17 to 20, each
source named with the boards it gave; none is made up. A board may begin
with a digit: 6000D-2-84Q (NVIDIA's vgpu-device-manager example, vGPU 20).
"""
import json
import os
import re

import pytest

from nvidia_vgpu import names
from nvidia_vgpu.nova import resource_classes as rc
from nvidia_vgpu.nova.mappings import MappingError, parse

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data',
                    'nvidia_vgpu_profile_names.json')
with open(DATA) as _stream:
    PUBLISHED = json.load(_stream)
BOARDS = PUBLISHED['names']
NAMES = sorted({name for names in BOARDS.values() for name in names})
ADDRESS = '0000:84:00.0'


def _one_value(names):
    """One vgpu-device-mappings value giving each name the same GPU (as
    for hosts with different GPUs there)."""
    return json.dumps({name: [ADDRESS] for name in names})


# ---------------------------------------------------------- the test data

def test_every_board_names_its_source():
    sourced = set()
    for source in PUBLISHED['sources']:
        assert source['url'].startswith('https://')
        assert source['release'] and source['read'] == '2026-12-04'
        assert set(source['boards']) <= set(BOARDS)
        sourced.update(source['boards'])
    assert sourced == set(BOARDS)


def test_the_names_cover_what_the_grammar_must_take():
    """Digit-first boards, words of a board, MIG slices and attributes,
    every series."""
    assert '6000D-2-84Q' in NAMES and '6000D-1-42CGFX' in NAMES
    assert 'RTX6000-Ada-4Q' in NAMES and 'A100D-1-10CME' in NAMES
    assert {name[-1] for name in NAMES} >= set('ABCQ')
    assert len(NAMES) == sum(len(names) for names in BOARDS.values())


# ------------------------------------------------------- every name taken

@pytest.mark.parametrize('name', NAMES)
def test_every_published_name_is_a_profile(name):
    assert names.PROFILE.fullmatch(name)
    assert names.is_profile(name)
    assert not names.is_type_id(name)


@pytest.mark.parametrize('board', sorted(BOARDS))
def test_each_boards_names_are_keys_of_the_option(board):
    assert parse(_one_value(BOARDS[board])) == {
        name: [ADDRESS] for name in sorted(BOARDS[board])}


def test_all_names_at_once_in_one_value():
    parsed = parse(_one_value(NAMES))
    assert list(parsed) == NAMES   # profile names in name order
    assert all(entries == [ADDRESS] for entries in parsed.values())


@pytest.mark.parametrize('prefix', ['GRID ', 'NVIDIA ',
                                    'NVIDIA RTX PRO 6000 Blackwell '])
def test_the_driver_name_gives_the_profile_back(prefix):
    assert [names.profile_of(prefix + name) for name in NAMES] == NAMES


def test_each_name_is_its_own_placement_class():
    classes = [rc.profile_class(name) for name in NAMES]
    for name, resource_class in zip(NAMES, classes):
        assert re.fullmatch(r'CUSTOM_[A-Z0-9_]+', resource_class)
        assert rc.NOVA_MDEV_CLASS.fullmatch(resource_class)
        assert len(resource_class) <= rc.MAX_CLASS_LENGTH
        assert resource_class == 'CUSTOM_VGPU_' + name.upper().replace(
            '-', '_')
    assert len(set(classes)) == len(NAMES)   # no two names share one


@pytest.mark.parametrize('vendor_vfio', [False, True])
def test_per_profile_publishes_each_name_in_its_class(vendor_vfio):
    for name in NAMES:
        found = rc.for_type(rc.PER_PROFILE, 'nvidia-1148', 'NVIDIA ' + name,
                            vendor_vfio)
        assert found.profile == name
        assert found.resource_class == rc.profile_class(name)
        assert found.resource_class in found.flavor_property


def test_a_digit_first_board_in_one_example():
    assert parse('6000D-2-84Q: [0000:41:00.0]') == {
        '6000D-2-84Q': ['0000:41:00.0']}
    assert rc.profile_class('6000D-2-84Q') == 'CUSTOM_VGPU_6000D_2_84Q'


# ------------------------------------------------ near misses are refused

NEAR_MISSES = [
    # case: NVIDIA's capitals only (the words of a board excepted)
    'a40-2q', 'A40-2q', '6000d-2-84Q', 'dc-1-24Q', 'A100-1-5Cme',
    # blanks, prefixes, separators
    ' A40-2Q', 'A40-2Q ', 'A40 -2Q', 'NVIDIA A40-2Q', 'GRID V100-8Q',
    'A40_2Q', 'A40--2Q', 'A40-2Q-', '-2Q', 'A40-2Q,A40-4Q', 'A40-2Q]',
    'A40-2Q=1', 'A40-2Q:',
    # what Python's '$' would let through
    'A40-2Q\n', '6000D-2-84Q\n', 'A40-2Q\r\n', 'A40-2Q\x00',
    # digits that are not ASCII
    'A40-\u0662Q', 'L40S-\uff12Q', '\u0666000D-2-84Q', 'A100-\u0661-5C',
    # boards: all digits, too long, words with digits or too many
    '6000-84Q', '100-8Q', '2-84Q', '1-2-3Q', 'ABCDEFGHIJKLMNOPQ-1Q',
    '12345678901234567D-1Q', 'ABCDEFGHIJKLMNOPQ-1-10C',
    'RTX6000-Ada2-4Q', 'RTX6000-2Ada-4Q', 'RTX-Ab-Cd-Ef-4Q',
    'RTX6000-Ada-1-4Q', 'RTX6000-' + 'A' * 17 + '-4Q',
    # the frame buffer and the series
    'A40-2', 'A40-Q', '6000D-2-84', 'DC-1-24', 'A40-02Q', 'A40-10000Q',
    'A40-2D', 'A40-2X', 'A40-2QQ', 'A100-1-0C', 'A100-1-05C',
    # MIG slices: 1 to 7
    'A100D-0-10C', 'A100D-8-80C', 'A100-10-10C', 'DC-01-24Q',
    # variants: B4 on time-sliced B only, MIG attributes on MIG only
    'A40-2Q4', 'T4-2B2', 'T4-2B44', 'T4-2C4', 'DC-1-3B4', 'A40-2QME',
    'V100-8QGFX', 'A100-1-5CM', 'A100-1-5CMEME', 'A100-1-5CMEGFX',
    'A100-1-5CALL', 'A100-1-5C4',
]


@pytest.mark.parametrize('key', NEAR_MISSES)
def test_a_near_miss_is_no_profile_and_is_refused(key):
    assert not names.PROFILE.fullmatch(key)
    with pytest.raises(MappingError) as error:
        parse(json.dumps({key: [ADDRESS]}))
    assert 'Invalid vgpu-device-mappings: ' in str(error.value)
    with pytest.raises(ValueError):
        rc.profile_class(key)


def test_fullmatch_not_dollar():
    """Why the grammar is used whole: '$' matches before a last newline."""
    assert re.match('(?:{})$'.format(names.PROFILE.pattern),
                    '6000D-2-84Q\n')
    assert not names.PROFILE.fullmatch('6000D-2-84Q\n')


@pytest.mark.parametrize('key, hint', [
    ('6000d-2-84q', "in NVIDIA's capitals"),
    ('NVIDIA 6000D-2-84Q', "without the driver's prefix, e.g. 6000D-2-84Q"),
    ('6000D-2-84', 'or by profile name V100-8Q'),
])
def test_a_digit_first_near_miss_gets_the_usual_hint(key, hint):
    with pytest.raises(MappingError) as error:
        parse(json.dumps({key: [ADDRESS]}))
    assert hint in str(error.value)
