"""The shared names (nvidia_vgpu/names.py): one grammar each, and the
rooms use these, not copies of their own."""
import json
import os
import re

import pytest

from nvidia_vgpu import names
from nvidia_vgpu.mig import layout
from nvidia_vgpu.nova import mappings

LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))), 'src', 'lib', 'nvidia_vgpu')
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data',
                    'nvidia_vgpu_profile_names.json')
with open(DATA) as _stream:
    PUBLISHED = sorted({name for board in json.load(_stream)[
        'names'].values() for name in board})


@pytest.mark.parametrize('number', [1, 35, 108, 1148, 99999])
def test_a_type_id_is_built_and_read_back(number):
    built = names.type_id(number)
    assert built == 'nvidia-{}'.format(number)
    assert names.is_type_id(built)
    assert names.type_number(built) == number


@pytest.mark.parametrize('text', [
    'nvidia-0', 'nvidia-010', 'nvidia-123456', 'NVIDIA-35', 'nvidia-35\n',
    'nvidia-', 'V100-8Q', ''])
def test_anything_else_is_no_type_id(text):
    assert not names.is_type_id(text)


@pytest.mark.parametrize('text,number', [
    ('V100-8Q', None), ('A100D-1-10C', None), ('nvidia-', None),
    ('', None)])
def test_a_name_without_a_number_has_none(text, number):
    assert names.type_number(text) == number


def test_type_order_is_numeric_then_by_name():
    keys = ['nvidia-10', 'V100-8Q', 'nvidia-9', 'A40-2Q', 'nvidia-108']
    assert sorted(keys, key=names.type_order) == [
        'A40-2Q', 'V100-8Q', 'nvidia-9', 'nvidia-10', 'nvidia-108']


def test_every_published_mig_backed_name_gives_its_gpu_instance():
    """The one MIG-backed grammar is the profile grammar's MIG half: each
    published name it takes is a profile name whose GI profile reads off
    its slices and GB."""
    mig_backed = [name for name in PUBLISHED if names.MIG_BACKED.fullmatch(
        name)]
    assert len(mig_backed) > 20
    for name in mig_backed:
        assert names.is_profile(name)
        gi = names.gi_profile_of('NVIDIA ' + name)
        slices, gb = re.fullmatch(r'.*-([1-7])-([0-9]+)[ABCQ].*',
                                  name).groups()
        assert gi.startswith('{}g.{}gb'.format(slices, gb)), name
    for name in set(PUBLISHED) - set(mig_backed):
        assert names.gi_profile_of(name) is None


@pytest.mark.parametrize('driver_name', [
    'NVIDIA ABCDEFGHIJKLMNOPQ-1-10C',   # board too long: no profile name
    'NVIDIA 1-2-3Q',                    # board without a capital
    'NVIDIA H100XM-1-10C ', None, 'GRID V100-8Q'])
def test_no_gpu_instance_without_a_mig_backed_profile_name(driver_name):
    assert names.gi_profile_of(driver_name) is None


def test_the_rooms_use_the_names_not_copies():
    assert mappings.is_profile is names.is_profile
    assert mappings.type_order is names.type_order
    assert not hasattr(layout, 'gi_profile_of')


# Where a copy would show: the type id's prefix as text, its number read
# by hand, the last word of a driver's name taken by hand, or a regular
# expression of a PCI address, selector or MIG-backed name.
COPIES = re.compile(
    r"'nvidia-\{\}'|'nvidia-'|startswith\('nvidia-|nvidia-\[|"
    r"rsplit\('-', 1\)|split\(' '\)\[-1\]|"
    r"\[0-9a-fA-F\]\{4\}:|\[0-9a-f\]\{4\}:|10de:\[|\[1-7\]\)?-")
# Files whose copy another change, working on them now, is to replace
# (file -> with what).
NOT_YET = {}


def test_not_yet_names_files_that_exist_and_says_why():
    for path, why in NOT_YET.items():
        assert os.path.exists(os.path.join(LIB, path)) and why.strip()


def test_no_room_keeps_its_own_copy():
    found = []
    for folder, _, files in os.walk(LIB):
        for name in sorted(files):
            path = os.path.join(folder, name)
            if not name.endswith('.py') or name == 'names.py':
                continue
            with open(path) as stream:
                text = stream.read()
            if COPIES.search(text):
                found.append(os.path.relpath(path, LIB))
    assert sorted(set(found) - set(NOT_YET)) == []
