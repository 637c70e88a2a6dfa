"""Property: whatever a file on the host or a relation says, the charm's
readers of it end in a result of the shape their callers use, or in a
reason they ignored it; nothing escapes as an exception that would fail
a hook, a boot unit or an NRPE check (issue 38).

The inputs are not the operator's: the charm's own records and boot
records (a full disk, a hand edit), libvirt's guest definitions,
nvidia-smi's tables, the monitoring document the NRPE check and the
exporter read, what this unit set on nova-vgpu, and the names the nrpe
unit sends and the nagios options, which end up in files Nagios parses.
Generated: nesting of any depth, odd JSON scalars, duplicate keys,
entities, invalid UTF-8, Unicode look-alikes, control characters and
line breaks, and sizes at the limits.
"""
import json
import os
import shutil

from hypothesis import given
from hypothesis import strategies as st

from nvidia_vgpu import names
from nvidia_vgpu.host import boot_records, hostfs, libvirt, mig
from nvidia_vgpu.host.hostfs import HOST_ROOT_VARIABLE
from nvidia_vgpu.monitoring import (
    exporter, facts_file, nagios_check, nagios_names, nrpe)
from nvidia_vgpu.relations import nova_vgpu

import fuzzing

FUZZ = fuzzing.budget(150)

LOOK_ALIKES = ['0000:84:00.0', '\uff10000:84:00.0', '0000:84:00.0\n',
               'nvidia-108', 'nvidia\u2011108', 'nvidia-\u0661\u0660\u0668',
               '4b20d080-1b54-4048-85b3-a6a62d165c01', '../../etc/passwd',
               '1g.10gb', '1g.10gb,7g.80gb', 'a\u200bb', '\x00', '\x1b[31m',
               'x\u2028y', '', ' ']
JSON_SCALARS = ['null', 'true', 'false', '0', '-0', '1e999', 'NaN',
                'Infinity', '-Infinity', '1.5', '"x"', '12345678901234567890']


def json_values():
    """Python values as json.dumps writes them, odd strings included."""
    scalars = st.one_of(st.none(), st.booleans(), st.integers(),
                        st.floats(), st.sampled_from(LOOK_ALIKES))
    return st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(LOOK_ALIKES), inner, max_size=4)),
        max_leaves=20)


@st.composite
def json_texts(draw) -> bytes:
    """Bytes a JSON file on the host might hold."""
    kind = draw(st.sampled_from(['deep', 'value', 'duplicates', 'scalar',
                                 'bytes', 'cut', 'large']))
    if kind == 'deep':
        # around the readers' limit (hostfs.MAX_JSON_DEPTH), and far past
        # what Python's decoder recurses through
        depth = draw(st.one_of(st.sampled_from([31, 32, 33]),
                               st.integers(1, 200000)))
        opener = draw(st.sampled_from(['[', '{"k":']))
        closer = ']' if opener == '[' else '}'
        return (opener * depth + '0' + closer * depth).encode()
    if kind == 'value':
        return json.dumps(draw(json_values())).encode()
    if kind == 'duplicates':
        key = json.dumps(draw(st.sampled_from(LOOK_ALIKES)))
        return '{{{0}: ["a"], {0}: 1}}'.format(key).encode()
    if kind == 'scalar':
        return draw(st.sampled_from(JSON_SCALARS)).encode()
    if kind == 'bytes':
        return draw(st.binary(max_size=200))
    if kind == 'cut':
        text = json.dumps(draw(json_values())).encode()
        return text[:draw(st.integers(0, len(text)))]
    return b'{"' + b'x' * draw(st.integers(1, 1 << 20)) + b'": []}'


def printable_ascii(text: str) -> bool:
    return all(' ' <= char <= '~' for char in text)


def _write(root, path: str, data: bytes) -> None:
    real = os.path.join(str(root), path.lstrip('/'))
    os.makedirs(os.path.dirname(real), exist_ok=True)
    with open(real, 'wb') as stream:
        stream.write(data)


