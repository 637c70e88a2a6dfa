"""vgpu-device-mappings: only well-formed vGPU settings get through."""
import json

import pytest

from nvidia_vgpu.nova import mappings
from nvidia_vgpu.nova.mappings import MappingError, parse
from nvidia_vgpu import model, names, option_text


@pytest.mark.parametrize('text', [
    "{'nvidia-35': ['0000:84:00.0', '0000:85:00.0'], "
    "'nvidia-36': ['0000:86:00.0']}",
    json.dumps({'nvidia-36': ['0000:86:00.0'],
                'nvidia-35': ['0000:85:00.0', '0000:84:00.0']}),
    'nvidia-35:\n  - 0000:84:00.0\n  - 0000:85:00.0\n'
    'nvidia-36: [0000:86:00.0]\n',
    # YAML 1.1 would read an unquoted 0000:41:00.0-like value as a base-60
    # float; the raw text is what counts here.
    "{nvidia-35: [0000:85:00.0, 0000:84:00.0], nvidia-36: [0000:86:00.0]}",
])
def test_yaml_json_and_unquoted_forms_mean_the_same(text):
    assert parse(text) == {'nvidia-35': ['0000:84:00.0', '0000:85:00.0'],
                           'nvidia-36': ['0000:86:00.0']}


def test_unquoted_address_that_yaml_takes_for_a_number_is_kept_as_text():
    assert parse('{nvidia-35: [0000:41:00.0]}') == {
        'nvidia-35': ['0000:41:00.0']}


@pytest.mark.parametrize('text', ['', '   ', '\n', '{}', '# nothing\n'])
def test_empty_means_no_vgpu_types(text):
    assert parse(text) == {}


def test_addresses_are_lower_cased_for_nova_exact_match():
    assert parse("{'nvidia-35': ['0000:8A:00.0']}") == {
        'nvidia-35': ['0000:8a:00.0']}


def test_an_address_repeated_under_one_type_is_listed_once():
    assert parse("{'nvidia-35': ['0000:84:00.0', '0000:84:00.0']}") == {
        'nvidia-35': ['0000:84:00.0']}


def test_types_come_out_in_numeric_order():
    assert list(parse('{nvidia-108: [0000:84:00.0], nvidia-9: '
                      '[0000:85:00.0], nvidia-35: [0000:86:00.0]}')) == [
        'nvidia-9', 'nvidia-35', 'nvidia-108']


