"""What nova-compute renders from the published data, per release family,
checked through the consumer itself: charmhelpers' SubordinateConfigContext
(as charm-nova-compute configures it) reading fake relation data."""

import json

import pytest

from nova_consumer import consume, published, render, render_text
from nvidia_vgpu.nova import mappings, nova_config

WANTED = mappings.parse("{'nvidia-35': ['0000:84:00.0', '0000:85:00.0'], "
                        "'nvidia-36': ['0000:86:00.0']}")
ONE_TYPE = mappings.parse("{'nvidia-108': ['0000:84:00.0']}")


@pytest.mark.parametrize('options, wanted, expected', [
    (nova_config.QUEENS, ONE_TYPE,
     {'devices': {'enabled_vgpu_types': 'nvidia-108'}}),
    (nova_config.USSURI, ONE_TYPE,
     {'devices': {'enabled_vgpu_types': 'nvidia-108'},
      'vgpu_nvidia-108': {'device_addresses': '0000:84:00.0'}}),
    (nova_config.USSURI, WANTED,
     {'devices': {'enabled_vgpu_types': 'nvidia-35, nvidia-36'},
      'vgpu_nvidia-35': {'device_addresses': '0000:84:00.0,0000:85:00.0'},
      'vgpu_nvidia-36': {'device_addresses': '0000:86:00.0'}}),
    (nova_config.XENA, WANTED,
     {'devices': {'enabled_mdev_types': 'nvidia-35, nvidia-36'},
      'mdev_nvidia-35': {'device_addresses': '0000:84:00.0,0000:85:00.0'},
      'mdev_nvidia-36': {'device_addresses': '0000:86:00.0'}}),
])
def test_nova_compute_renders_exactly_the_expected_sections(
        fake_commands, options, wanted, expected):
    context = consume(fake_commands,
                      published(nova_config.nova_sections(wanted, options)))
    assert set(context) == {'sections'}
    assert render(context) == expected


def test_the_blob_has_one_service_one_file_and_only_sections():
    blob = nova_config.subordinate_configuration(
        nova_config.nova_sections(WANTED, nova_config.XENA))
    assert list(blob) == ['nova']
    assert list(blob['nova']) == ['/etc/nova/nova.conf']
    assert list(blob['nova']['/etc/nova/nova.conf']) == ['sections']


def test_nothing_to_configure_publishes_no_sections(fake_commands):
    # charm-nova-compute's own charmhelpers treats empty sections as an
    # incomplete context, so other subordinates' sections stay; PyPI
    # charmhelpers 1.2.1 still returns them empty, never anything else.
    context = consume(fake_commands, published(
        nova_config.nova_sections({}, nova_config.XENA)))
    assert not context.get('sections')
    assert render(context) == {}


def test_values_that_passed_validation_cannot_add_sections_or_keys(
        fake_commands):
    # Every type and address that parse() lets through renders as one
    # key in its own section; the corpus of refused values is in
    # test_mappings.py.
    wanted = mappings.parse(
        "{'nvidia-99999': ['ffff:ff:1f.7'], 'nvidia-1': ['0000:00:00.0']}")
    rendered = render(consume(fake_commands, published(
        nova_config.nova_sections(wanted, nova_config.XENA))))
    assert rendered == {
        'devices': {'enabled_mdev_types': 'nvidia-1, nvidia-99999'},
        'mdev_nvidia-1': {'device_addresses': '0000:00:00.0'},
        'mdev_nvidia-99999': {'device_addresses': 'ffff:ff:1f.7'}}


def test_sriov_vfs_get_no_max_instances_on_any_release(fake_commands):
    # Each SR-IOV GPU's VFs are already cut down to its capacity
    # (capacity.py); a host-wide cap would add nothing.
    wanted = {'nvidia-697': ['0000:41:00.4', '0000:41:00.5'],
              'nvidia-35': ['0000:84:00.0']}
    for options in (nova_config.XENA, nova_config.CARACAL,
                    nova_config.EPOXY):
        context = consume(fake_commands, published(nova_config.nova_sections(
            wanted, options)))
        assert render(context) == {
            'devices': {'enabled_mdev_types': 'nvidia-697, nvidia-35'},
            'mdev_nvidia-697': {
                'device_addresses': '0000:41:00.4,0000:41:00.5'},
            'mdev_nvidia-35': {'device_addresses': '0000:84:00.0'}}