@FUZZ
@given(data=json_texts(), record=st.sampled_from(boot_records.RECORDS))
def test_a_record_is_read_whole_or_ignored_with_a_reason(
        tmp_path, monkeypatch, data, record):
    monkeypatch.setenv(HOST_ROOT_VARIABLE, str(tmp_path))
    _write(tmp_path, record, data)
    loaded = boot_records.load_json(record)
    assert isinstance(loaded, dict)
    problems = boot_records.problems()
    assert all(printable_ascii(problem) for problem in problems)
    # Whatever the boot unit writes into sysfs or hands nvidia-smi is one
    # of the names it may be.
    for uuid, (parent, vgpu_type) in \
            boot_records.recorded_inventory().items():
        assert names.MDEV_UUID.fullmatch(uuid)
        assert names.PCI_ADDRESS.fullmatch(parent)
        assert names.TYPE_ID.fullmatch(vgpu_type)
    for vf, number in boot_records.recorded_vf_types().items():
        assert names.PCI_ADDRESS.fullmatch(vf) and number > 0
    for gpu, profiles in boot_records.recorded_mig().items():
        assert names.PCI_ADDRESS.fullmatch(gpu)
        assert all(names.GI_PROFILE.fullmatch(p) for p in profiles)
    for vgpu_type, devices in boot_records.recorded_mappings().items():
        assert names.TYPE_ID.fullmatch(vgpu_type)
        assert all(names.PCI_ADDRESS.fullmatch(d) for d in devices)


@st.composite
def domain_xml(draw) -> bytes:
    """Bytes a guest definition under /etc/libvirt/qemu might hold."""
    kind = draw(st.sampled_from(['deep', 'entities', 'names', 'bytes',
                                 'cut', 'attributes']))
    hostdev = ("<hostdev mode='subsystem' type='mdev'><source><address "
               "uuid='4b20d080-1b54-4048-85b3-a6a62d165c01'/></source>"
               "</hostdev>")
    if kind == 'deep':
        depth = draw(st.integers(1, 100000))
        return ('<domain><name>g</name>' + '<a>' * depth + hostdev +
                '</a>' * depth + '</domain>').encode()
    if kind == 'entities':
        return (b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaa">'
                b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><domain><name>&b;'
                b'</name></domain>')
    if kind == 'names':
        name = draw(st.sampled_from(LOOK_ALIKES + ['g\nh', 'g\ty']))
        escaped = name.replace('&', '&amp;').replace('<', '&lt;')
        return ('<domain><name>' + escaped + '</name>' + hostdev +
                '</domain>').encode('utf-8', 'surrogatepass')
    if kind == 'bytes':
        return draw(st.binary(max_size=300))
    if kind == 'cut':
        text = ('<domain><name>g</name><devices>' + hostdev +
                '</devices></domain>').encode()
        return text[:draw(st.integers(0, len(text)))]
    value = draw(st.sampled_from(LOOK_ALIKES + ['-1', 'ffffffffff', '0x']))
    return ("<domain><name>g</name><hostdev type='pci'><source><address "
            "domain='{0}' bus='{0}' slot='{0}' function='{0}'/></source>"
            "</hostdev></domain>").format(
                value.replace('&', '&amp;').replace("'", '&apos;')
                .replace('<', '&lt;')).encode('utf-8', 'surrogatepass')


@FUZZ
@given(data=domain_xml(), file_name=st.sampled_from(
    ['instance-0000002a', 'g\nh', 'x\u2028y', '-']))
def test_a_guest_definition_is_read_or_named_as_unreadable(
        tmp_path, monkeypatch, data, file_name):
    monkeypatch.setenv(HOST_ROOT_VARIABLE, str(tmp_path))
    shutil.rmtree(str(tmp_path / 'etc'), ignore_errors=True)
    _write(tmp_path, '{}/{}.xml'.format(libvirt.DOMAINS, file_name), data)
    found = libvirt.definitions()
    guests = [guest for users in list(found.mdevs.values()) +
              list(found.pci.values()) for guest in users]
    guests += list(found.unreadable)
    for guest in guests:     # status lines and logs quote them
        assert '\n' not in guest and guest.isprintable()
    assert all(why.isprintable() for why in found.unreadable.values())
    # One file is one guest: read, or unreadable, never both.
    assert len(set(guests)) <= 1 or not found.unreadable