HOSTILE = [
    # nova.conf section breaks, newlines, '=', brackets
    ('{"nvidia-35": ["0000:84:00.0\\n[DEFAULT]\\ndebug = true"]}',
     "holds '\\n' (U+000A, a control character) at character 13"),
    ('{"nvidia-35]\\n[DEFAULT": ["0000:84:00.0"]}',
     "the vGPU type 'nvidia-35]\\n[DEFAULT' holds '\\n'"),
    ('{"nvidia-35": ["0000:84:00.0,0000:85:00.0"]}',
     'is not a full PCI address'),
    ('{"nvidia-35 = x": ["0000:84:00.0"]}', 'is not a vGPU type name'),
    ('{"[nvidia-35]": ["0000:84:00.0"]}', 'is not a vGPU type name'),
    ('{"nvidia-35": ["[0000:84:00.0]"]}', 'is not a full PCI address'),
    ('{"nvidia-35": ["0000:84:00.0\\r"]}', "holds '\\r' (U+000D"),
    ('{"nvidia-35\\u2028": ["0000:84:00.0"]}',
     "holds '\\u2028' (U+2028, LINE SEPARATOR) at character 10"),
    # interpolation
    ('{"nvidia-35": ["%(host)s"]}', 'is not a full PCI address'),
    ('{"nvidia-35": ["${HOME}"]}', 'is not a full PCI address'),
    ('{"{{ ssl_key }}": ["0000:84:00.0"]}', 'is not a vGPU type name'),
    # tags
    ("{'nvidia-35': [!!str 0000:84:00.0]}", 'YAML tags are not allowed'),
    ("!!python/object:os.system {}", 'YAML tags are not allowed'),
    ("{'nvidia-35': !!binary AAAA}", 'YAML tags are not allowed'),
    # aliases and merge keys
    ("a: &a ['0000:84:00.0']\nnvidia-35: *a", 'is not a vGPU type name'),
    ("nvidia-35: &a ['0000:84:00.0']\nnvidia-36: *a",
     'is listed under both nvidia-35 and nvidia-36'),
    ("nvidia-35: ['0000:84:00.0']\n<<: {nvidia-36: ['0000:85:00.0']}",
     "'<<' is not a vGPU type name"),
    # wrong shapes and types
    ("['nvidia-35', '0000:84:00.0']", 'expected a mapping'),
    ("nvidia-35", 'expected a mapping'),
    ("{'nvidia-35': '0000:84:00.0'}", 'must be a list of PCI addresses'),
    ("{'nvidia-35': []}", 'has no PCI addresses'),
    ("{'nvidia-35': [['0000:84:00.0']]}", 'must be text, not a list'),
    ("{'nvidia-35': [{'a': 1}]}", 'must be text, not a mapping'),
    ("{['nvidia-35']: ['0000:84:00.0']}", 'a vGPU type must be text'),
    ("{35: ['0000:84:00.0']}", "'35' is not a vGPU type name"),
    ("{'nvidia-35': [null]}", "'null' under 'nvidia-35' is not a full"),
    ("{'NVIDIA-35': ['0000:84:00.0']}", 'is not a vGPU type name'),
    ("{'nvidia-035': ['0000:84:00.0']}", 'is not a vGPU type name'),
    ("{'i915-GVTg_V5_4': ['0000:00:02.0']}", 'is not a vGPU type name'),
    # incomplete or impossible addresses
    ("{'nvidia-35': ['84:00.0']}", 'is not a full PCI address'),
    ("{'nvidia-35': ['0000:84:00.8']}", 'is not a full PCI address'),
    ("{'nvidia-35': ['0000:84:20.0']}", 'is not a full PCI address'),
    ("{'nvidia-35': ['0000:84:00:0']}", 'is not a full PCI address'),
    ("{'nvidia-35': ['pci_0000_84_00_0']}", 'is not a full PCI address'),
    # duplicates
    ("nvidia-35: ['0000:84:00.0']\nnvidia-35: ['0000:85:00.0']",
     "'nvidia-35' is given twice"),
    ("{'nvidia-35': ['0000:84:00.0'], 'nvidia-36': ['0000:84:00.0']}",
     '0000:84:00.0 is listed under both nvidia-35 and nvidia-36'),
    ("{'nvidia-35': ['0000:8A:00.0'], 'nvidia-36': ['0000:8a:00.0']}",
     '0000:8a:00.0 is listed under both'),
    # not YAML at all, several documents
    ("{'nvidia-35': ['0000:84:00.0'", 'not valid YAML or JSON'),
    ("nvidia-35: [0000:84:00.0]\n---\nnvidia-36: [0000:85:00.0]\n",
     'not valid YAML or JSON'),
]


@pytest.mark.parametrize('text, reason', HOSTILE)
def test_hostile_and_wrong_values_are_refused_by_name(text, reason):
    with pytest.raises(MappingError) as error:
        parse(text)
    message = str(error.value)
    assert message.startswith('Invalid vgpu-device-mappings: ')
    assert reason in message
    assert '\n' not in message and '\r' not in message


def test_huge_input_is_refused_before_parsing():
    text = "{'nvidia-35': [" + ", ".join(
        "'0000:84:00.0'" for _ in range(10000)) + "]}"
    with pytest.raises(MappingError, match='longer than 65536 bytes'):
        parse(text)


BILLION_LAUGHS = '\n'.join(
    ["a: &a ['0000:84:00.0', '0000:84:00.0', '0000:84:00.0']"] +
    ['{0}: &{0} [{1}]'.format(level, ', '.join(['*' + previous] * 10))
     for previous, level in zip('abcdefghi', 'bcdefghij')] +
    ['nvidia-35: *j'])


def test_billion_laughs_is_refused_without_expanding_it():
    with pytest.raises(MappingError):
        parse(BILLION_LAUGHS)


def test_entries_beyond_the_budget_are_refused(monkeypatch):
    monkeypatch.setattr(option_text, 'MAX_NODES', 5)
    text = ("nvidia-35: ['0000:84:00.0', '0000:85:00.0']\n"
            "nvidia-36: ['0000:86:00.0', '0000:87:00.0']\n")
    with pytest.raises(MappingError, match=r'too many entries \(more than '
                       r'5 after expanding YAML aliases\)'):
        parse(text)