def test_pci_passthrough_entries_for_typed_vfs(fake_commands):
    entries = nova_config.pci_passthrough_section({
        'nvidia-1148': [('0000:41:00.4', '26b9'), ('0000:41:00.5', '26b9')]})
    context = consume(fake_commands, published({'pci': entries}))
    text = render_text(context)
    # device_spec is a multi-valued option: one line per VF, all in [pci].
    assert text.splitlines()[:5] == [
        '[pci]',
        'device_spec = {"address": "0000:41:00.4", "managed": "no", '
        '"product_id": "26b9", "resource_class": "CUSTOM_NVIDIA_1148", '
        '"vendor_id": "10de"}',
        'device_spec = {"address": "0000:41:00.5", "managed": "no", '
        '"product_id": "26b9", "resource_class": "CUSTOM_NVIDIA_1148", '
        '"vendor_id": "10de"}',
        'alias = {"device_type": "type-VF", "name": "nvidia-1148", '
        '"product_id": "26b9", "resource_class": "CUSTOM_NVIDIA_1148", '
        '"vendor_id": "10de"}',
        'report_in_placement = True']


def test_live_migratable_typed_vfs(fake_commands):
    """Where the host's libvirt and QEMU allow it, every device_spec and
    every alias say live_migratable "yes" (Nova live-migrates a guest's
    VF only where both say so), in the same sorted JSON."""
    entries = nova_config.pci_passthrough_section({
        'nvidia-1148': [('0000:41:00.4', '26b9'), ('0000:41:00.5', '26b9')],
        'nvidia-1155': [('0000:41:00.6', '26b9')]},
        live_migratable=True)
    text = render_text(consume(fake_commands, published({'pci': entries})))
    assert text.splitlines()[:7] == [
        '[pci]',
        'device_spec = {"address": "0000:41:00.4", "live_migratable": '
        '"yes", "managed": "no", "product_id": "26b9", "resource_class": '
        '"CUSTOM_NVIDIA_1148", "vendor_id": "10de"}',
        'device_spec = {"address": "0000:41:00.5", "live_migratable": '
        '"yes", "managed": "no", "product_id": "26b9", "resource_class": '
        '"CUSTOM_NVIDIA_1148", "vendor_id": "10de"}',
        'device_spec = {"address": "0000:41:00.6", "live_migratable": '
        '"yes", "managed": "no", "product_id": "26b9", "resource_class": '
        '"CUSTOM_NVIDIA_1155", "vendor_id": "10de"}',
        'alias = {"device_type": "type-VF", "live_migratable": "yes", '
        '"name": "nvidia-1148", "product_id": "26b9", "resource_class": '
        '"CUSTOM_NVIDIA_1148", "vendor_id": "10de"}',
        'alias = {"device_type": "type-VF", "live_migratable": "yes", '
        '"name": "nvidia-1155", "product_id": "26b9", "resource_class": '
        '"CUSTOM_NVIDIA_1155", "vendor_id": "10de"}',
        'report_in_placement = True']


def test_never_live_migratable_no(fake_commands):
    """Where it does not hold, no tag at all: any value, "no" included,
    makes nova-compute check libvirt's and QEMU's versions at start."""
    vfs = {'nvidia-1148': [('0000:41:00.4', '26b9')]}
    assert nova_config.pci_passthrough_section(vfs) == \
        nova_config.pci_passthrough_section(vfs, live_migratable=False)
    assert 'live_migratable' not in json.dumps(
        nova_config.pci_passthrough_section(vfs))


def test_no_typed_vfs_no_pci_entries():
    assert nova_config.pci_passthrough_section({}) == []
    assert nova_config.pci_passthrough_section(
        {}, live_migratable=True) == []


def test_per_profile_classes_render_beside_their_addresses(fake_commands):
    classes = {'nvidia-35': 'CUSTOM_VGPU_A40_2Q', 'nvidia-36': 'VGPU'}
    for options in (nova_config.XENA, nova_config.CARACAL,
                    nova_config.EPOXY):
        context = consume(fake_commands, published(
            nova_config.nova_sections(WANTED, options, classes)))
        # VGPU is Nova's default: left out, as the charm always has.
        assert render(context) == {
            'devices': {'enabled_mdev_types': 'nvidia-35, nvidia-36'},
            'mdev_nvidia-35': {
                'device_addresses': '0000:84:00.0,0000:85:00.0',
                'mdev_class': 'CUSTOM_VGPU_A40_2Q'},
            'mdev_nvidia-36': {'device_addresses': '0000:86:00.0'}}


def test_the_default_class_publishes_exactly_what_it_did():
    for options in (nova_config.XENA, nova_config.CARACAL):
        assert nova_config.nova_sections(WANTED, options, {
            'nvidia-35': 'VGPU', 'nvidia-36': 'VGPU'}) == \
            nova_config.nova_sections(WANTED, options)


