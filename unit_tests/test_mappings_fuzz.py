"""Property: whatever an operator writes in vgpu-device-mappings, either
the charm refuses it with a message, or the nova.conf that nova-compute
renders from what it publishes holds exactly what the charm meant.

Values are generated near the valid ones (type ids, profile names,
addresses, selectors)
with any Unicode character inserted, deleted or replaced anywhere, written
as JSON, as YAML in every quoting style (double-quoted escapes included,
so the parsed values hold the real characters), nested, with anchors,
aliases and tags, then sometimes broken once more at the text level.

The oracle is the option's specification, written here independently of
the charm: YAML read with PyYAML's BaseLoader (every scalar text, no type
resolution), then the documented grammar and host rules. The consumer is
charmhelpers' real SubordinateConfigContext, a renderer in the form of
charm-nova-compute's templates, and Python's and oslo.config's parsers.

Deterministic (derandomized, no example database) and bounded, for CI.
"""
import json
import re
import string
from typing import Dict, List, Optional, Set

import pytest
import yaml
from hypothesis import event, given
from hypothesis import strategies as st

from nvidia_vgpu import model
from nvidia_vgpu.nova import mappings, nova_config, profiles
import fuzzing
from nova_consumer import (as_meant, nova_conf_from, read_configparser,
                           read_oslo)

FUZZ = fuzzing.budget(1000)

# ------------------------------------------------------------- the host

V100 = '10de:1db4:10de:1214'
T4 = '10de:1eb8:10de:12a2'
HOST_GPUS = [model.HostGpu('0000:84:00.0', False, ids=V100),
             model.HostGpu('0000:85:00.0', False, ids=V100),
             model.HostGpu('0000:8a:00.0', False, ids=T4),
             model.HostGpu('0001:0a:00.0', False, ids=T4)]
# What the running driver lists in each GPU's mdev_supported_types, with
# the name of each type.
V100_NAMES = {'nvidia-105': 'GRID V100-1Q', 'nvidia-108': 'GRID V100-8Q'}
T4_NAMES = {'nvidia-222': 'GRID T4-1B', 'nvidia-234': 'GRID T4-16C'}
NAMES = {'0000:84:00.0': V100_NAMES, '0000:85:00.0': V100_NAMES,
         '0000:8a:00.0': T4_NAMES, '0001:0a:00.0': T4_NAMES}
OFFERED = {device: set(types) for device, types in NAMES.items()}
FAMILIES = [nova_config.QUEENS, nova_config.USSURI, nova_config.XENA,
            nova_config.CARACAL]

TYPES = ['nvidia-105', 'nvidia-108', 'nvidia-222', 'nvidia-234',
         'nvidia-35', 'nvidia-99999',
         'V100-8Q', 'V100-1Q', 'T4-16C', 'A40-2Q', 'A100D-1-10C',
         '6000D-2-84Q']
ADDRESSES = ['0000:84:00.0', '0000:85:00.0', '0000:8a:00.0',
             '0001:0a:00.0', '0000:41:00.0', '0000:c1:00.7']
SELECTORS = ['10de:1db4', V100, '10de:1eb8', T4, '10de:2236']

# ------------------------------------------------- the specification

SPEC_TYPE = re.compile(r'nvidia-[1-9][0-9]{0,4}')
SPEC_ADDRESS = re.compile(r'[0-9a-f]{4}:[0-9a-f]{2}:[01][0-9a-f]\.[0-7]')
SPEC_SELECTOR = re.compile(r'10de:[0-9a-f]{4}(:[0-9a-f]{4}:[0-9a-f]{4})?')
# A profile name: a board; time-sliced, up to two more words of it, frame
# buffer in GB, series (B4 for B); or MIG-backed, slices, frame buffer,
# series, MIG attribute (docs/reference.md, "Profile names").
_BOARD = r'[0-9]{0,15}[A-Z][0-9A-Z]{0,15}'
_WORD = r'-[A-Z][A-Za-z]{0,15}'
_TIME_SLICED = r'({})?({})?-(0|[1-9][0-9]{{0,3}})(A|B|B4|C|Q)'.format(
    _WORD, _WORD)