def test_long_values_are_shortened_in_the_message():
    with pytest.raises(MappingError) as error:
        parse("{'nvidia-35': ['" + 'x' * 500 + "']}")
    assert 'x' * 38 not in str(error.value)
    assert "'" + 'x' * 37 + "...' under 'nvidia-35'" in str(error.value)


def gpu(address, *vfs, sriov=None):
    return model.HostGpu(address, bool(vfs) if sriov is None else sriov,
                         tuple(vfs))


class TestForHost:
    """One application value, many hosts."""

    WANTED = {'nvidia-35': ['0000:84:00.0', '0000:85:00.0'],
              'nvidia-36': ['0000:86:00.0']}

    def test_addresses_absent_here_are_left_out_and_named(self):
        host = mappings.for_host(self.WANTED, [gpu('0000:84:00.0')], None)
        assert host.mappings == {'nvidia-35': ['0000:84:00.0']}
        assert host.absent == ['0000:85:00.0', '0000:86:00.0']
        assert host.problems == []

    def test_types_are_not_checked_before_the_driver_runs(self):
        host = mappings.for_host(self.WANTED, [gpu('0000:84:00.0')], None)
        assert host.problems == []

    def test_a_type_the_gpu_does_not_offer_is_a_problem(self):
        host = mappings.for_host(
            self.WANTED, [gpu('0000:84:00.0'), gpu('0000:86:00.0')],
            {'0000:84:00.0': {'nvidia-35', 'nvidia-108'},
             '0000:86:00.0': {'nvidia-222', 'nvidia-35'}})
        assert host.problems == [
            'nvidia-36 is not offered by the GPU at 0000:86:00.0 (it '
            'offers: nvidia-35, nvidia-222); see the list-vgpu-types action']

    def test_a_host_without_gpus_keeps_nothing(self):
        host = mappings.for_host(self.WANTED, [], None)
        assert host.mappings == {}
        assert len(host.absent) == 3


class TestSriovGpus:
    """GPUs whose vGPUs live on SR-IOV virtual functions."""

    A100 = gpu('0000:41:00.0', '0000:41:00.4', '0000:41:00.5',
               '0000:41:00.6')

    def test_the_gpus_address_stands_for_its_vfs(self):
        host = mappings.for_host({'nvidia-697': ['0000:41:00.0']},
                                 [self.A100], None)
        assert host.mappings == {'nvidia-697': [
            '0000:41:00.4', '0000:41:00.5', '0000:41:00.6']}
        assert host.sriov_gpus == {'nvidia-697': ['0000:41:00.0']}

    def test_vf_addresses_can_be_given_one_by_one(self):
        host = mappings.for_host(
            {'nvidia-692': ['0000:41:00.4'], 'nvidia-698': ['0000:41:00.6']},
            [self.A100], None)
        assert host.mappings == {'nvidia-692': ['0000:41:00.4'],
                                 'nvidia-698': ['0000:41:00.6']}
        assert host.absent == [] and host.problems == []

    def test_a_vf_claimed_twice_through_its_gpu_is_refused_by_name(self):
        host = mappings.for_host(
            {'nvidia-692': ['0000:41:00.5'], 'nvidia-697': ['0000:41:00.0']},
            [self.A100], None)
        assert host.problems == [
            '0000:41:00.5 is claimed by both nvidia-692 and nvidia-697 '
            '(through 0000:41:00.0); a device offers one type']

    def test_in_mig_mode_several_types_may_list_the_same_vfs(self):
        # capacity.share_mig_gpus then gives each type VFs of its own.
        both = {'nvidia-1130': ['0000:41:00.0'],
                'nvidia-1133': ['0000:41:00.0']}
        refused = mappings.for_host(both, [self.A100], None)
        # said once, for the first VF, not once per VF
        assert refused.problems == [
            '0000:41:00.4 is claimed by both nvidia-1130 and nvidia-1133 '
            '(through 0000:41:00.0); a device offers one type']
        host = mappings.for_host(both, [self.A100], None, {'0000:41:00.0'})
        assert host.problems == []
        assert host.mappings == {vgpu_type: list(
            self.A100.virtual_functions) for vgpu_type in both}

    def test_vfs_not_enabled_yet_are_waited_for(self):
        host = mappings.for_host({'nvidia-697': ['0000:41:00.0']},
                                 [gpu('0000:41:00.0', sriov=True)], None)
        assert host.mappings == {}
        assert host.waiting == ['0000:41:00.0']
        assert host.problems == []

    def test_types_are_checked_on_each_vf(self):
        offered = {vf: {'nvidia-692'} for vf in self.A100.virtual_functions}
        offered['0000:41:00.6'] = set()
        host = mappings.for_host({'nvidia-692': ['0000:41:00.0']},
                                 [self.A100], offered)
        assert host.problems == [
            'nvidia-692 is not offered by the GPU at 0000:41:00.6 (it '
            'offers: none); see the list-vgpu-types action']


