"""MIG-backed vGPU types as Nova itself reads what the charm publishes.

On a GPU in MIG mode each VF offers every MIG-backed type, one free
instance each, while a GPU instance (GI) of the type's profile is free,
and each vGPU takes one GI (NVIDIA's documented behaviour, sim/mig.py's
model). Nova counts one vGPU per VF it is given, so the charm gives it,
per type, one VF per GI of the type's profile (plan.py _mig_instances).
These cases check, in Nova's real LibvirtDriver over a host whose
nvidia-smi (the charm's side) and node devices (Nova's side) both come
from the same MIG state (mig_host), that this makes one vGPU per GI in
Placement and that every one of them can be created.

Before Caracal (nova 28) Nova gives a host's one enabled type to every
VF offering it; the charm says which in nova_adds, and the cases check
Nova takes exactly those (as test_nova_counts does).
"""
import re

import pytest
from nova import exception

import mig_host
from charm_side import publish
from nova_host import FakeHost, NovaCompute, per_gpu
from sim.host import vf_addresses
from test_nova_counts import (  # noqa: F401 (stop_nova: autouse fixture)
    KEEPS_ONE_TYPE_TO_ITS_ADDRESSES, NOVA_COMMON, STARTED,
    beyond_the_addresses, stop_nova)

H100 = '0000:41:00.0'
H100_VFS = vf_addresses(H100, 16)
SMALL, LARGE = 'nvidia-1130', 'nvidia-1133'     # 1g.10gb, 3g.40gb
# The layout of scenarios/mig/h100-layout-each-boot.yaml
LAYOUT = {'1g.10gb': 4, '3g.40gb': 1}
LAYOUT_OPTION = "{'10de:2330': {'1g.10gb': 4, '3g.40gb': 1}}"
PER_PROFILE = 'per-profile'
SMALL_CLASS = 'CUSTOM_VGPU_H100XM_1_10C'
LARGE_CLASS = 'CUSTOM_VGPU_H100XM_3_40C'


def h100(address: str = H100) -> dict:
    """H100 80GB (Hopper) as scenarios/mig/h100-layout-each-boot.yaml has
    it: 16 VFs, a time-sliced type outside MIG mode, and in MIG mode the
    MIG-backed types of its 1g.10gb and 3g.40gb profiles."""
    def spec(name: str, framebuffer: int, max_instance: int) -> dict:
        return {'name': name, 'available_instances': 1,
                'description': 'num_heads=1, frl_config=60, framebuffer={}M,'
                ' max_resolution=4096x2160, max_instance={}'.format(
                    framebuffer, max_instance)}
    return {
        'address': address, 'vendor': '10de', 'device': '2330',
        'class': '030200', 'subsystem_vendor': '10de',
        'subsystem_device': '16c1',
        'sriov': {'total_vfs': 16, 'vf_mdev_types': {
            'nvidia-1100': spec('NVIDIA H100XM-4C', 4096, 20)}},
        'mig': {
            'mode': 'disabled', 'mode_survives_reboot': False,
            'gpu_instance_profiles': [
                {'id': 19, 'name': '1g.10gb', 'max': 7},
                {'id': 15, 'name': '1g.20gb', 'max': 4},
                {'id': 14, 'name': '2g.20gb', 'max': 3},
                {'id': 9, 'name': '3g.40gb', 'max': 2},
                {'id': 5, 'name': '4g.40gb', 'max': 1},
                {'id': 0, 'name': '7g.80gb', 'max': 1}],
            'vgpu_types': {
                '1g.10gb': {SMALL: spec('NVIDIA H100XM-1-10C', 10240, 7)},
                '3g.40gb': {LARGE: spec('NVIDIA H100XM-3-40C', 40960, 2)}}}}


def nova_on_mig(tmp_path, fake_commands, mappings, layout=None,
                layout_option=LAYOUT_OPTION, resource_class=None,
                mdevs=None, domains=None):
    """The H100 cut by its boot units, the charm's decision on it, and
    Nova started on what it rendered: (published, compute)."""
    pci = [h100()]
    mig = mig_host.cut(pci, {H100: LAYOUT if layout is None else layout})
    published = publish(tmp_path, fake_commands, pci, mappings,
                        NOVA_COMMON, mdevs=mdevs, domains=domains,
                        resource_class=resource_class, mig=mig,
                        mig_layout=layout_option)
    assert published.status is None, published.status
    # The charm read the GPU instances through nvidia-smi.
    assert ['nvidia-smi', 'mig', '-lgi'] in fake_commands.calls
    path = tmp_path / 'nova.conf'
    path.write_text(published.nova_conf)
    compute = NovaCompute(str(path), FakeHost(pci, mdevs, mig=mig))
    compute.setUp()
    STARTED.append(compute)
    assert beyond_the_addresses(compute, published.nova_conf) == sorted(
        device for devices in published.nova_adds.values()
        for device in devices)
    return published, compute


def device_addresses(nova_conf):
    """type -> the devices its [mdev_<type>] device_addresses lists."""
    return {vgpu_type: addresses.split(',') for vgpu_type, addresses in
            re.findall(r'(?ms)^\[mdev_([^\]]+)\]\n(?:[^\[]*?\n)?'
                       r'device_addresses = ([^\n]*)$', nova_conf)}


def free_in_nova(compute, vgpu_type):
    """Free instances of the type on every device, as Nova's driver reads
    them from libvirt's node devices."""
    return {device['dev_id']: device['types'][vgpu_type][
        'availableInstances'] for device in
        compute.driver._get_mdev_capable_devices(types=[vgpu_type])}


