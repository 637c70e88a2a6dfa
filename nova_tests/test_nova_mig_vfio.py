"""MIG-backed vGPU on NVIDIA's vendor-specific VFIO driver, as Nova 31 and
later take what the charm publishes.

There a vGPU is a VF given a type, which holds a GPU instance (GI) of the
type's profile, and a VF lists a MIG-backed type only while a GI of its
profile is free (the simulator's model, sim/mig.py). Nova takes each
typed VF as a PCI device, through [pci] device_spec, in the class the
charm gives its type, and a flavor asks for the type's alias. These cases
check, in Nova's own PCI tracker and alias handling, that the size gets
one device per GI, that a flavor gets no more than the GPU holds, and
why the charm gives a GPU one type on this driver: Nova refuses a GPU's
VFs in two resource classes.
"""
import pytest

import mig_host
from charm_side import publish
from sim.host import vf_addresses
from test_nova_counts import (  # noqa: F401 (stop_nova: autouse fixture)
    NOBLE_VERSIONS, NOVA_COMMON, NOVA_MAJOR, start_nova, stop_nova)

H100 = '0000:41:00.0'
H100_VFS = vf_addresses(H100, 16)
SMALL_CLASS = 'CUSTOM_VGPU_H100XM_1_10C'
LARGE_CLASS = 'CUSTOM_VGPU_H100XM_3_40C'
# The layout and mappings of scenarios/mig/h100-vfio-noble-epoxy.yaml
LAYOUT = {'1g.10gb': 7}
LAYOUT_OPTION = "{'10de:2330': {'1g.10gb': 7}}"
SMALL = "{'H100XM-1-10C': ['10de:2330']}"

pytestmark = pytest.mark.skipif(
    NOVA_MAJOR < 31, reason='Nova takes typed VFs from Epoxy (31) on')


def h100_vfio() -> dict:
    """The H100 SXM5 80GB of the scenario, on the vendor-specific VFIO
    driver: each VF's creatable_vgpu_types, a time-sliced type outside
    MIG mode, and in MIG mode the MIG-backed types of two profiles."""
    return {
        'address': H100, 'vendor': '10de', 'device': '2330',
        'class': '030200', 'subsystem_vendor': '10de',
        'subsystem_device': '16c1',
        'sriov': {'total_vfs': 16,
                  'vf_vgpu_types': {1100: 'NVIDIA H100XM-4C'}},
        'mig': {
            'mode': 'disabled', 'mode_survives_reboot': False,
            'gpu_instance_profiles': [
                {'id': 19, 'name': '1g.10gb', 'max': 7},
                {'id': 9, 'name': '3g.40gb', 'max': 2},
                {'id': 0, 'name': '7g.80gb', 'max': 1}],
            'vgpu_types': {'1g.10gb': {1130: 'NVIDIA H100XM-1-10C'},
                           '3g.40gb': {1133: 'NVIDIA H100XM-3-40C'}}}}


def nova_on_mig_vfio(tmp_path, fake_commands, mappings=SMALL):
    """The H100 cut as its boot units cut it, the charm's decision, and
    Nova started on what it rendered, its PCI tracker reading the VFs."""
    pci = [h100_vfio()]
    mig = mig_host.cut(pci, {H100: LAYOUT})
    published = publish(tmp_path, fake_commands, pci, mappings, NOVA_COMMON,
                        resource_class='per-profile', mig=mig,
                        mig_layout=LAYOUT_OPTION)
    assert published.status is None, published.status
    compute = start_nova(tmp_path, published.nova_conf, pci, database=True,
                         versions=NOBLE_VERSIONS)
    return published, compute


def test_the_size_gets_one_device_per_gpu_instance(tmp_path, fake_commands):
    _, compute = nova_on_mig_vfio(tmp_path, fake_commands)
    assert compute.report() == {}          # nothing through mdev
    assert compute.report_pci() == {H100: {SMALL_CLASS: 7}}


@pytest.mark.parametrize('count, fits', [(1, True), (7, True), (8, False)])
def test_a_flavor_gets_no_more_than_the_gpu_instances(
        tmp_path, fake_commands, count, fits):
    _, compute = nova_on_mig_vfio(tmp_path, fake_commands)
    compute.report_pci()
    assert compute.flavor_fits({'pci_passthrough:alias': '{}:{}'.format(
        SMALL_CLASS, count)}) is fits


