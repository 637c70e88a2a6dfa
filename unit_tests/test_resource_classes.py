"""The Placement resource class of each vGPU type (resource_classes.py):
the option's two values, the class named after the profile, what each
Nova release honours, and what waits for guests."""
import pytest

from nvidia_vgpu.nova import nova_config, resource_classes as rc
from nvidia_vgpu.model import VgpuInUse
from nvidia_vgpu import model


# ------------------------------------------------------------ the option

@pytest.mark.parametrize('value, expected', [
    ('VGPU', 'VGPU'), ('per-profile', 'per-profile'),
    (None, 'VGPU'),   # a config without the option: the default
])
def test_the_two_values(value, expected):
    assert rc.choice(value) == expected


@pytest.mark.parametrize('value', [
    'vgpu', 'Per-Profile', 'per_profile', ' VGPU', 'VGPU\n', '',
    'CUSTOM_VGPU_A40_2Q', 'per-profile,VGPU', 'x' * 500,
])
def test_anything_else_is_refused_naming_both_values(value):
    with pytest.raises(rc.ResourceClassError) as raised:
        rc.choice(value)
    message = str(raised.value)
    assert message.startswith('Invalid vgpu-resource-class: ')
    assert 'VGPU (' in message and 'per-profile (' in message
    assert '\n' not in message and len(message) < 250


# ------------------------------------------------------ the class names

@pytest.mark.parametrize('profile, expected', [
    ('A40-2Q', 'CUSTOM_VGPU_A40_2Q'),
    ('V100-8Q', 'CUSTOM_VGPU_V100_8Q'),
    ('A100D-1-10C', 'CUSTOM_VGPU_A100D_1_10C'),
    ('RTX6000-Ada-4Q', 'CUSTOM_VGPU_RTX6000_ADA_4Q'),
    ('M60-0Q', 'CUSTOM_VGPU_M60_0Q'),
    ('DC-1-24CGFX', 'CUSTOM_VGPU_DC_1_24CGFX'),
])
def test_a_class_per_profile_within_novas_own_check(profile, expected):
    name = rc.profile_class(profile)
    assert name == expected
    assert rc.NOVA_MDEV_CLASS.fullmatch(name) and len(name) <= 255


@pytest.mark.parametrize('text', [
    'NVIDIA A40-2Q', 'a40-2q', 'A40-2Q]', 'A40-2Q\nmdev_class = X', '',
    'CUSTOM_X'])
def test_only_a_profile_name_makes_a_class(text):
    with pytest.raises(ValueError):
        rc.profile_class(text)


def test_the_same_profile_on_every_driver_branch_is_one_class():
    # GRID (older branches) and NVIDIA (newer) name the same profile.
    assert rc.for_type('per-profile', 'nvidia-558', 'GRID A40-2Q', False) \
        == rc.for_type('per-profile', 'nvidia-557', 'NVIDIA A40-2Q', False)


@pytest.mark.parametrize('chosen, vgpu_type, name, vfio, expected', [
    ('VGPU', 'nvidia-108', 'GRID V100-8Q', False,
     ('V100-8Q', 'VGPU', 'resources:VGPU=1')),
    ('per-profile', 'nvidia-108', 'GRID V100-8Q', False,
     ('V100-8Q', 'CUSTOM_VGPU_V100_8Q', 'resources:CUSTOM_VGPU_V100_8Q=1')),
    # Vendor-specific VFIO: a PCI device, asked for through its alias.
    ('VGPU', 'nvidia-1148', 'NVIDIA L40S-2Q', True,
     ('L40S-2Q', 'CUSTOM_NVIDIA_1148',
      'pci_passthrough:alias=nvidia-1148:1')),
    ('per-profile', 'nvidia-1148', 'NVIDIA L40S-2Q', True,
     ('L40S-2Q', 'CUSTOM_VGPU_L40S_2Q',
      'pci_passthrough:alias=CUSTOM_VGPU_L40S_2Q:1')),
    # A name without a profile: VGPU still works, per-profile has none.
    ('VGPU', 'nvidia-9', 'Something odd', False,
     (None, 'VGPU', 'resources:VGPU=1')),
    ('per-profile', 'nvidia-9', 'Something odd', False, (None, None, None)),
])
def test_what_list_vgpu_types_shows(chosen, vgpu_type, name, vfio, expected):
    assert tuple(rc.for_type(chosen, vgpu_type, name, vfio)) == expected