_MIG_BACKED = r'-[1-7]-[1-9][0-9]{0,3}(A|B|C|Q)(ME|NOME|MEALL|GFX)?'
_PROFILE = re.compile('{}({}|{})'.format(_BOARD, _TIME_SLICED, _MIG_BACKED))


def spec_profile(text: str) -> bool:
    """A profile name, its board (checked apart) 1 to 16 characters."""
    board = re.match('[0-9A-Z]*', text).group()
    return bool(_PROFILE.fullmatch(text)) and len(board) <= 16


PRINTABLE_ASCII = set(string.printable) - set('\t\n\r\x0b\x0c')


class Refused(Exception):
    pass


class _UniqueKeys(yaml.BaseLoader):
    """BaseLoader, but a key given twice is an error (as the spec says)."""


def _unique_mapping(loader, node, deep=False):
    keys = []
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in keys:
            raise Refused('duplicate key')
        keys.append(key)
    return yaml.BaseLoader.construct_mapping(loader, node, deep=True)


_UniqueKeys.add_constructor('tag:yaml.org,2002:map', _unique_mapping)


def _text_fields(value: object) -> bool:
    return (isinstance(value, str) and set(value) <= PRINTABLE_ASCII)


def spec_host_mappings(text: str, offered: Optional[Dict[str, Set[str]]]
                       ) -> Dict[str, List[str]]:
    """What the documentation says this host gets from this text, or
    Refused."""
    if not text.strip(' \t\r\n'):
        return {}
    try:
        if any(isinstance(token, yaml.TagToken)
               for token in yaml.scan(text, Loader=yaml.BaseLoader)):
            raise Refused('tag')
        data = yaml.load(text, Loader=_UniqueKeys)
    except (yaml.YAMLError, TypeError) as error:
        raise Refused(str(error))
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise Refused('not a mapping')
    owners: Dict[str, Set[str]] = {}
    wanted: Dict[str, List[str]] = {}
    for vgpu_type, entries in data.items():
        if not _text_fields(vgpu_type) or not (
                SPEC_TYPE.fullmatch(vgpu_type)
                or spec_profile(vgpu_type)):
            raise Refused('type')
        if not isinstance(entries, list) or not entries:
            raise Refused('entries')
        for entry in entries:
            if not _text_fields(entry):
                raise Refused('entry')
            entry = entry.lower()
            if SPEC_SELECTOR.fullmatch(entry):
                continue
            if not SPEC_ADDRESS.fullmatch(entry):
                raise Refused('entry')
            owners.setdefault(entry, set()).add(vgpu_type)
            # Only profile names may share an address.
            if len(owners[entry]) > 1 and any(
                    SPEC_TYPE.fullmatch(owner) for owner in owners[entry]):
                raise Refused('address under two types')
        wanted[vgpu_type] = [entry.lower() for entry in entries]
    claims: Dict[str, Set[str]] = {}   # device -> type ids
    named: Dict[str, Set[str]] = {}    # device -> profile names given it
    for vgpu_type, entries in wanted.items():
        for entry in entries:
            devices = [gpu.address for gpu in HOST_GPUS
                       if entry == gpu.address or (
                           SPEC_SELECTOR.fullmatch(entry) and (
                               gpu.ids + ':').startswith(entry + ':'))]
            for device in devices:
                if spec_profile(vgpu_type):
                    named.setdefault(device, set()).add(vgpu_type)
                    continue
                claims.setdefault(device, set()).add(vgpu_type)
                if offered is not None and vgpu_type not in offered[device]:
                    raise Refused('type not offered')
    # Each device takes the one profile name its driver lists for it (the
    # last word of a type's name); none before the driver runs.
    for device, names in named.items():
        if offered is None:
            continue
        ids = {NAMES[device][type_id].split(' ')[-1]: type_id
               for type_id in offered[device]}
        taken = [ids[name] for name in names if name in ids]
        if len(taken) != 1:
            raise Refused('no single profile offered')
        claims.setdefault(device, set()).add(taken[0])
    claimed: Dict[str, str] = {}
    for device, type_ids in claims.items():
        if len(type_ids) > 1:
            raise Refused('device under two types')
        claimed[device] = type_ids.pop()
    host: Dict[str, List[str]] = {}
    for device, vgpu_type in claimed.items():
        host.setdefault(vgpu_type, []).append(device)
    return {vgpu_type: sorted(host[vgpu_type])
            for vgpu_type in sorted(host, key=lambda t: int(t[7:]))}