V100 = '10de:1db4:10de:1214'
T4 = '10de:1eb8:10de:12a2'


class TestSelectors:
    """GPU models instead of addresses, for fleets of mixed hosts."""

    def test_grammar_accepts_device_and_device_with_subsystem(self):
        assert parse("{'nvidia-108': ['10DE:1DB4'], 'nvidia-222': "
                     "['10de:1eb8:10de:12a2', '0000:3b:00.0']}") == {
            'nvidia-108': ['10de:1db4'],
            'nvidia-222': ['0000:3b:00.0', '10de:1eb8:10de:12a2']}

    @pytest.mark.parametrize('entry, reason', [
        ('8086:1db4', 'is not a GPU selector'),
        ('10de:1db4:10de', 'is not a GPU selector'),
        ('10de:1db4:10de:1214:0000', 'is not a full PCI address'),
        ('10de:1db', 'is not a full PCI address'),
        ('10de:*', 'is not a full PCI address'),
        ('10de:1db4\\n[DEFAULT]', "holds '\\n'"),
    ])
    def test_selectors_have_a_fixed_grammar(self, entry, reason):
        with pytest.raises(MappingError) as error:
            parse('{"nvidia-108": ["' + entry + '"]}')
        assert reason in str(error.value)

    def test_a_selector_expands_to_this_hosts_matching_gpus(self):
        gpus = [gpu('0000:84:00.0')._replace(ids=V100),
                gpu('0000:85:00.0')._replace(ids=V100),
                gpu('0000:3b:00.0')._replace(ids=T4)]
        host = mappings.for_host({'nvidia-108': ['10de:1db4']}, gpus, None)
        assert host.mappings == {'nvidia-108': ['0000:84:00.0',
                                                '0000:85:00.0']}
        assert host.selected == {'nvidia-108': {
            '10de:1db4': ['0000:84:00.0', '0000:85:00.0']}}
        assert host.unmatched == [] and host.absent == []

    def test_the_subsystem_narrows_a_selector(self):
        gpus = [gpu('0000:84:00.0')._replace(ids=V100),
                gpu('0000:85:00.0')._replace(ids='10de:1db4:10de:1249')]
        host = mappings.for_host({'nvidia-108': [V100]}, gpus, None)
        assert host.mappings == {'nvidia-108': ['0000:84:00.0']}

    def test_a_selector_matching_nothing_here_is_reported_not_refused(self):
        host = mappings.for_host(
            {'nvidia-222': ['10de:1eb8']},
            [gpu('0000:84:00.0')._replace(ids=V100)], None)
        assert host.mappings == {}
        assert host.unmatched == ['10de:1eb8']
        assert host.problems == []

    def test_a_collision_through_a_selector_names_it_and_the_gpu(self):
        host = mappings.for_host(
            {'nvidia-105': ['0000:84:00.0'], 'nvidia-108': ['10de:1db4']},
            [gpu('0000:84:00.0')._replace(ids=V100)], None)
        assert host.problems == [
            '0000:84:00.0 is claimed by both nvidia-105 and nvidia-108 '
            '(through 10de:1db4 matching 0000:84:00.0); a device offers one '
            'type']

    def test_a_selector_on_sriov_gpus_gives_their_vfs(self):
        a100 = gpu('0000:41:00.0', '0000:41:00.4', '0000:41:00.5')._replace(
            ids='10de:20b5:10de:1533')
        host = mappings.for_host({'nvidia-697': ['10de:20b5']}, [a100], None)
        assert host.mappings == {'nvidia-697': ['0000:41:00.4',
                                                '0000:41:00.5']}
        assert host.sriov_gpus == {'nvidia-697': ['0000:41:00.0']}


