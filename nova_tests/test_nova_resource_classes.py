"""vgpu-resource-class=per-profile as Nova itself reads it.

The charm publishes [mdev_<type>] mdev_class (and, on NVIDIA's
vendor-specific VFIO driver, the [pci] entries' resource_class) named
after each type's profile; Nova's real LibvirtDriver and PCI tracker then
say what Placement gets and where a guest's vGPU is created. Where a
release would ignore the class (one type before Caracal, nova 29) the
charm refuses, and the cases that must fail show what Nova would do.
"""
import pytest

from charm_side import publish
from nova_host import per_gpu
from sim.host import vf_addresses
from test_nova_counts import (  # noqa: F401 (stop_nova: autouse fixture)
    A40_1, A40_2, L40S, L40S_VFS, NOBLE_VERSIONS, NOVA_COMMON, NOVA_MAJOR, a40,
    l40s, nova_on, start_nova, stop_nova, v100)

PER_PROFILE = 'per-profile'
V100_1, V100_2 = '0000:84:00.0', '0000:85:00.0'
TWO_TYPES = "{'nvidia-105': ['%s'], 'V100-8Q': ['%s']}" % (V100_1, V100_2)


def test_two_types_each_in_its_profiles_class(tmp_path, fake_commands):
    compute = nova_on(tmp_path, fake_commands, [v100(V100_1), v100(V100_2)],
                      TWO_TYPES, resource_class=PER_PROFILE)
    assert compute.report() == {V100_1: {'CUSTOM_VGPU_V100_1Q': 16},
                                V100_2: {'CUSTOM_VGPU_V100_8Q': 2}}
    # A flavor asking for the class gets a vGPU of that profile.
    assert compute.allocate(V100_2, 'CUSTOM_VGPU_V100_8Q') == [
        (V100_2, 'nvidia-108')]
    assert compute.allocate(V100_1, 'CUSTOM_VGPU_V100_1Q') == [
        (V100_1, 'nvidia-105')]


def test_two_a40s_with_two_types_each_in_its_class(tmp_path, fake_commands):
    compute = nova_on(tmp_path, fake_commands, [a40(A40_1), a40(A40_2)],
                      "{'A40-2Q': ['%s'], 'nvidia-566': ['%s']}" % (
                          A40_1, A40_2), resource_class=PER_PROFILE)
    assert per_gpu(compute.report(), compute.host) == {
        A40_1: {'CUSTOM_VGPU_A40_2Q': 24}, A40_2: {'CUSTOM_VGPU_A40_48Q': 1}}


@pytest.mark.skipif(NOVA_MAJOR < 29, reason='before Caracal Nova ignores '
                    'mdev_class with one type; the charm refuses (below)')
def test_one_type_in_its_profiles_class(tmp_path, fake_commands):
    compute = nova_on(tmp_path, fake_commands, [a40(A40_1)],
                      "{'A40-2Q': ['%s']}" % A40_1,
                      resource_class=PER_PROFILE)
    assert compute.report() == {vf: {'CUSTOM_VGPU_A40_2Q': 1}
                                for vf in vf_addresses(A40_1, 24)}
    vf = vf_addresses(A40_1, 24)[3]
    assert compute.allocate(vf, 'CUSTOM_VGPU_A40_2Q') == [(vf, 'nvidia-557')]
    # A flavor still asking for VGPU gets no vGPU here.
    assert compute.allocate(vf, 'VGPU') == []


@pytest.mark.skipif(NOVA_MAJOR >= 29, reason='Caracal and later honour it')
def test_before_caracal_one_type_is_refused_as_nova_ignores_its_class(
        tmp_path, fake_commands):
    published = publish(tmp_path, fake_commands, [a40(A40_1)],
                        "{'A40-2Q': ['%s']}" % A40_1, NOVA_COMMON,
                        resource_class=PER_PROFILE)
    assert published.status[0] == 'blocked'
    assert 'ignores [mdev_<type>] mdev_class' in published.status[1]
    assert published.relation_data == {}
    # ... because Nova would report VGPU whatever the class says.
    nova_conf = ('[devices]\nenabled_mdev_types = nvidia-557\n'
                 '[mdev_nvidia-557]\ndevice_addresses = %s\n'
                 'mdev_class = CUSTOM_VGPU_A40_2Q\n' % ','.join(
                     vf_addresses(A40_1, 24)))
    compute = start_nova(tmp_path, nova_conf, [a40(A40_1)])
    assert {rc for inventory in compute.report().values()
            for rc in inventory} == {'VGPU'}


def test_vgpu_the_default_is_what_nova_always_had(tmp_path, fake_commands):
    compute = nova_on(tmp_path, fake_commands, [v100(V100_1), v100(V100_2)],
                      TWO_TYPES, resource_class='VGPU')
    assert compute.report() == {V100_1: {'VGPU': 16}, V100_2: {'VGPU': 2}}


# ------------------------------------- NVIDIA's vendor-specific VFIO driver

@pytest.mark.skipif(NOVA_MAJOR < 31, reason='Nova takes these VFs from '
                    'Epoxy (31) on')
def test_l40s_vfs_in_the_profiles_class_through_the_alias(tmp_path,
                                                          fake_commands):
    published = publish(tmp_path, fake_commands, [l40s(L40S)], L40S_VFS,
                        NOVA_COMMON, resource_class=PER_PROFILE)
    assert published.status is None, published.status
    compute = start_nova(tmp_path, published.nova_conf, [l40s(L40S)],
                         database=True, versions=NOBLE_VERSIONS)
    compute.driver._check_pci_whitelist()   # live_migratable: accepted
    assert compute.report_pci() == {L40S: {'CUSTOM_VGPU_L40S_2Q': 2}}
    assert compute.flavor_fits(
        {'pci_passthrough:alias': 'CUSTOM_VGPU_L40S_2Q:2'})
    assert not compute.flavor_fits(
        {'pci_passthrough:alias': 'CUSTOM_VGPU_L40S_2Q:3'})
    # A flavor with only resources:<class> makes no PCI request at all:
    # Nova would claim no VF for it, which is why the flavor names the
    # alias on this path.
    assert not compute.flavor_fits({'resources:CUSTOM_VGPU_L40S_2Q': '1'})


# ------------------------------------------------- cases that must fail

@pytest.mark.skipif(NOVA_MAJOR < 29, reason='the Caracal code path')
def test_a_class_without_device_addresses_is_not_what_nova_reports(
        tmp_path, fake_commands):
    # Nova 29+ takes a type without addresses as the default for every
    # device, but reports those devices as VGPU while it looks for the
    # class in allocations: why the charm writes mdev_class only beside
    # device_addresses.
    nova_conf = ('[devices]\nenabled_mdev_types = nvidia-108\n'
                 '[mdev_nvidia-108]\nmdev_class = CUSTOM_VGPU_V100_8Q\n')
    compute = start_nova(tmp_path, nova_conf, [v100(V100_1)])
    assert compute.report() == {V100_1: {'VGPU': 2}}
    assert compute.allocate(V100_1, 'VGPU') == []