# ----------------------------------------------------------- on a host

A40 = {'0000:51:00.4': {'nvidia-557': 'NVIDIA A40-2Q',
                        'nvidia-566': 'NVIDIA A40-48Q'},
       '0000:52:00.4': {'nvidia-557': 'NVIDIA A40-2Q',
                        'nvidia-566': 'NVIDIA A40-48Q'}}
L40S = {'0000:41:00.4': {'nvidia-1148': 'NVIDIA L40S-2Q'}}


def test_vgpu_publishes_what_the_charm_always_has():
    found = rc.for_host('VGPU', ['nvidia-557'], ['nvidia-1148'], None)
    assert found == rc.HostClasses({'nvidia-557': 'VGPU',
                                    'nvidia-1148': 'CUSTOM_NVIDIA_1148'})


def test_per_profile_names_each_type_from_the_driver():
    found = rc.for_host('per-profile', ['nvidia-566', 'nvidia-557'],
                        ['nvidia-1148'], dict(A40, **L40S))
    assert found == rc.HostClasses({
        'nvidia-557': 'CUSTOM_VGPU_A40_2Q',
        'nvidia-566': 'CUSTOM_VGPU_A40_48Q',
        'nvidia-1148': 'CUSTOM_VGPU_L40S_2Q'})


def test_before_the_driver_runs_nothing_is_guessed():
    found = rc.for_host('per-profile', ['nvidia-557'], [], None)
    assert found == rc.HostClasses({}, ['nvidia-557'])
    # A type no device names (an id that is not this host's).
    found = rc.for_host('per-profile', ['nvidia-557', 'nvidia-9'], [], A40)
    assert found.unnamed == ['nvidia-9']
    assert found.classes == {'nvidia-557': 'CUSTOM_VGPU_A40_2Q'}


def test_a_name_without_a_profile_is_a_problem_not_a_guess():
    found = rc.for_host('per-profile', ['nvidia-557'], [], {
        '0000:51:00.4': {'nvidia-557': 'NVIDIA A40 2 GB'}})
    assert found.classes == {}
    assert found.problems == [
        "the NVIDIA driver names nvidia-557 'NVIDIA A40 2 GB', which is no "
        'vGPU profile name: no one vGPU profile to name its resource class '
        'after; set vgpu-resource-class=VGPU']


def test_one_type_two_profiles_is_a_problem():
    found = rc.for_host('per-profile', ['nvidia-557'], [], {
        '0000:51:00.4': {'nvidia-557': 'NVIDIA A40-2Q'},
        '0000:52:00.4': {'nvidia-557': 'NVIDIA A10-2Q'}})
    assert found.classes == {}
    assert len(found.problems) == 1 and 'not one profile' in \
        found.problems[0]


# -------------------------------------------------- what Nova honours

@pytest.mark.parametrize('options, version, types, refused', [
    ('QUEENS', '2:17.0.13-0ubuntu5', 1, 'OpenStack Queens (nova 17.0.13) '
     'does not have'),
    ('USSURI', '3:23.2.2-0ubuntu1~cloud0', 2, 'OpenStack Wallaby (nova '
     '23.2.2) does not have'),
    ('USSURI', '3:23.2.2-0ubuntu1~cloud0', 0, 'OpenStack Wallaby'),
    ('XENA', '3:24.2.1-0ubuntu1~cloud0', 1, 'OpenStack Xena (nova 24.2.1) '
     'ignores [mdev_<type>] mdev_class on a host with only 1 vGPU type'),
    ('XENA', '3:28.3.1-0ubuntu1~cloud0', 1, 'OpenStack Bobcat (nova '
     '28.3.1) ignores'),
    ('XENA', '3:25.2.1-0ubuntu2', 2, None),
    ('XENA', '3:25.2.1-0ubuntu2', 0, None),   # nothing to publish yet
    ('CARACAL', '3:29.2.0-0ubuntu1', 1, None),
    ('EPOXY', '3:34.0.0-0ubuntu1', 1, None),
])
def test_per_profile_is_refused_where_nova_would_ignore_it(
        options, version, types, refused):
    options = getattr(nova_config, options)
    assert rc.refusal('VGPU', options, version, types) is None
    message = rc.refusal('per-profile', options, version, types)
    if refused is None:
        assert message is None
    else:
        assert message.startswith('Invalid vgpu-resource-class: ')
        assert refused in message
        assert 'use VGPU' in message and 'Caracal' in message