class TestOnlyPrintableAscii:
    """Python's '$' matches before a final newline: every grammar must
    hold for the whole string, and any other character is refused by
    name and place (issue: one pasted newline stopped nova-compute)."""

    @pytest.mark.parametrize('text, where, character', [
        # JSON escapes: the parsed value holds the real character
        ('{"nvidia-108\\n": ["0000:84:00.0"]}',
         "the vGPU type 'nvidia-108\\n'", "'\\n' (U+000A"),
        ('{"nvidia-108": ["0000:84:00.0\\n"]}',
         "the entry '0000:84:00.0\\n' under 'nvidia-108'", "'\\n' (U+000A"),
        ('{"nvidia-108": ["10de:1db4\\n"]}',
         "the entry '10de:1db4\\n' under 'nvidia-108'", "'\\n' (U+000A"),
        ('{"nvidia-108": ["0000:84:00.0\\r"]}', "the entry",
         "'\\r' (U+000D"),
        ('{"nvidia-108": ["0000:84:00.0\\t"]}', "the entry",
         "'\\t' (U+0009"),
        ('{"nvidia-108": ["\\u00000000:84:00.0"]}', "the entry",
         "'\\x00' (U+0000, a control character) at character 1"),
        ('{"nvidia-108\\u0000": ["0000:84:00.0"]}', "the vGPU type",
         "'\\x00' (U+0000"),
        # YAML double-quoted escapes and a block scalar's final newline
        ('nvidia-108: ["0000:84:00.0\\x85"]', "the entry",
         "'\\x85' (U+0085"),
        ('nvidia-108: ["0000:84:00.0\\_"]', "the entry",
         "'\\xa0' (U+00A0, NO-BREAK SPACE)"),
        ('nvidia-108:\n- |\n  0000:84:00.0\n',
         "the entry '0000:84:00.0\\n'", "'\\n' (U+000A"),
        # look-alikes: non-ASCII digits and dashes, a byte-order mark
        ('{"nvidia\u2013108": ["0000:84:00.0"]}', "the vGPU type",
         "'\\u2013' (U+2013, EN DASH) at character 7"),
        ('{"nvidia-\u0661\u0660\u0668": ["0000:84:00.0"]}', "the vGPU type",
         "'\\u0661' (U+0661, ARABIC-INDIC DIGIT ONE)"),
        ('{"nvidia-108": ["0000:84:00.\uff10"]}', "the entry",
         "'\\uff10' (U+FF10, FULLWIDTH DIGIT ZERO)"),
        ('{"nvidia-108": ["\ufeff0000:84:00.0"]}', "the entry",
         "'\\ufeff' (U+FEFF, ZERO WIDTH NO-BREAK SPACE)"),
        # profile names: the same rule, the same messages
        ('{"A40\u20132Q": ["0000:84:00.0"]}', "the vGPU type",
         "'\\u2013' (U+2013, EN DASH) at character 4"),
        ('{"V100-8Q\\n": ["0000:84:00.0"]}', "the vGPU type 'V100-8Q\\n'",
         "'\\n' (U+000A"),
        ('{"A100D-1-10C\\u00a0": ["0000:41:00.0"]}', "the vGPU type",
         "'\\xa0' (U+00A0, NO-BREAK SPACE) at character 12"),
        ('{"L40S-\uff12Q": ["0000:41:00.0"]}', "the vGPU type",
         "'\\uff12' (U+FF12, FULLWIDTH DIGIT TWO)"),
    ])
    def test_the_character_and_where_it_is_are_named(self, text, where,
                                                     character):
        with pytest.raises(MappingError) as error:
            parse(text)
        message = str(error.value)
        assert where in message and character in message
        assert 'printable ASCII only' in message
        # the status line itself stays one line of printable ASCII
        assert all(' ' <= c <= '~' for c in message)

    @pytest.mark.parametrize('pattern, valid', [
        (names.TYPE_ID, 'nvidia-108'),
        (names.PROFILE, 'V100-8Q'),
        (names.PROFILE, 'A100D-1-10C'),
        (names.MIG_BACKED, 'A100D-1-10C'),
        (names.PCI_ADDRESS, '0000:84:00.0'),
        (names.SELECTOR, '10de:1db4'),
        (names.SELECTOR, '10de:1db4:10de:1214'),
    ])
    def test_no_grammar_accepts_a_final_newline(self, pattern, valid):
        assert pattern.fullmatch(valid)
        for suffix in ('\n', '\r\n', ' ', '\x00'):
            assert not pattern.fullmatch(valid + suffix)

    def test_comments_may_hold_any_text(self):
        assert parse('# GRID V100-8Q \u2013 caf\u00e9\n'
                     'nvidia-108: [0000:84:00.0]  # \u2705\n') == {
            'nvidia-108': ['0000:84:00.0']}

    @pytest.mark.parametrize('text', ['\x1c', ' \x1f ', '\x00'])
    def test_only_blank_text_means_no_types(self, text):
        # str.strip() strips '\x1c' and '\x1f' too, YAML refuses them
        with pytest.raises(MappingError):
            parse(text)