def test_nova_refuses_a_gpu_s_vfs_in_two_classes(tmp_path, fake_commands):
    """What the charm refuses to publish (nova/plan.py,
    _check_one_type_per_vfio_gpu): two sizes' typed VFs on one GPU, in
    their two classes, stop nova-compute's updates of Placement."""
    from nova import exception
    pci = [h100_vfio()]
    vfs = ['0000:41:00.4', '0000:41:00.5']
    conf = '\n'.join(['[pci]', 'report_in_placement = True'] + [
        'device_spec = {{"address": "{}", "managed": "no", "product_id": '
        '"2330", "resource_class": "{}", "vendor_id": "10de"}}'.format(
            vf, rc) for vf, rc in zip(vfs, (SMALL_CLASS, LARGE_CLASS))]) + '\n'
    compute = start_nova(tmp_path, conf, pci, database=True,
                         versions=NOBLE_VERSIONS)
    with pytest.raises(exception.PlacementPciMixedResourceClassException):
        compute.report_pci()
    # The charm, asked for both, publishes nothing and says why.
    mig = mig_host.cut(pci, {H100: {'1g.10gb': 4, '3g.40gb': 1}})
    published = publish(
        tmp_path, fake_commands, pci,
        "{'H100XM-1-10C': ['10de:2330'], 'H100XM-3-40C': ['10de:2330']}",
        NOVA_COMMON, resource_class='per-profile', mig=mig,
        mig_layout="{'10de:2330': {'1g.10gb': 4, '3g.40gb': 1}}")
    assert published.relation_data == {}
    assert published.status[0] == 'blocked'
    assert 'under one resource class and refuses two' in published.status[1]


# An RTX PRO 6000 Blackwell (scenarios/mig/rtx-pro-6000-vfio-noble.yaml;
# docs/facts/blackwell-mig.md): DC-1-3Q runs eight to a 1g.24gb+gfx GPU
# instance, which only the driver's supported-types report says (its
# type numbers are stand-ins there and here).
RTX_PRO_6000 = '0000:c1:00.0'
DC_1_3Q_CLASS = 'CUSTOM_VGPU_DC_1_3Q'


def rtx_pro_6000_vfio() -> dict:
    return {
        'address': RTX_PRO_6000, 'vendor': '10de', 'device': '2bb5',
        'class': '030200',
        'sriov': {'total_vfs': 48, 'vf_vgpu_types': {
            90100: 'NVIDIA RTX Pro 6000 Blackwell DC-48Q'}},
        'mig': {
            'mode': 'disabled', 'slices': 4,
            'gpu_instance_profiles': [
                {'id': 47, 'name': '1g.24gb+gfx', 'max': 4},
                {'id': 35, 'name': '2g.48gb+gfx', 'max': 2}],
            'vgpu_types': {'1g.24gb+gfx': {
                90106: 'NVIDIA RTX Pro 6000 Blackwell DC-1-3Q'}},
            'vgpu_types_per_gi': {90106: 8}}}


@pytest.mark.parametrize('count, fits', [(2, True), (32, True), (33, False)])
def test_blackwell_time_sliced_on_mig_gives_eight_devices_per_instance(
        tmp_path, fake_commands, count, fits):
    pci = [rtx_pro_6000_vfio()]
    mig = mig_host.cut(pci, {RTX_PRO_6000: {'1g.24gb+gfx': 4}})
    published = publish(tmp_path, fake_commands, pci,
                        "{'DC-1-3Q': ['10de:2bb5']}", NOVA_COMMON,
                        resource_class='per-profile', mig=mig,
                        mig_layout="{'10de:2bb5': {'1g.24gb+gfx': 4}}")
    assert published.status is None, published.status
    compute = start_nova(tmp_path, published.nova_conf, pci, database=True,
                         versions=NOBLE_VERSIONS)
    # (Nova's fake libvirt names the GPU in capitals: 0000:C1:00.0.)
    assert {gpu.lower(): classes for gpu, classes in
            compute.report_pci().items()} == {
        RTX_PRO_6000: {DC_1_3Q_CLASS: 32}}
    assert compute.flavor_fits({'pci_passthrough:alias': '{}:{}'.format(
        DC_1_3Q_CLASS, count)}) is fits