# -------------------------------------------- guests keep their class

def vgpu(device, vgpu_type, *guests):
    return VgpuInUse(device, vgpu_type, list(guests))


WANTED = {'nvidia-557': 'CUSTOM_VGPU_A40_2Q',
          'nvidia-566': 'CUSTOM_VGPU_A40_48Q'}


def test_a_type_guests_use_keeps_its_class_until_they_are_gone():
    published = {'nvidia-557': 'VGPU', 'nvidia-566': 'VGPU'}
    effective, held = rc.hold_for_guests(
        WANTED, published, [vgpu('0000:52:00.4', 'nvidia-566', 'i-2', 'i-1')],
        [])
    assert effective == {'nvidia-557': 'CUSTOM_VGPU_A40_2Q',
                         'nvidia-566': 'VGPU'}
    assert held == [model.HeldClass('nvidia-566', 'VGPU',
                                    'CUSTOM_VGPU_A40_48Q', ['i-1', 'i-2'])]
    assert rc.held_message(held) == (
        'Change of vgpu-resource-class waits for guests using vGPUs: '
        'nvidia-566 keeps VGPU for i-1, i-2 (wanted: CUSTOM_VGPU_A40_48Q); '
        'it applies once they are gone (migrate, resize, shelve-offload or '
        'delete them; a stopped guest keeps its vGPU)')
    # Gone: the change applies.
    assert rc.hold_for_guests(WANTED, published, [], []) == (WANTED, [])


def test_without_a_record_nova_had_the_defaults():
    # Published by a charm revision before classes: VGPU on mdev, the
    # type's own class on vendor-specific VFIO.
    wanted = dict(WANTED, **{'nvidia-1148': 'CUSTOM_VGPU_L40S_2Q'})
    effective, held = rc.hold_for_guests(
        wanted, None, [vgpu('0000:51:00.4', 'nvidia-557', 'i-1'),
                       vgpu('0000:41:00.4', 'nvidia-1148', 'i-3')],
        ['nvidia-1148'])
    assert effective == {'nvidia-557': 'VGPU',
                         'nvidia-566': 'CUSTOM_VGPU_A40_48Q',
                         'nvidia-1148': 'CUSTOM_NVIDIA_1148'}
    assert [item.vgpu_type for item in held] == ['nvidia-557', 'nvidia-1148']


def test_an_unchanged_class_or_a_new_type_does_not_wait():
    published = {'nvidia-557': 'CUSTOM_VGPU_A40_2Q'}
    effective, held = rc.hold_for_guests(
        WANTED, published, [vgpu('0000:51:00.4', 'nvidia-557', 'i-1'),
                            vgpu('0000:52:00.4', 'nvidia-566', 'i-2')], [])
    assert (effective, held) == (WANTED, [])


def test_the_status_names_classes_only_per_profile():
    assert rc.summary('VGPU', {'nvidia-557': 'VGPU'}) == []
    assert rc.summary('per-profile', {
        'nvidia-566': 'CUSTOM_VGPU_A40_48Q',
        'nvidia-557': 'CUSTOM_VGPU_A40_2Q'}) == [
        'nvidia-557 as CUSTOM_VGPU_A40_2Q',
        'nvidia-566 as CUSTOM_VGPU_A40_48Q']