class TestProfileNames:
    """NVIDIA's profile names as keys, as its drivers print them after
    "GRID " or "NVIDIA " (names from vgpuConfig tables, NVIDIA's user
    guides and creatable_vgpu_types listings)."""

    REAL = ['M60-0B', 'M10-8A', 'M60-2B4', 'P40-24Q', 'P100C-12Q', 'T4-16C',
            'V100-8Q', 'V100D-32Q', 'V100DX-1B4', 'RTX6000-4Q',
            'RTX8000P-48C', 'RTXA5000-24Q', 'A10-4C', 'A16-1B', 'A2-16Q',
            'A40-2Q', 'A100-40C', 'A100-1-5CME', 'A100D-1-10C',
            'A100DX-7-80C', 'A30-1-6CME', 'L4-24Q', 'L40S-2Q',
            'RTX6000-Ada-4Q', 'H100XM-1-10C', 'H200-7-141C', 'DC-4-96Q',
            'DC-1-24CGFX']

    @pytest.mark.parametrize('name', REAL)
    def test_real_profile_names_are_keys(self, name):
        assert parse("{'%s': ['0000:84:00.0']}" % name) == {
            name: ['0000:84:00.0']}

    @pytest.mark.parametrize('key', [
        'V100-8', 'V100-Q', 'V100-8X', 'V100-08Q', 'V100-8QQ', 'V100--8Q',
        '-8Q', 'V100', 'V100-8Q-', 'A100D-0-10C', 'A100D-10-10C',
        'A100D-1-10CM', 'v100-8Q', 'V100-8q', '100-8Q', 'V100_8Q',
        'V100-8Q:', 'V100 8Q', 'A40-2Q,A40-4Q', 'A40-2Q]\n', 'A40-2Q=1',
        'V100-80000Q', 'ABCDEFGHIJKLMNOPQ-1Q'])
    def test_anything_else_is_refused(self, key):
        with pytest.raises(MappingError):
            parse(json.dumps({key: ['0000:84:00.0']}))
        assert not names.PROFILE.fullmatch(key)

    @pytest.mark.parametrize('key, hint', [
        ('GRID V100-8Q', 'without the driver\'s prefix, e.g. V100-8Q'),
        ('NVIDIA A40-2Q', 'without the driver\'s prefix, e.g. A40-2Q'),
        ('a40-2q', "in NVIDIA's capitals"),
        ('v100d-32Q', "in NVIDIA's capitals"),
        ('V100-8', 'or by profile name V100-8Q'),
    ])
    def test_the_message_says_what_form_is_meant(self, key, hint):
        with pytest.raises(MappingError) as error:
            parse(json.dumps({key: ['0000:84:00.0']}))
        assert hint in str(error.value)
        assert ascii(key) in str(error.value)

    def test_profile_names_may_share_an_address(self):
        """One value for hosts with a V100 here, or an A40, or a T4."""
        assert parse("{'V100-8Q': ['0000:84:00.0'], "
                     "'A40-2Q': ['0000:84:00.0'], "
                     "'T4-4Q': ['0000:84:00.0']}") == {
            'A40-2Q': ['0000:84:00.0'], 'T4-4Q': ['0000:84:00.0'],
            'V100-8Q': ['0000:84:00.0']}

    @pytest.mark.parametrize('text, message', [
        ("{'V100-8Q': ['0000:84:00.0'], 'nvidia-108': ['0000:84:00.0']}",
         '0000:84:00.0 is listed under both V100-8Q and nvidia-108'),
        ("{'nvidia-108': ['0000:84:00.0'], 'V100-8Q': ['0000:84:00.0']}",
         '0000:84:00.0 is listed under both nvidia-108 and V100-8Q'),
        ("{'V100-8Q': ['0000:84:00.0'], 'V100-8Q': ['0000:85:00.0']}",
         "'V100-8Q' is given twice"),
    ])
    def test_a_type_id_still_owns_its_address(self, text, message):
        with pytest.raises(MappingError) as error:
            parse(text)
        assert message in str(error.value)