def gis_taken(compute):
    """vGPU -> the profile of the GI it took, on the H100."""
    return mig_host.gi_users(compute.host.pci, compute.host.mig,
                             compute.host.mdevs, H100)


# -------------------------------------------------- one MIG-backed type

@pytest.mark.parametrize('named', ['H100XM-1-10C', SMALL])
def test_one_vgpu_per_gi_of_the_mapped_profile(tmp_path, fake_commands,
                                               named):
    published, compute = nova_on_mig(
        tmp_path, fake_commands, "{'%s': ['%s']}" % (named, H100))
    # The charm gives Nova one VF per 1g.10gb GI: 4 of the 16.
    given = device_addresses(published.nova_conf)
    assert given == {SMALL: H100_VFS[:4]}
    # Nova: 4 vGPUs on the GPU, one per VF (before Caracal: every VF
    # offering the type, as the charm's status says).
    offered = 4 if KEEPS_ONE_TYPE_TO_ITS_ADDRESSES else 16
    report = compute.report()
    assert report == {vf: {'VGPU': 1} for vf in H100_VFS[:offered]}
    assert per_gpu(report, compute.host) == {H100: {'VGPU': offered}}
    # Each can be created, on its own VF, each taking its own GI.
    for vf in given[SMALL]:
        assert compute.allocate(vf) == [(vf, SMALL)]
    assert sorted(gis_taken(compute).values()) == ['1g.10gb'] * 4
    # None is left: no VF offers a fifth, and Nova counts the 4 it has
    # (before Caracal the 12 other VFs keep their last inventory of 1:
    # Nova never reports a total of 0, so they stay in Placement).
    assert set(free_in_nova(compute, SMALL).values()) == {0}
    assert per_gpu(compute.report(), compute.host) == {
        H100: {'VGPU': offered}}
    # Before Caracal Placement offered 12 more: guests sent there fail.
    for vf in H100_VFS[4:offered]:
        with pytest.raises(exception.ComputeResourcesUnavailable):
            compute.allocate(vf)


def test_no_gi_of_the_profile_no_vgpu(tmp_path, fake_commands):
    # Cut into 3g.40gb GIs alone: nothing of the 1g.10gb type anywhere.
    published, compute = nova_on_mig(
        tmp_path, fake_commands, "{'%s': ['%s']}" % (SMALL, H100),
        layout={'3g.40gb': 2},
        layout_option="{'10de:2330': {'3g.40gb': 2}}")
    assert SMALL not in device_addresses(published.nova_conf)
    assert compute.report() == {}
    assert set(free_in_nova(compute, SMALL).values()) == {0}


def test_a_gi_a_guest_has_stays_with_its_vf(tmp_path, fake_commands):
    # A guest has a 1g.10gb vGPU on the 11th VF (an earlier mapping): it
    # keeps that VF, and the three GIs left go to three more.
    in_use = H100_VFS[10]
    uuid = '4b20d080-1b54-4048-85b3-a6a62d165c01'
    mdevs = [{'uuid': uuid, 'parent': in_use, 'type': SMALL}]
    published, compute = nova_on_mig(
        tmp_path, fake_commands, "{'%s': ['%s']}" % (SMALL, H100),
        mdevs=mdevs, domains=[{'name': 'instance-0000002a',
                               'mdevs': [uuid]}])
    given = device_addresses(published.nova_conf)[SMALL]
    assert given == H100_VFS[:3] + [in_use]
    if KEEPS_ONE_TYPE_TO_ITS_ADDRESSES:
        assert compute.report() == {vf: {'VGPU': 1} for vf in given}
    for vf in H100_VFS[:3]:
        assert compute.allocate(vf) == [(vf, SMALL)]
    assert sorted(gis_taken(compute).values()) == ['1g.10gb'] * 4
    assert set(free_in_nova(compute, SMALL).values()) == {0}


# ----------------------------------------- two MIG-backed types, one GPU

@pytest.mark.parametrize('resource_class', [None, PER_PROFILE])
def test_mixed_layout_one_vgpu_per_gi_of_each_profile(
        tmp_path, fake_commands, resource_class):
    published, compute = nova_on_mig(
        tmp_path, fake_commands,
        "{'H100XM-1-10C': ['10de:2330'], 'H100XM-3-40C': ['10de:2330']}",
        resource_class=resource_class)
    given = device_addresses(published.nova_conf)
    # One VF per GI of each profile, no VF given both types.
    assert sorted(given) == [SMALL, LARGE]
    assert (len(given[SMALL]), len(given[LARGE])) == (4, 1)
    assert not set(given[SMALL]) & set(given[LARGE])
    small, large = (SMALL_CLASS, LARGE_CLASS) if resource_class else (
        'VGPU', 'VGPU')
    assert compute.report() == dict(
        {vf: {small: 1} for vf in given[SMALL]},
        **{vf: {large: 1} for vf in given[LARGE]})
    for vf in given[SMALL]:
        assert compute.allocate(vf, small) == [(vf, SMALL)]
    assert compute.allocate(given[LARGE][0], large) == [
        (given[LARGE][0], LARGE)]
    assert sorted(gis_taken(compute).values()) == [
        '1g.10gb'] * 4 + ['3g.40gb']
    for vgpu_type in (SMALL, LARGE):
        assert set(free_in_nova(compute, vgpu_type).values()) == {0}
