"""What Nova gets from an RTX PRO 6000 Blackwell in MIG mode on NVIDIA's
vendor-specific VFIO driver (issue 36, item 4): its MIG-backed types run
on +gfx GPU instances, and its time-sliced-on-MIG types put several vGPUs
on one instance. The instance profile and the count per instance are the
driver's ("GPU Instance Profile ID", "Max Instances Per GI" in
`nvidia-smi vgpu -s -v`), not derived from the name: DC-1-3Q is 3 GB,
eight to a 1g.24gb+gfx instance, not a 1g.3gb instance.

Data (docs/facts/blackwell-mig.md): 10de:2bb5, GPU instance profile 47
is 1g.24gb+gfx on this board, four of them; per card NVIDIA allows 4
DC-1-24Q and 32 DC-1-3Q, so 1 and 8 per instance. No source gives these
types' numbers reliably (third-party files disagree), so the type ids
below are stand-ins: nothing here depends on their values.
"""
import pytest

from nvidia_vgpu import model
from nvidia_vgpu.host import snapshot as host_snapshot, supported_types
from nvidia_vgpu.nova import plan, type_listing
from snapshots import EPOXY, NOBLE, function, rules, vf_addresses

GPU = '0000:38:00.0'
VFS = vf_addresses(GPU, 48)
WHOLE_GI, SHARED_GI = 'nvidia-90001', 'nvidia-90002'   # stand-in ids
NAMES = {WHOLE_GI: 'NVIDIA RTX Pro 6000 Blackwell DC-1-24Q',
         SHARED_GI: 'NVIDIA RTX Pro 6000 Blackwell DC-1-3Q'}
GFX_1G = model.GiProfile(47, '1g.24gb+gfx', 0, 4)
FOUR_GIS = tuple(model.GpuInstance(number, 47, '1g.24gb+gfx',
                                   '{}:3'.format(3 * (number - 1)))
                 for number in range(1, 5))
FITS = {(GPU, WHOLE_GI): model.GiFit(47, 1),
        (GPU, SHARED_GI): model.GiFit(47, 8)}


def rtx_pro_6000(fits=FITS):
    """The GPU cut into four 1g.24gb+gfx instances, none held yet: every
    VF lists both types, as the driver does while there is room."""
    offered = {GPU: {}}
    offered.update({vf: dict(NAMES) for vf in VFS})
    return model.HostSnapshot(
        # no subsystem: no capture found gives it
        (function(GPU, '2bb5', '', ''),),
        (model.HostGpu(GPU, True, VFS, True, '10de:2bb5', 48),),
        '580.105.06', EPOXY,
        offered=host_snapshot.with_typed_vfs(offered, {}, {}),
        vf_device_ids={vf: '2bb5' for vf in VFS},
        libvirt_version=NOBLE[0], qemu_version=NOBLE[1],
        mig={GPU: model.MigGpu(GPU, 0, 'Enabled', 'Enabled', (GFX_1G,),
                               FOUR_GIS)},
        gi_fits=fits)


def vfs_given(snapshot, profile_name):
    decided = plan.plan_nova(snapshot, "{'%s': ['10de:2bb5']}" % (
        profile_name), None, rules(EPOXY), None, None)
    return decided, {vgpu_type: len(vfs)
                     for vgpu_type, vfs in decided.vf_types.items()}


@pytest.mark.parametrize('profile_name, vgpu_type, vfs', [
    ('DC-1-24Q', WHOLE_GI, 4),      # one per +gfx instance
    ('DC-1-3Q', SHARED_GI, 32),     # eight per +gfx instance
])
def test_nova_gets_one_vf_per_vgpu_the_instances_hold(
        profile_name, vgpu_type, vfs):
    decided, given = vfs_given(rtx_pro_6000(), profile_name)
    assert decided.problem is None, decided.problem
    assert given == {vgpu_type: vfs}


def test_the_name_alone_would_size_dc_1_3q_wrong_so_nothing_is_offered():
    """Without the driver's word (nvidia-smi did not answer), DC-1-3Q's
    name says a 1g.3gb+gfx instance, which this GPU has none of: Nova is
    offered nothing rather than VFs that could not be typed."""
    decided, given = vfs_given(rtx_pro_6000(fits={}), 'DC-1-3Q')
    assert given == {}


def test_the_fields_are_read_from_nvidia_smi():
    text = ('GPU 00000000:38:00.0\n'
            '    vGPU Type ID                          : 0x5ee\n'
            '        Name                              : NVIDIA RTX Pro 6000 '
            'Blackwell DC-2B\n'
            '        GPU Instance Profile ID           : N/A\n'
            '        Max Instances                     : 32\n'
            '        Max Instances Per GI              : N/A\n'
            '    vGPU Type ID                          : 0x15f91\n'
            '        Name                              : NVIDIA RTX Pro 6000 '
            'Blackwell DC-1-3Q\n'
            '        GPU Instance Profile ID           : 47\n'
            '        Max Instances Per GI              : 8\n')
    # By id, and by profile name, as the mappings may give either.
    assert supported_types.parse_gi_fits(text) == {
        (GPU, 'nvidia-90001'): model.GiFit(47, 8),
        (GPU, 'DC-1-3Q'): model.GiFit(47, 8)}


def test_a_name_its_instances_offer_nowhere_is_sized_by_the_driver():
    """DC-1-3Q mapped to a GPU cut into 2g.48gb+gfx instances: no VF
    offers it, and the status names the instance it needs as the driver
    gives it (1g.24gb+gfx), not the 1g.3gb+gfx its name suggests and no
    board has."""
    two_gis = tuple(model.GpuInstance(number, 35, '2g.48gb+gfx',
                                      '{}:6'.format(6 * (number - 1)))
                    for number in (1, 2))
    snapshot = rtx_pro_6000({(GPU, 'DC-1-3Q'): model.GiFit(47, 8)})
    snapshot = snapshot._replace(
        offered={vf: {} for vf in VFS},
        mig={GPU: model.MigGpu(GPU, 0, 'Enabled', 'Enabled', (
            GFX_1G, model.GiProfile(35, '2g.48gb+gfx', 0, 2)), two_gis)})
    decided, given = vfs_given(snapshot, 'DC-1-3Q')
    assert given == {}
    assert decided.without_instances == [('DC-1-3Q', '1g.24gb+gfx', GPU)]


@pytest.mark.parametrize('fits, available, mig_line', [
    (FITS, 32, 'MIG on 0000:38:00.0: enabled; GPU instances: 1g.24gb+gfx '
               'x4 giving DC-1-24Q (nvidia-90001), DC-1-3Q (nvidia-90002)'),
    # Where nvidia-smi says nothing, the name's 1g.3gb+gfx has no
    # instance here: none available, and the line gives it no size.
    ({}, 0, 'MIG on 0000:38:00.0: enabled; GPU instances: 1g.24gb+gfx x4 '
            'giving DC-1-24Q (nvidia-90001)'),
])
def test_list_vgpu_types_counts_what_the_instances_hold(
        fits, available, mig_line):
    """list-vgpu-types follows the same rule as the plan (mig/fits.py):
    DC-1-3Q available 32 times on four instances, as Nova is given."""
    snapshot = rtx_pro_6000(fits)
    results = type_listing.listing(
        type_listing.offered_types(snapshot), 'per-profile',
        mig=snapshot.mig, gi_fits=fits)
    rows = {row['profile']: row for row in results['types']}
    assert rows['DC-1-3Q']['available_instances'] == available
    assert rows['DC-1-24Q']['available_instances'] == 4
    assert results['output'].splitlines()[-1] == mig_line