def spec_sections(host: Dict[str, List[str]],
                  family: model.NovaOptions) -> Dict[str, dict]:
    """nova.conf as the documentation's table says, per release family."""
    if not host:
        return {}
    sections = {'devices': {family.type_list_option: [', '.join(host)]}}
    if family.type_group_prefix:
        for vgpu_type, devices in host.items():
            sections[family.type_group_prefix + vgpu_type] = {
                'device_addresses': [','.join(devices)]}
    return sections


# ---------------------------------------------------------- generators

NASTY = ['\n', '\r', '\t', '\x00', '\x0b', '\x0c', '\x1b', '\x7f', '\x85',
         '\xa0', '\u2028', '\u2029', '\ufeff', '\u200b', '\u2013', '\u2212',
         '\uff10', '\u0661', '\U0001d7ce', 'K', '[', ']', '=', ',', ';',
         '#', '%', '$', '{', '}', '"', "'", '\\', ' ', ':', '.', '-', '*',
         '&', '!', '|', '>', '@', '`']
# Line breaks as Python, YAML and configparser see them, and controls.
BREAKS = ['\n', '\r', '\x00', '\t', '\x0b', '\x0c', '\x85', '\u2028']
ANY_CHARACTER = st.one_of(
    st.sampled_from(BREAKS), st.sampled_from(NASTY),
    st.characters().filter(lambda c: not 0xD800 <= ord(c) <= 0xDFFF))


@st.composite
def mutated(draw, valid: str) -> str:
    """valid, with one character inserted, replaced or deleted, upper
    case, or padded."""
    how = draw(st.sampled_from(['insert', 'append', 'replace', 'delete',
                                'upper', 'pad']))
    at = draw(st.integers(0, len(valid)))
    if how == 'append':
        return valid + draw(ANY_CHARACTER)
    if how == 'insert':
        return valid[:at] + draw(ANY_CHARACTER) + valid[at:]
    if how == 'replace':
        return valid[:at] + draw(ANY_CHARACTER) + valid[at + 1:]
    if how == 'delete':
        return valid[:at] + valid[at + 1:]
    if how == 'upper':
        return valid.upper()
    return (draw(st.sampled_from([' ', '\n', '\t', ''])) + valid
            + draw(st.sampled_from([' ', '\n', '\r\n', ''])))


ODD_NODES = st.one_of(st.integers(-1, 99999), st.none(), st.booleans(),
                      st.just([]), st.just({}), st.just(['0000:84:00.0']),
                      st.just({'0000:84:00.0': '0000:85:00.0'}))
ADDRESS = st.sampled_from(ADDRESSES).flatmap(
    lambda address: st.sampled_from([address, address.upper()]))
ENTRY = st.one_of(ADDRESS, st.sampled_from(SELECTORS))
WELL_FORMED = st.dictionaries(st.sampled_from(TYPES),
                              st.lists(ENTRY, min_size=1, max_size=3),
                              min_size=1, max_size=3)