@st.composite
def smi_tables(draw) -> str:
    """Text in the shape of nvidia-smi's MIG query, -lgip and -lgi."""
    digits = draw(st.sampled_from(['0', '1', '\u00b2', '\u0661',
                                   '\uff11', '99999999999999999999']))
    rows = [
        '{}, 00000000:41:00.0, Enabled, Enabled'.format(digits),
        '{}, {}, [N/A], [N/A]'.format(digits, draw(st.sampled_from(
            LOOK_ALIKES))),
        '|   {}  MIG {}  19   {}/7   9.50  No  14 |'.format(
            digits, draw(st.sampled_from(LOOK_ALIKES)), digits),
        '|   {}  MIG 1g.10gb  {}  1  {}:1  |'.format(digits, digits, digits),
    ]
    noise = draw(st.lists(st.text(max_size=60), max_size=5))
    lines = draw(st.permutations(rows + noise))
    return draw(st.sampled_from(['\n', '\r\n', '\u2028'])).join(lines)


@FUZZ
@given(text=smi_tables())
def test_nvidia_smi_tables_are_read_row_by_row_whatever_they_hold(text):
    for index, address, current, pending in mig.parse_modes(text):
        assert isinstance(index, int)
    for rows in list(mig.parse_profiles(text).values()) + list(
            mig.parse_instances(text).values()):
        assert all(isinstance(row.id, int) for row in rows)


@FUZZ
@given(data=json_texts())
def test_the_nrpe_check_answers_one_line_whatever_the_facts_hold(
        tmp_path, monkeypatch, data):
    monkeypatch.setenv(HOST_ROOT_VARIABLE, str(tmp_path))
    _write(tmp_path, facts_file.PATH, data)
    state, line = nagios_check.answer('nvidia_vgpu_host', facts_file.PATH,
                                      1e12)
    assert state in (0, 1, 2, 3)
    assert '\n' not in line
    assert not line.startswith('No vGPU facts')     # the file was read


@FUZZ
@given(data=json_texts())
def test_the_exporter_reads_facts_or_none(tmp_path, data):
    path = tmp_path / 'monitoring.json'
    path.write_bytes(data)
    document, mtime = exporter.read_facts(str(path))
    assert document is None or isinstance(document, dict)
    assert (document is None) == (mtime is None)


@FUZZ
@given(raw=st.dictionaries(st.sampled_from(['services',
                                            'subordinate_configuration']),
                           json_texts().map(
                               lambda data: data.decode('utf-8',
                                                        'replace'))))
def test_what_this_unit_set_on_nova_vgpu_is_read_back_or_kept_as_text(raw):
    decoded = nova_vgpu._decoded(raw)
    assert set(decoded) == set(raw)


NAMES = st.one_of(st.sampled_from(LOOK_ALIKES + [
    'juju', 'juju,gpu', 'juju, gpu', 'juju\n}\ndefine host {', 'a/b',
    'a b', 'x' * 253, 'x' * 254, ',', 'juju,', '$USER1$', 'a;b', 'é']),
    st.text(max_size=300))


@FUZZ
@given(context=NAMES, groups=NAMES, hostname=NAMES)
def test_nagios_reads_exactly_one_service_whatever_the_names(
        context, groups, hostname):
    config = {nagios_names.CONTEXT: context,
              nagios_names.SERVICEGROUPS: groups}
    if nagios_names.option_problem(config):
        return       # blocked: nothing is written for Nagios
    host = nagios_names.received(hostname) or '{}-{}'.format(
        nagios_names.context(config), 'vgpu-v100-0')
    check = nrpe.NrpeCheck('nvidia_vgpu_host', 'NVIDIA vGPU host', 'x')
    service = nrpe.service_text(check, host,
                                nagios_names.servicegroups(config))
    command = nrpe.command_text(check, nagios_names.servicegroups(config))
    assert '/' not in host
    for text in (service, command):
        assert printable_ascii(text.replace('\n', ''))
    assert service.count('\n') == nrpe.service_text(
        check, 'h', 'g').count('\n')
    assert command.count('\n') == nrpe.command_text(check, 'g').count('\n')


@FUZZ
@given(data=json_texts())
def test_the_nrpe_checks_own_json_guard_agrees_with_the_charms(data):
    """The NRPE check runs alone on the host, so it carries its own copy
    of hostfs.parse_json's depth guard: both refuse and read alike."""
    text = data.decode('utf-8', 'replace')
    answers = []
    for parse in (hostfs.parse_json, nagios_check._parse):
        try:
            # as text: NaN is not equal to itself
            answers.append(('read', json.dumps(parse(text), sort_keys=True)))
        except ValueError as error:
            answers.append(('refused', 'nested deeper' in str(error)))
    assert answers[0] == answers[1]