def test_no_mdev_class_where_nova_has_none():
    with pytest.raises(ValueError):
        nova_config.nova_sections(WANTED, nova_config.USSURI,
                                  {'nvidia-35': 'CUSTOM_VGPU_V100_8Q'})


@pytest.mark.parametrize('options, honoured_from', [
    ('QUEENS', None), ('USSURI', None), ('XENA', 2), ('CARACAL', 1),
    ('EPOXY', 1)])
def test_how_many_types_each_release_needs_for_mdev_class(options,
                                                          honoured_from):
    assert getattr(nova_config, options).mdev_class_types == honoured_from


def test_pci_entries_under_a_profile_class(fake_commands):
    entries = nova_config.pci_passthrough_section(
        {'nvidia-1148': [('0000:41:00.4', '26b9')]},
        {'nvidia-1148': ('CUSTOM_VGPU_L40S_2Q', 'CUSTOM_VGPU_L40S_2Q')})
    text = render_text(consume(fake_commands, published({'pci': entries})))
    assert text.splitlines()[:4] == [
        '[pci]',
        'device_spec = {"address": "0000:41:00.4", "managed": "no", '
        '"product_id": "26b9", "resource_class": "CUSTOM_VGPU_L40S_2Q", '
        '"vendor_id": "10de"}',
        'alias = {"device_type": "type-VF", "name": "CUSTOM_VGPU_L40S_2Q", '
        '"product_id": "26b9", "resource_class": "CUSTOM_VGPU_L40S_2Q", '
        '"vendor_id": "10de"}',
        'report_in_placement = True']


# ------------------- before Caracal, one type goes to every device offering it

V100_HOST = {'0000:84:00.0': ['nvidia-105', 'nvidia-108'],
             '0000:85:00.0': ['nvidia-105', 'nvidia-108'],
             '0000:86:00.0': ['nvidia-222']}


@pytest.mark.parametrize('options', ['QUEENS', 'USSURI', 'XENA'])
def test_before_caracal_one_type_reaches_every_gpu_offering_it(options):
    adds = nova_config.devices_nova_adds(
        {'nvidia-108': ['0000:85:00.0']}, getattr(nova_config, options),
        V100_HOST)
    # Not the T4 at 86:00.0: it does not offer nvidia-108.
    assert adds == {'nvidia-108': ['0000:84:00.0']}


@pytest.mark.parametrize('options', ['CARACAL', 'EPOXY'])
def test_from_caracal_nova_keeps_one_type_to_its_addresses(options):
    assert nova_config.devices_nova_adds(
        {'nvidia-108': ['0000:85:00.0']}, getattr(nova_config, options),
        V100_HOST) == {}


def test_two_types_keep_to_their_addresses_on_every_release():
    for options in (nova_config.USSURI, nova_config.XENA):
        assert nova_config.devices_nova_adds(
            {'nvidia-105': ['0000:84:00.0'], 'nvidia-108': ['0000:85:00.0']},
            options, V100_HOST) == {}


def test_every_gpu_mapped_leaves_nova_nothing_to_add():
    assert nova_config.devices_nova_adds(
        {'nvidia-108': ['0000:84:00.0', '0000:85:00.0']}, nova_config.XENA,
        V100_HOST) == {}
    assert nova_config.devices_nova_adds({}, nova_config.XENA,
                                         V100_HOST) == {}


def test_vfs_beyond_capacity_are_counted_per_gpu():
    vfs = ['0000:51:00.{}'.format(n) for n in range(4, 8)] + \
        ['0000:51:01.{}'.format(n) for n in range(8)]
    offered = {vf: ['nvidia-557', 'nvidia-566'] for vf in vfs}
    offered['0000:51:00.0'] = []   # the PF of an SR-IOV GPU offers none
    gpu_of = {vf: '0000:51:00.0' for vf in vfs}
    adds = nova_config.devices_nova_adds({'nvidia-557': vfs[:9]},
                                         nova_config.XENA, offered)
    assert adds == {'nvidia-557': vfs[9:]}
    assert nova_config.adds_summary(adds, gpu_of) == [
        'Nova also gives nvidia-557 to 3 VFs of 0000:51:00.0 (before '
        'Caracal, Nova gives a host\'s only vGPU type to every device '
        'offering it: give another GPU here a second type, or upgrade)']


def test_a_whole_gpu_is_named_by_its_address():
    assert nova_config.adds_summary(
        {'nvidia-108': ['0000:84:00.0']}, {'0000:84:00.0': '0000:84:00.0'}
    )[0].startswith('Nova also gives nvidia-108 to 0000:84:00.0 (')
    assert nova_config.adds_summary({}, {}) == []