@st.composite
def near_misses(draw, value: dict) -> dict:
    """The well-formed value with one key, entry or list gone wrong."""
    def wrong(node):
        odd = ODD_NODES
        return st.one_of(mutated(node), odd) if isinstance(node, str) else odd

    key = draw(st.sampled_from(list(value)))
    entries_ = value[key]
    where = draw(st.sampled_from(['key', 'entry', 'entry', 'list']))
    value = dict(value)
    if where == 'key':
        new_key = draw(wrong(key).filter(
            lambda node: not isinstance(node, (list, dict))))
        value = {(new_key if k == key else k): v for k, v in value.items()}
    elif where == 'entry' and isinstance(entries_, list) and entries_:
        entries_ = list(entries_)
        at = draw(st.integers(0, len(entries_) - 1))
        entries_[at] = draw(wrong(entries_[at]))
        value[key] = entries_
    else:
        value[key] = draw(st.one_of(ODD_NODES, st.sampled_from(TYPES)))
    return value


_ESCAPES = {'\n': '\\n', '\r': '\\r', '\t': '\\t', '\x00': '\\0',
            '\x85': '\\N', '\xa0': '\\_', '\u2028': '\\L', '\u2029': '\\P',
            '"': '\\"', '\\': '\\\\'}


def double_quoted(text: str, long_escapes: bool) -> str:
    """YAML double-quoted: every character not printable ASCII escaped,
    so the parsed value holds exactly these characters."""
    out = []
    for character in text:
        if character in _ESCAPES and not long_escapes:
            out.append(_ESCAPES[character])
        elif character in PRINTABLE_ASCII and character not in '"\\':
            out.append(character)
        elif ord(character) < 0x100:
            out.append('\\x{:02x}'.format(ord(character)))
        elif ord(character) < 0x10000:
            out.append('\\u{:04x}'.format(ord(character)))
        else:
            out.append('\\U{:08x}'.format(ord(character)))
    return '"' + ''.join(out) + '"'


def flow(value: object, scalar) -> str:
    if isinstance(value, dict):
        return '{' + ', '.join('{}: {}'.format(flow(k, scalar),
                                               flow(v, scalar))
                               for k, v in value.items()) + '}'
    if isinstance(value, list):
        return '[' + ', '.join(flow(item, scalar) for item in value) + ']'
    if isinstance(value, str):
        return scalar(value)
    return 'null' if value is None else str(value).lower()


def block(value: dict) -> str:
    lines = []
    for key, entries_ in value.items():
        lines.append('{}:'.format(key))
        for entry in entries_ if isinstance(entries_, list) else [entries_]:
            lines.append('  - {}'.format(entry))
    return '\n'.join(lines) + '\n'


@st.composite
def option_texts(draw, near_miss: bool) -> str:
    """The option's text for a generated value, in one of many styles;
    with near_miss, up to three things in it may be wrong."""
    value = draw(WELL_FORMED)
    for _ in range(draw(st.integers(0, 3)) if near_miss else 0):
        value = draw(near_misses(value))
    keys = list(value)
    if len(keys) > 1 and draw(st.booleans()):
        value[keys[1]] = value[keys[0]]   # one list twice: anchor, alias
    style = draw(st.sampled_from(['json', 'json-ascii', 'yaml-flow',
                                  'yaml-block', 'single', 'double',
                                  'double-long', 'plain-block']))
    if style.startswith('json'):
        text = json.dumps(value, ensure_ascii=style == 'json-ascii')
    elif style.startswith('yaml'):
        text = yaml.safe_dump(value, default_flow_style=style == 'yaml-flow',
                              allow_unicode=draw(st.booleans()))
    elif style == 'single':
        text = flow(value, lambda s: "'" + s.replace("'", "''") + "'")
    elif style.startswith('double'):
        text = flow(value, lambda s: double_quoted(s, style == 'double-long'))
    else:
        text = block(value)
    if near_miss and draw(st.integers(0, 9)) == 0:
        tag = draw(st.sampled_from(['!!str ', '!!map ', '!!python/object:os'
                                    '.system ', '! ', '!!binary ']))
        at = draw(st.sampled_from([0, text.find('['), text.find(':') + 1]))
        text = text[:max(at, 0)] + tag + text[max(at, 0):]
    if near_miss and draw(st.integers(0, 4)) == 0:
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(ANY_CHARACTER) + text[at:]
    return text


# ----------------------------------------------------------- properties

