"""mig-layout (nvidia_vgpu.mig.layout): what reaches nvidia-smi's command
line is only well-formed GPU instance profiles and counts, and a layout
a GPU cannot hold is refused naming the profile and what fits."""
import pytest

from nvidia_vgpu import model, names
from nvidia_vgpu.mig import layout
from nvidia_vgpu.mig.layout import LayoutError, parse

# NVIDIA's H100 80GB profiles (MIG User Guide, "Supported MIG Profiles").
H100 = [model.GiProfile(19, '1g.10gb', 7, 7),
        model.GiProfile(15, '1g.20gb', 4, 4),
        model.GiProfile(14, '2g.20gb', 3, 3),
        model.GiProfile(9, '3g.40gb', 2, 2),
        model.GiProfile(5, '4g.40gb', 1, 1),
        model.GiProfile(0, '7g.80gb', 1, 1)]


@pytest.mark.parametrize('text,expected', [
    ('', {}),
    ('  \n', {}),
    ("{'10de:2330': {'1g.10gb': 4, '3g.40gb': 1}}",
     {'10de:2330': {'3g.40gb': 1, '1g.10gb': 4}}),
    # JSON, an address, capital hex, mig-parted's variants.
    ('{"0000:41:00.0": {"1g.10gb+me": 1, "2g.20gb": 3}}',
     {'0000:41:00.0': {'2g.20gb': 3, '1g.10gb+me': 1}}),
    ("0000:C1:00.0:\n  7g.141gb: 1\n", {'0000:c1:00.0': {'7g.141gb': 1}}),
    ("{'10de:2901': {'1g.23gb': 7}}", {'10de:2901': {'1g.23gb': 7}}),
    ("{'10de:2bb5': {'1g.24gb+gfx': 4, '1g.24gb-me': 0}}", None),
])
def test_layouts_as_mig_parted_writes_them(text, expected):
    if expected is None:
        with pytest.raises(LayoutError):
            parse(text)
    else:
        assert parse(text) == expected


@pytest.mark.parametrize('text,message', [
    ("['10de:2330']", 'expected a mapping of GPU to GPU instance profiles'),
    ("{'10de:2330': ['1g.10gb']}",
     'the value of 10de:2330 must map GPU instance profiles to counts'),
    ("{'10de:2330': {}}", 'must map GPU instance profiles to counts'),
    ("{'8086:2330': {'1g.10gb': 1}}", "'8086:2330' is not a full PCI"),
    ("{'0000:41:00': {'1g.10gb': 1}}", "'0000:41:00' is not a full PCI"),
    ("{'10de:2330': {'1g.10GB': 1}}",
     "'1g.10GB' of 10de:2330 is not a GPU instance profile"),
    ("{'10de:2330': {'8g.80gb': 1}}", "'8g.80gb' of 10de:2330 is not"),
    ("{'10de:2330': {'1g.10gb': 8}}",
     "the count of 1g.10gb on 10de:2330 is '8'; it must be a number from 1 "
     "to 7"),
    ("{'10de:2330': {'1g.10gb': 0}}", "is '0'; it must be a number"),
    ('{"10de:2330": {"1g.10gb": "2\\n"}}', "is '2\\n'"),
    ("{'10de:2330': {'1g.10gb': 2.0}}", "is '2.0'"),
    ("{'10de:2330': {'1g.10gb': [1]}}", 'must be text, not a list'),
    ("{'10de:2330': {'1g.10gb': 4, '3g.40gb': 2}}",
     'the GPU instances of 10de:2330 take 10 compute slices; a GPU has 7'),
    ("{'10de:2330': {'1g.10gb': 1}, '10DE:2330': {'1g.10gb': 1}}",
     '10de:2330 is given twice'),
    ('{"10de:2330": {"1g.10gb\\n": 1}}',
     "holds '\\n' (U+000A, a control character) at character 8"),
    ('{"10de:2330": {"1g.10gb": 1, "1g.10gb": 2}}',
     '1g.10gb is given twice under 10de:2330'),
    ("!!python/object:os.system {}", 'YAML tags are not allowed'),
    ("{'10de:2330': {'1g.10gb': 1}", 'not valid YAML or JSON'),
])
def test_refused_layouts_say_what_is_wrong(text, message):
    with pytest.raises(LayoutError) as refused:
        parse(text)
    assert str(refused.value).startswith('Invalid mig-layout: ')
    assert message in str(refused.value)


def test_a_layout_fits_a_gpu_whose_profiles_hold_it():
    assert layout.fit('0000:41:00.0', {'3g.40gb': 1, '1g.10gb': 4},
                      H100) is None


def test_a_profile_the_gpu_lacks_is_named_with_what_it_has():
    assert layout.fit('0000:41:00.0', {'1g.5gb': 1}, H100) == (
        'GPU 0000:41:00.0 has no GPU instance profile 1g.5gb; it has '
        '1g.10gb (up to 7), 1g.20gb (up to 4), 2g.20gb (up to 3), '
        '3g.40gb (up to 2), 4g.40gb (up to 1), 7g.80gb (up to 1)')


def test_more_instances_than_the_gpu_holds_are_refused():
    assert layout.fit('0000:41:00.0', {'1g.20gb': 5}, H100) == (
        'GPU 0000:41:00.0 holds at most 4 GPU instances of 1g.20gb, not 5')


@pytest.mark.parametrize('name,profile', [
    ('NVIDIA H100XM-1-10C', '1g.10gb'),
    ('GRID A100D-3-40C', '3g.40gb'),
    ('NVIDIA A100-1-5CME', '1g.5gb+me'),
    ('NVIDIA H200-7-141C', '7g.141gb'),
    ('NVIDIA DC-1-24QGFX', '1g.24gb+gfx'),
    # RTX PRO 6000 Blackwell: every MIG-backed type on +gfx instances,
    # its name (vGPU 19) saying nothing of it
    ('NVIDIA RTX Pro 6000 Blackwell DC-1-24Q', '1g.24gb+gfx'),
    ('DC-2-48C', '2g.48gb+gfx'),
    ('DC-4-96A', '4g.96gb+gfx'),
    ('NVIDIA 6000D-2-84Q', '2g.84gb'),
    ('NVIDIA H100XM-4C', None),        # time-sliced
    ('GRID V100-8Q', None),
    ('', None),
])
def test_a_mig_backed_types_name_gives_its_gpu_instance_profile(name,
                                                                profile):
    assert names.gi_profile_of(name) == profile