def check(text: str, offered: Optional[Dict[str, Set[str]]]) -> bool:
    """Refused with a message, or exactly what was meant reaches nova.conf.
    Returns whether the value was accepted."""
    try:
        expected = spec_host_mappings(text, offered)
    except Refused:
        expected = None
    try:
        wanted = mappings.parse(text)
    except mappings.MappingError as error:
        message = str(error)
        assert message.startswith('Invalid vgpu-device-mappings: ')
        assert set(message) <= PRINTABLE_ASCII and len(message) < 400
        assert expected is None, (text, message)
        return False
    table = None if offered is None else NAMES
    resolution = profiles.resolve(wanted, HOST_GPUS, table)
    assert all(SPEC_TYPE.fullmatch(key) for key in resolution.mappings)
    host = profiles.merged(resolution, mappings.for_host(
        resolution.mappings, HOST_GPUS, table))
    if host.problems:
        assert expected is None, (text, host.problems)
        assert all(set(problem) <= PRINTABLE_ASCII
                   for problem in host.problems)
        return False
    assert expected is not None, text
    assert host.mappings == expected
    for family in FAMILIES:
        sections = nova_config.nova_sections(host.mappings, family)
        assert as_meant(sections) == spec_sections(expected, family)
        rendered = nova_conf_from(sections)
        assert read_oslo(rendered) == as_meant(sections), rendered
        assert read_configparser(rendered) == {
            name: {key: values[-1] for key, values in keys.items()}
            for name, keys in as_meant(sections).items()}, rendered
    return True


@FUZZ
@given(text=option_texts(near_miss=True), driver_running=st.booleans())
def test_refused_or_exactly_what_was_meant(text, driver_running):
    accepted = check(text, OFFERED if driver_running else None)
    event('accepted' if accepted else 'refused')


@FUZZ
@given(text=option_texts(near_miss=False))
def test_well_formed_values_are_accepted_before_the_driver_runs(text):
    # The generators can produce accepted values: the property above is
    # not satisfied by refusing everything.
    try:
        spec_host_mappings(text, None)
    except Refused:
        event('refused: one device under two types')
        return
    assert check(text, None)
    event('accepted')


@FUZZ
@given(value=WELL_FORMED, data=st.data(), driver_running=st.booleans(),
       style=st.sampled_from(['json', 'double', 'double-long']))
def test_one_character_anywhere_in_one_value(value, data, driver_running,
                                             style):
    """Any character at any place of one type, address or selector, in
    the styles that keep it as it is (JSON and YAML escapes)."""
    key = data.draw(st.sampled_from(sorted(value)))
    index = data.draw(st.integers(-1, len(value[key]) - 1))
    target = key if index < 0 else value[key][index]
    # Ends first: that is where '$' let a newline through.
    at = data.draw(st.one_of(st.just(len(target)), st.just(0),
                             st.integers(1, len(target) - 1)))
    character = data.draw(ANY_CHARACTER)
    changed = target[:at] + character + target[at:]
    if index < 0:
        value = {(changed if k == key else k): v for k, v in value.items()}
    else:
        value[key] = value[key][:index] + [changed] + value[key][index + 1:]
    if style == 'json':
        text = json.dumps(value)
    else:
        text = flow(value, lambda s: double_quoted(s, style == 'double-long'))
    accepted = check(text, OFFERED if driver_running else None)
    if not (' ' <= character <= '~'):
        assert not accepted
    event('accepted' if accepted else 'refused')


@pytest.mark.parametrize('text', [
    '{"nvidia-108\\n": ["0000:84:00.0"]}',
    '{"nvidia-108": ["0000:84:00.0\\n"]}',
    '{"nvidia-108": ["10de:1db4\\n"]}',
    '{"nvidia-108": ["0000:84:00.0\\r\\n[DEFAULT]\\ndebug = true"]}',
    'nvidia-108:\n  - |\n    0000:84:00.0\n',
])
@pytest.mark.parametrize('offered', [None, OFFERED])
def test_the_reported_values_are_refused_on_every_host_state(text, offered):
    assert check(text, offered) is False
