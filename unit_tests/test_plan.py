"""What Nova gets from a host, and what the unit says, in tables.

Each case is a host written by hand (model.HostSnapshot: V100s with mdev
on the GPU, A100s and A40s with mdev on SR-IOV VFs, an L40S on NVIDIA's
vendor-specific VFIO driver, guests on any of them), the operator's
options, what was published before, and the release's Nova; the plan
(nova/plan.py) and the statuses (status.py) are checked for what an
operator sees: nova.conf's sections as nova-compute gets them, the
refusal, what waits for guests, what Nova adds, each SR-IOV GPU's
capacity, and the unit's status line. Where a case mirrors a shipped
scenario (scenarios/), its values are that scenario's recorded output
(unit_tests/data/scenario_outputs/), named beside the case.

The simulator keeps one end-to-end story per capability; the rules live
here, a few milliseconds each.
"""
from typing import Dict, NamedTuple, Optional, Tuple

import pytest

from nvidia_vgpu import model, status
from nvidia_vgpu.nova import families, guest_safety, plan
from snapshots import (
    A100_MIG, A100_VFS, A40_51, A40_52, A40S, CARACAL, EPOXY, GUEST_A,
    GUEST_B, H100_VFS, L40S_VFS, NOBLE_LIBVIRT, NOBLE_QEMU, QUEENS,
    QUEENS_REASON, USSURI, USSURI_REASON, V100_16C, V100S, VICTORIA,
    VICTORIA_BEFORE_FIX, WALLABY, YOGA, a100, a40, h100, host, in_mig_mode,
    l40s, pci, queens, rules, shut_off, t4, ussuri, v100, vf_addresses,
    with_mdev_guests, with_vf_guests, xena)
# The charm module, freshly imported, and nova-common as dpkg reports it.


# An H100 cut as mig-layout {'1g.10gb': 4, '3g.40gb': 1} asks, and both
# of its MIG-backed sizes given to Nova.
H100_CARACAL = host(h100(), nova=CARACAL)
H100_GIS = ('1g.10gb',) * 4 + ('3g.40gb',)
H100_BOTH_SIZES = ("{'H100XM-1-10C': ['10de:2330'], "
                   "'H100XM-3-40C': ['10de:2330']}")
H100_READY = ('1 NVIDIA GPU (H100 SXM5 80GB); 16 SR-IOV VFs; nvidia-1130: '
              '4 vGPUs on 1 GPU; nvidia-1133: 1 vGPU on 1 GPU')
H100_BOTH_NAMED = ('; H100XM-1-10C is nvidia-1130; H100XM-3-40C is '
                   'nvidia-1133; nvidia-1130 on 1 GPU (10de:2330); '
                   'nvidia-1133 on 1 GPU (10de:2330)')
H100_BOTH_CAPACITY = {'nvidia-1130': {'0000:41:00.0': 4},
                      'nvidia-1133': {'0000:41:00.0': 1}}


# ------------------------------------------------------- the outcome

def unit_status(snapshot: model.HostSnapshot,
                nova_plan: model.NovaPlan) -> Tuple[str, str]:
    """The unit's status as the charm class puts it together once
    nothing outside the plan blocks (software installed, its driver
    running, the relation there and holding what the plan publishes)."""
    if nova_plan.problem:
        return nova_plan.problem
    return status.waiting_or_ready(snapshot, nova_plan, None, [], True)


def outcome(snapshot: model.HostSnapshot,
            nova_plan: model.NovaPlan) -> Dict[str, object]:
    """What an operator can see of a plan."""
    return {
        'sections': nova_plan.sections,
        'status': unit_status(snapshot, nova_plan),
        'held': [(held.gpu, held.keeps, held.wants, held.guests)
                 for held in nova_plan.held],
        'held_whole_host': nova_plan.held_whole_host,
        'class_held': [tuple(held) for held in nova_plan.class_held],
        'nova_adds': nova_plan.nova_adds,
        'sriov_capacity': nova_plan.sriov_capacity,
        'waiting': nova_plan.waiting,
        # vendor-specific VFIO: the type each VF is given (boot unit)
        'vf_types': nova_plan.vf_types,
    }


# What a case expects unless it says otherwise: nothing waits or is
# added; 'sections' and 'status' are always given.
QUIET = {'held': [], 'held_whole_host': False, 'class_held': [],
         'nova_adds': {}, 'sriov_capacity': {}, 'waiting': [],
         'vf_types': {}}


class Case(NamedTuple):
    """The plan's inputs, and what is expected of it (outcome's keys)."""

    snapshot: model.HostSnapshot
    mappings: Optional[str]
    expected: Dict[str, object]
    resource_class: Optional[str] = None
    published: Optional[model.Mappings] = None
    published_classes: Optional[Dict[str, str]] = None


def case(name: str, snapshot: model.HostSnapshot, mappings: Optional[str],
         sections: Optional[dict], state: Tuple[str, str], **more):
    """A named table row: the host, the option, nova.conf's sections
    (None: Nova keeps what it has) and the unit's status; more: the
    other expectations, and resource_class / published /
    published_classes for the plan's other inputs."""
    inputs = {key: more.pop(key) for key in (
        'resource_class', 'published', 'published_classes') if key in more}
    unknown = set(more) - set(QUIET)
    assert not unknown, unknown
    expected = dict(QUIET, sections=sections, status=state, **more)
    return pytest.param(Case(snapshot, mappings, expected, **inputs),
                        id=name)


def ready(message: str) -> Tuple[str, str]:
    return 'active', 'Unit is ready: ' + message


def blocked(message: str) -> Tuple[str, str]:
    return 'blocked', message


V100_READY = '2 NVIDIA GPUs (Tesla V100 PCIe 16GB)'
NOTHING_FOR_V100S = (
    'This GPU host gives Nova no vGPU: {}. Its GPUs: 0000:84:00.0 (10de:1db4, '
    'Tesla V100 PCIe 16GB), 0000:85:00.0 (10de:1db4, Tesla V100 PCIe 16GB); '
    'map them in vgpu-device-mappings (list-vgpu-types shows the types each '
    'offers)')
NOVA_ADDS = (' (before Caracal, Nova gives a host\'s only vGPU type to '
             'every device offering it: give another GPU here a second '
             'type, or upgrade)')
HELD = ('Change of vgpu-device-mappings waits for guests using vGPUs: {}; '
        'it applies once they are gone (migrate, resize, shelve-offload or '
        'delete them; a stopped guest keeps its vGPU)')
TWO_TYPES = ('Invalid vgpu-device-mappings: 2 vGPU types on this host, but '
             '{} (nova {}); keep one type, or upgrade to Victoria (nova '
             '22.2.1) or later')
V100_TWO = "{'nvidia-108': ['0000:84:00.0'], 'nvidia-105': ['0000:85:00.0']}"
L40S_VFS_FOUND = '1 NVIDIA GPU (device 10de:26b9); {} SR-IOV VFs'
# Typed VFs published live_migratable (noble's libvirt and QEMU, or newer)
L40S_READY = L40S_VFS_FOUND + '; typed VFs live-migratable'
NOT_MIGRATABLE = (
    'Typed VFs not live-migratable (this host has {}; Nova needs libvirt '
    '10.0.0 and QEMU 8.2.2): guests on them cannot be live-migrated until {} '
    'upgraded; ')

CASES = [
    # ------------------------------------------------- nova, releases
    # nova-config/waiting-for-nova.yaml, steps 0-5 and 6
    case('nova not installed: waits, publishes nothing',
         host(v100('0000:84:00.0'), v100('0000:85:00.0'), nova=None),
         "{'nvidia-108': ['0000:84:00.0']}", None,
         ('waiting', 'Waiting for nova-compute to install nova-common')),
    case('nova installed: one GPU of two, caracal',
         host(v100('0000:84:00.0'), v100('0000:85:00.0'), nova=CARACAL),
         "{'nvidia-108': ['0000:84:00.0']}",
         xena(('nvidia-108', ['0000:84:00.0'])), ready(V100_READY)),
    case('no option: nova gets no types, the GPU host says so', V100S, '',
         {}, blocked(NOTHING_FOR_V100S.format(
             'vgpu-device-mappings names no type for them'))),
    case('a selector of another board: the same, naming it', V100S,
         "{'H100XM-1-10C': ['10de:2330']}", {}, blocked(
             NOTHING_FOR_V100S.format('no GPU here matches 10de:2330'))),
    case('no GPU here: nothing for nova, whatever the option',
         host(nova=CARACAL), "{'nvidia-108': ['0000:84:00.0']}", {},
         ready('no NVIDIA GPU on this host')),
    # nova-config/queens-two-types.yaml, steps 0-2 and 3
    case('queens: two types refused naming the release',
         host(v100('0000:84:00.0'), v100('0000:85:00.0'), nova=QUEENS),
         V100_TWO, None, blocked(TWO_TYPES.format(QUEENS_REASON, '17.0.13'))),
    case('queens: one type, no addresses',
         host(v100('0000:84:00.0'), v100('0000:85:00.0'), nova=QUEENS),
         "{'nvidia-108': ['0000:84:00.0', '0000:85:00.0']}",
         queens('nvidia-108'), ready(V100_READY)),
    case('ussuri: two types refused naming the nova bug',
         host(v100('0000:84:00.0'), v100('0000:85:00.0'), nova=USSURI),
         V100_TWO, None, blocked(TWO_TYPES.format(USSURI_REASON, '21.2.4'))),
    # series/ussuri-focal.yaml
    case('ussuri: one type in its vgpu_ group',
         host(v100('0000:84:00.0'), v100('0000:85:00.0'), nova=USSURI),
         "{'nvidia-108': ['0000:84:00.0', '0000:85:00.0']}",
         ussuri(('nvidia-108', ['0000:84:00.0', '0000:85:00.0'])),
         ready(V100_READY)),
    case('victoria before 22.2.1: two types refused',
         host(v100('0000:84:00.0'), v100('0000:85:00.0'),
              nova=VICTORIA_BEFORE_FIX),
         V100_TWO, None, blocked(TWO_TYPES.format(USSURI_REASON, '22.2.0'))),
    # series/victoria-focal.yaml
    case('victoria 22.2.1 on: two types',
         host(v100('0000:84:00.0'), v100('0000:85:00.0'), nova=VICTORIA),
         V100_TWO,
         ussuri(('nvidia-105', ['0000:85:00.0']),
                ('nvidia-108', ['0000:84:00.0'])), ready(V100_READY)),
    # nova-config/yoga-one-type-every-gpu.yaml, step 6
    case('xena form: two types, each to its GPU', V100S, V100_TWO,
         xena(('nvidia-105', ['0000:85:00.0']),
              ('nvidia-108', ['0000:84:00.0'])), ready(V100_READY)),
    # nova-config/yoga-one-type-every-gpu.yaml, step 4
    case('yoga, one type: nova also gives it to the other GPU', V100S,
         "{'nvidia-108': ['0000:85:00.0']}",
         xena(('nvidia-108', ['0000:85:00.0'])),
         ready(V100_READY + '; Nova also gives nvidia-108 to 0000:84:00.0'
               + NOVA_ADDS),
         nova_adds={'nvidia-108': ['0000:84:00.0']}),
    case('caracal, one type: nova keeps it to its addresses',
         host(v100('0000:84:00.0'), v100('0000:85:00.0'), nova=CARACAL),
         "{'nvidia-108': ['0000:85:00.0']}",
         xena(('nvidia-108', ['0000:85:00.0'])), ready(V100_READY)),
    case('yoga, one type the other GPU does not offer: nothing added',
         host(v100('0000:84:00.0'), v100('0000:85:00.0', {
             'nvidia-105': 'GRID V100-1Q'})),
         "{'nvidia-108': ['0000:84:00.0']}",
         xena(('nvidia-108', ['0000:84:00.0'])), ready(V100_READY)),

    # ------------------------------------------ addresses and selectors
    # nova-config/fleet-host-without-some-gpus.yaml, steps 2 and 3
    case('addresses of other hosts: left out and named',
         host(v100('0000:84:00.0', {'nvidia-108': 'GRID V100-8Q'})),
         "{'nvidia-108': ['0000:84:00.0', '0000:85:00.0'], "
         "'nvidia-105': ['0000:31:00.0']}",
         xena(('nvidia-108', ['0000:84:00.0'])),
         ready('1 NVIDIA GPU (Tesla V100 PCIe 16GB); not on this host: '
               '0000:31:00.0, 0000:85:00.0')),
    case('a type the GPU does not offer: refused naming what it offers',
         host(v100('0000:84:00.0', {'nvidia-108': 'GRID V100-8Q'})),
         "{'nvidia-222': ['0000:84:00.0']}", None,
         blocked('Invalid vgpu-device-mappings: nvidia-222 is not offered '
                 'by the GPU at 0000:84:00.0 (it offers: nvidia-108); see '
                 'the list-vgpu-types action')),
    # nova-config/hostile-values-v100.yaml, step 31
    case('a T4 type through a V100 selector: refused',
         host(v100('0000:84:00.0')), "{'nvidia-234': ['10de:1db4']}", None,
         blocked('Invalid vgpu-device-mappings: nvidia-234 is not offered '
                 'by the GPU at 0000:84:00.0 (it offers: nvidia-105, '
                 'nvidia-108); see the list-vgpu-types action')),
    case('before the driver runs no type can be checked',
         host(v100('0000:84:00.0'), driver=None),
         "{'nvidia-234': ['0000:84:00.0']}",
         xena(('nvidia-234', ['0000:84:00.0'])),
         ready('1 NVIDIA GPU (Tesla V100 PCIe 16GB)')),
    # fleet/v100-host.yaml, steps 3 and 4; fleet/t4-host.yaml
    case('fleet value on a V100 host: selectors pick its GPUs', V100S,
         "{'nvidia-108': ['10de:1db4'], 'nvidia-234': "
         "['10de:1eb8:10de:12a2'], 'nvidia-105': ['0000:86:00.0']}",
         xena(('nvidia-108', ['0000:84:00.0', '0000:85:00.0'])),
         ready(V100_READY + '; nvidia-108 on 2 GPUs (10de:1db4); no GPU '
               'here matches 10de:1eb8:10de:12a2; not on this host: '
               '0000:86:00.0')),
    case('fleet value on a T4 host: the subsystem selector',
         host(t4('0000:3b:00.0'), t4('0000:af:00.0')),
         "{'nvidia-108': ['10de:1db4'], 'nvidia-234': "
         "['10de:1eb8:10de:12a2'], 'nvidia-105': ['0000:86:00.0']}",
         xena(('nvidia-234', ['0000:3b:00.0', '0000:af:00.0'])),
         ready('2 NVIDIA GPUs (Tesla T4); nvidia-234 on 2 GPUs '
               '(10de:1eb8:10de:12a2); no GPU here matches 10de:1db4; not '
               'on this host: 0000:86:00.0')),
    case('an address and a selector claiming one GPU: refused', V100S,
         "{'nvidia-105': ['0000:84:00.0'], 'nvidia-108': ['10de:1db4']}",
         None,
         blocked('Invalid vgpu-device-mappings: 0000:84:00.0 is claimed by '
                 'both nvidia-105 and nvidia-108 (through 10de:1db4 '
                 'matching 0000:84:00.0); a device offers one type')),

    # --------------------------------------------------- profile names
    # profiles/v100-yoga.yaml, cut after start; then steps 4 and 6
    case('profile before the driver runs: waits, the type id goes',
         host(v100('0000:84:00.0', V100_16C), v100('0000:85:00.0', V100_16C),
              driver=None),
         "{'V100-8Q': ['0000:84:00.0'], 'nvidia-105': ['0000:85:00.0']}",
         xena(('nvidia-105', ['0000:85:00.0'])),
         ('waiting', 'Waiting for the NVIDIA driver to resolve vGPU profile '
          'names V100-8Q (nothing is published for them until then)')),
    case('profile resolved on a V100: V100-8Q is nvidia-108',
         host(v100('0000:84:00.0', V100_16C), v100('0000:85:00.0', V100_16C)),
         "{'V100-8Q': ['0000:84:00.0'], 'nvidia-105': ['0000:85:00.0']}",
         xena(('nvidia-105', ['0000:85:00.0']),
              ('nvidia-108', ['0000:84:00.0'])),
         ready(V100_READY + '; V100-8Q is nvidia-108')),
    case('a profile the V100 lacks: refused listing its profiles',
         host(v100('0000:84:00.0', V100_16C), v100('0000:85:00.0', V100_16C)),
         "{'V100-2Q': ['0000:84:00.0'], 'nvidia-105': ['0000:85:00.0']}",
         None,
         blocked('Invalid vgpu-device-mappings: V100-2Q is not offered by '
                 'the GPU at 0000:84:00.0 (it offers: V100-1Q, V100-8Q, '
                 'V100-16C); see the list-vgpu-types action')),
    # profiles/a100-mig-caracal.yaml
    case('MIG-backed profile on the A100s VFs, by selector',
         host(a100(types=A100_MIG), nova=CARACAL),
         "{'A100D-1-10C': ['10de:20b5']}",
         xena(('nvidia-699', A100_VFS[:7])),
         ready('1 NVIDIA GPU (A100 PCIe 80GB); 16 SR-IOV VFs; nvidia-699: 7 '
               'vGPUs on 1 GPU; A100D-1-10C is nvidia-699; nvidia-699 on 1 '
               'GPU (10de:20b5)'),
         sriov_capacity={'nvidia-699': {'0000:41:00.0': 7}}),
    case('the same name whichever prefix the driver prints',
         host(a100(types={
             type_id: (name.replace('GRID ', 'NVIDIA '), most)
             for type_id, (name, most) in A100_MIG.items()}), nova=CARACAL),
         "{'A100D-1-10C': ['10de:20b5']}",
         xena(('nvidia-699', A100_VFS[:7])),
         ready('1 NVIDIA GPU (A100 PCIe 80GB); 16 SR-IOV VFs; nvidia-699: 7 '
               'vGPUs on 1 GPU; A100D-1-10C is nvidia-699; nvidia-699 on 1 '
               'GPU (10de:20b5)'),
         sriov_capacity={'nvidia-699': {'0000:41:00.0': 7}}),
    # scenarios/mig/h100-mixed-layout.yaml
    case('MIG: two sizes share an H100 in MIG mode, each on VFs of its own',
         in_mig_mode(H100_CARACAL, *H100_GIS),
         H100_BOTH_SIZES,
         xena(('nvidia-1130', H100_VFS[:4]), ('nvidia-1133', H100_VFS[4:5])),
         ready(H100_READY + H100_BOTH_NAMED),
         sriov_capacity=H100_BOTH_CAPACITY),
    case('MIG: per-profile classes let a flavor ask for a size',
         in_mig_mode(H100_CARACAL, *H100_GIS),
         H100_BOTH_SIZES,
         xena(('nvidia-1130', H100_VFS[:4]), ('nvidia-1133', H100_VFS[4:5]),
              classes={'nvidia-1130': 'CUSTOM_VGPU_H100XM_1_10C',
                       'nvidia-1133': 'CUSTOM_VGPU_H100XM_3_40C'}),
         ready(H100_READY + '; H100XM-1-10C is nvidia-1130; H100XM-3-40C is '
               'nvidia-1133; nvidia-1130 as CUSTOM_VGPU_H100XM_1_10C; '
               'nvidia-1133 as CUSTOM_VGPU_H100XM_3_40C; nvidia-1130 on 1 GPU '
               '(10de:2330); nvidia-1133 on 1 GPU (10de:2330)'),
         resource_class='per-profile', sriov_capacity=H100_BOTH_CAPACITY),
    case('MIG: a guest\'s vGPU keeps its VF; free VFs go around it',
         with_mdev_guests(in_mig_mode(H100_CARACAL, *H100_GIS),
                          (H100_VFS[6], 'nvidia-1133', [GUEST_A])),
         H100_BOTH_SIZES,
         xena(('nvidia-1130', H100_VFS[:4]), ('nvidia-1133', [H100_VFS[6]])),
         ready(H100_READY + H100_BOTH_NAMED),
         sriov_capacity=H100_BOTH_CAPACITY),
    case('MIG: by type ids through a selector, the same',
         in_mig_mode(H100_CARACAL, *H100_GIS),
         "{'nvidia-1130': ['10de:2330'], 'nvidia-1133': ['10de:2330']}",
         xena(('nvidia-1130', H100_VFS[:4]), ('nvidia-1133', H100_VFS[4:5])),
         ready(H100_READY + '; nvidia-1130 on 1 GPU (10de:2330); nvidia-1133 '
               'on 1 GPU (10de:2330)'),
         sriov_capacity=H100_BOTH_CAPACITY),
    case('MIG: a size without GPU instances gets no VF, and the status says',
         in_mig_mode(H100_CARACAL, *H100_GIS[:4]),
         H100_BOTH_SIZES,
         xena(('nvidia-1130', H100_VFS[:4])),
         ready('1 NVIDIA GPU (H100 SXM5 80GB); 16 SR-IOV VFs; nvidia-1130: '
               '4 vGPUs on 1 GPU' + H100_BOTH_NAMED + '; nvidia-1133 gets '
               'no vGPU on 0000:41:00.0: it has no 3g.40gb GPU instance '
               '(mig-layout)'),
         sriov_capacity={'nvidia-1130': {'0000:41:00.0': 4}}),
    # Defensive: on the mdev GPUs the charm cuts each size has one type;
    # NVIDIA names C and Q types of one size for other boards (6000D).
    case('MIG: two types of one size on a GPU: refused, naming them',
         in_mig_mode(host(h100(types={
             'nvidia-1200': ('NVIDIA 6000D-1-42C', 2),
             'nvidia-1201': ('NVIDIA 6000D-1-42Q', 2)}), nova=CARACAL),
             '1g.42gb', '1g.42gb'),
         "{'6000D-1-42C': ['0000:41:00.0'], '6000D-1-42Q': ['0000:41:00.0']}",
         None,
         blocked('Invalid vgpu-device-mappings: nvidia-1200 and nvidia-1201 '
                 'both take the 1g.42gb GPU instances of 0000:41:00.0; give '
                 'it one of them')),
    case('MIG: two sizes on a GPU not in MIG mode: refused, naming the fix',
         H100_CARACAL, H100_BOTH_SIZES, None,
         blocked('Invalid vgpu-device-mappings: the GPU at 0000:41:00.0 '
                 '(through 10de:2330) offers both H100XM-1-10C and '
                 'H100XM-3-40C; a device offers one type: give it one of '
                 'them, or cut the GPU into GPU instances with mig-layout '
                 '(MIG-backed types share a GPU in MIG mode)')),
    case('MIG: two sizes where Nova takes one type: refused',
         in_mig_mode(host(h100(), nova=USSURI), *H100_GIS),
         H100_BOTH_SIZES, None,
         blocked('Invalid vgpu-device-mappings: 2 vGPU types on this host, '
                 'but ' + USSURI_REASON + ' (nova 21.2.4); keep one type, or '
                 'upgrade to Victoria (nova 22.2.1) or later')),
    # profiles/v100-and-a40-caracal.yaml, steps 4 and 6
    case('two models, each takes its own name; T4-4Q only reported',
         host(v100('0000:84:00.0'), a40('0000:41:00.0', {
             'nvidia-557': ('NVIDIA A40-1Q', 32),
             'nvidia-558': ('NVIDIA A40-2Q', 24)}), nova=CARACAL),
         "{'V100-8Q': ['0000:84:00.0'], 'T4-4Q': ['0000:84:00.0'], "
         "'A40-2Q': ['10de:2235']}",
         xena(('nvidia-108', ['0000:84:00.0']),
              ('nvidia-558', vf_addresses('0000:41:00.0', 24))),
         ready('2 NVIDIA GPUs (1 A40, 1 Tesla V100 PCIe 16GB); 32 SR-IOV '
               'VFs; nvidia-558: 24 vGPUs on 1 GPU; A40-2Q is nvidia-558; '
               'V100-8Q is nvidia-108; no GPU here offers T4-4Q; '
               'nvidia-558 on 1 GPU (10de:2235)'),
         sriov_capacity={'nvidia-558': {'0000:41:00.0': 24}}),
    case('the A40s profile on the V100: refused naming the V100s',
         host(v100('0000:84:00.0'), a40('0000:41:00.0', {
             'nvidia-557': ('NVIDIA A40-1Q', 32),
             'nvidia-558': ('NVIDIA A40-2Q', 24)}), nova=CARACAL),
         "{'A40-2Q': ['0000:84:00.0']}", None,
         blocked('Invalid vgpu-device-mappings: A40-2Q is not offered by '
                 'the GPU at 0000:84:00.0 (it offers: V100-1Q, V100-8Q); '
                 'see the list-vgpu-types action')),
    # profiles/l40s-epoxy.yaml
    case('profile on vendor-specific VFIO: read from the VFs tables',
         host(l40s(), nova=EPOXY), "{'L40S-2Q': ['0000:41:00.0']}",
         pci(L40S_VFS, 'CUSTOM_NVIDIA_1148', 'nvidia-1148'),
         ready(L40S_READY.format(8) + '; nvidia-1148: 8 vGPUs on 1 GPU; '
               'L40S-2Q is nvidia-1148'),
         vf_types={'nvidia-1148': list(L40S_VFS)},
         sriov_capacity={'nvidia-1148': {'0000:41:00.0': 8}}),

    # ---------------------------------------------------------- SR-IOV
    # sriov/a100-caracal.yaml, steps 4 and 9
    case('A100: the GPU stands for as many VFs as it hosts',
         host(a100(), nova=CARACAL), "{'nvidia-697': ['0000:41:00.0']}",
         xena(('nvidia-697', A100_VFS[:2])),
         ready('1 NVIDIA GPU (A100 PCIe 80GB); 16 SR-IOV VFs; nvidia-697: 2 '
               'vGPUs on 1 GPU'),
         sriov_capacity={'nvidia-697': {'0000:41:00.0': 2}}),
    case('A100: a VF claimed through its GPU and by address: refused',
         host(a100(), nova=CARACAL),
         "{'nvidia-697': ['0000:41:00.0'], 'nvidia-692': ['0000:41:00.5']}",
         None,
         blocked('Invalid vgpu-device-mappings: 0000:41:00.5 is claimed by '
                 'both nvidia-692 and nvidia-697 (through 0000:41:00.0); a '
                 'device offers one type')),
    # sriov/a100-yoga-vf-addresses.yaml
    case('A100 on yoga: VF addresses as written',
         host(a100()),
         "{'nvidia-692': ['0000:41:00.4', '0000:41:00.5']}",
         xena(('nvidia-692', ['0000:41:00.4', '0000:41:00.5'])),
         ready('1 NVIDIA GPU (A100 PCIe 80GB); 16 SR-IOV VFs; nvidia-692: 2 '
               'vGPUs on 1 GPU; Nova also gives nvidia-692 to 14 VFs of '
               '0000:41:00.0 (before Caracal, Nova gives a host\'s only vGPU '
               'type to every device offering it: give another GPU here a '
               'second type, or upgrade)'),
         sriov_capacity={'nvidia-692': {'0000:41:00.0': 2}},
         nova_adds={'nvidia-692': list(A100_VFS[2:])}),
    case('A100: more VFs named than it hosts are cut to its capacity',
         host(a100(), nova=CARACAL),
         "{'nvidia-698': ['0000:41:00.6', '0000:41:00.4']}",
         xena(('nvidia-698', ['0000:41:00.4'])),
         ready('1 NVIDIA GPU (A100 PCIe 80GB); 16 SR-IOV VFs; nvidia-698: 1 '
               'vGPU on 1 GPU'),
         sriov_capacity={'nvidia-698': {'0000:41:00.0': 1}}),
    case('A40 with max_instance 2: 2 VFs',
         host(a40('0000:51:00.0'), nova=CARACAL),
         "{'nvidia-565': ['0000:51:00.0']}",
         xena(('nvidia-565', A40_51[:2])),
         ready('1 NVIDIA GPU (A40); 32 SR-IOV VFs; nvidia-565: 2 vGPUs on '
               '1 GPU'),
         sriov_capacity={'nvidia-565': {'0000:51:00.0': 2}}),
    case('two A40s by selector: capacity per GPU',
         A40S, "{'nvidia-557': ['10de:2235']}",
         xena(('nvidia-557', A40_51[:24] + A40_52[:24])),
         ready('2 NVIDIA GPUs (A40); 64 SR-IOV VFs; nvidia-557: 24 vGPUs per '
               'GPU on 2 GPUs; nvidia-557 on 2 GPUs (10de:2235)'),
         sriov_capacity={'nvidia-557': {'0000:51:00.0': 24,
                                        '0000:52:00.0': 24}}),
    case('capacity unreadable: every VF is given',
         host(a40('0000:51:00.0', {'nvidia-557': ('NVIDIA A40-2Q', None)}),
              nova=CARACAL),
         "{'nvidia-557': ['0000:51:00.0']}",
         xena(('nvidia-557', A40_51)),
         ready('1 NVIDIA GPU (A40); 32 SR-IOV VFs; nvidia-557: 32 vGPUs on '
               '1 GPU'),
         sriov_capacity={'nvidia-557': {'0000:51:00.0': 32}}),
    # resource-class/a40-yoga-one-type.yaml, step 0
    case('two A40s on yoga, one type: nova adds the other VFs',
         host(a40('0000:51:00.0'), a40('0000:52:00.0')),
         "{'A40-2Q': ['10de:2235']}",
         xena(('nvidia-557', A40_51[:24] + A40_52[:24])),
         ready('2 NVIDIA GPUs (A40); 64 SR-IOV VFs; nvidia-557: 24 vGPUs per '
               'GPU on 2 GPUs; Nova also gives nvidia-557 to 8 VFs of '
               '0000:51:00.0, 8 VFs of 0000:52:00.0' + NOVA_ADDS + '; A40-2Q '
               'is nvidia-557; nvidia-557 on 2 GPUs (10de:2235)'),
         sriov_capacity={'nvidia-557': {'0000:51:00.0': 24,
                                        '0000:52:00.0': 24}},
         nova_adds={'nvidia-557': list(A40_51[24:] + A40_52[24:])}),
    case('SR-IOV GPU whose VFs are not enabled: waits, nothing given',
         host(a100(vfs_enabled=False), nova=CARACAL),
         "{'nvidia-697': ['0000:41:00.0']}", {},
         ready('1 NVIDIA GPU (A100 PCIe 80GB)'),
         waiting=['0000:41:00.0']),

    # ---------------------------------------------- guests come first
    # guests/v100-retype-waits.yaml, steps 5 and 8
    case('V100 in use keeps its type, the other GPU takes the change',
         with_mdev_guests(V100S, ('0000:84:00.0', 'nvidia-108', [GUEST_A]),
                          ('0000:84:00.0', 'nvidia-108', [GUEST_B])),
         "{'nvidia-105': ['0000:84:00.0', '0000:85:00.0']}",
         xena(('nvidia-105', ['0000:85:00.0']),
              ('nvidia-108', ['0000:84:00.0'])),
         ('waiting', HELD.format(
             '0000:84:00.0 keeps nvidia-108 for instance-0000002a, '
             'instance-0000002b (wanted: nvidia-105)')),
         held=[('0000:84:00.0', ('nvidia-108',), ('nvidia-105',),
                [GUEST_A, GUEST_B])],
         published={'nvidia-108': ['0000:84:00.0', '0000:85:00.0']}),
    case('V100 retype applies once the guests are gone', V100S,
         "{'nvidia-105': ['0000:84:00.0', '0000:85:00.0']}",
         xena(('nvidia-105', ['0000:84:00.0', '0000:85:00.0'])),
         ready(V100_READY),
         published={'nvidia-108': ['0000:84:00.0', '0000:85:00.0']}),
    case('a vGPU no guest uses holds nothing',
         with_mdev_guests(V100S, ('0000:84:00.0', 'nvidia-108', [])),
         "{'nvidia-105': ['0000:84:00.0', '0000:85:00.0']}",
         xena(('nvidia-105', ['0000:84:00.0', '0000:85:00.0'])),
         ready(V100_READY),
         published={'nvidia-108': ['0000:84:00.0', '0000:85:00.0']}),
    case('taking a GPU in use out of the mapping waits too',
         with_mdev_guests(V100S, ('0000:84:00.0', 'nvidia-108', [GUEST_A])),
         "{'nvidia-108': ['0000:85:00.0']}",
         xena(('nvidia-108', ['0000:84:00.0', '0000:85:00.0'])),
         ('waiting', HELD.format('0000:84:00.0 keeps nvidia-108 for '
                                 'instance-0000002a (wanted: out of the '
                                 'mapping)')),
         held=[('0000:84:00.0', ('nvidia-108',), (), [GUEST_A])],
         published={'nvidia-108': ['0000:84:00.0', '0000:85:00.0']}),
    # guests/queens-retype-waits.yaml, steps 4 and 6
    case('queens: one type per host, so the whole host waits',
         with_mdev_guests(
             host(v100('0000:84:00.0'), v100('0000:85:00.0'), nova=QUEENS),
             ('0000:84:00.0', 'nvidia-108', [GUEST_A])),
         "{'nvidia-105': ['0000:84:00.0', '0000:85:00.0']}",
         queens('nvidia-108'),
         ('waiting', 'Change of vgpu-device-mappings waits for guests using '
          'vGPUs: 0000:84:00.0 keeps nvidia-108 for instance-0000002a '
          '(wanted: nvidia-105); with one vGPU type per host on this '
          'release the whole host waits; it applies once they are gone '
          '(migrate, resize, shelve-offload or delete them; a stopped guest '
          'keeps its vGPU)'),
         held=[('0000:84:00.0', ('nvidia-108',), ('nvidia-105',),
                [GUEST_A])],
         held_whole_host=True,
         published={'nvidia-108': ['0000:84:00.0', '0000:85:00.0']}),
    case('queens: the retype applies once the guest is gone',
         host(v100('0000:84:00.0'), v100('0000:85:00.0'), nova=QUEENS),
         "{'nvidia-105': ['0000:84:00.0', '0000:85:00.0']}",
         queens('nvidia-105'), ready(V100_READY),
         published={'nvidia-108': ['0000:84:00.0', '0000:85:00.0']}),
    case('xena: the same retype holds only the GPU in use',
         with_mdev_guests(V100S, ('0000:84:00.0', 'nvidia-108', [GUEST_A])),
         "{'nvidia-105': ['0000:84:00.0', '0000:85:00.0']}",
         xena(('nvidia-105', ['0000:85:00.0']),
              ('nvidia-108', ['0000:84:00.0'])),
         ('waiting', HELD.format('0000:84:00.0 keeps nvidia-108 for '
                                 'instance-0000002a (wanted: nvidia-105)')),
         held=[('0000:84:00.0', ('nvidia-108',), ('nvidia-105',),
                [GUEST_A])],
         published={'nvidia-108': ['0000:84:00.0', '0000:85:00.0']}),
    case('charm new on a host with guests: their vGPUs keep their type',
         with_mdev_guests(V100S, ('0000:84:00.0', 'nvidia-108', [GUEST_A])),
         "{'nvidia-105': ['0000:84:00.0', '0000:85:00.0']}",
         xena(('nvidia-105', ['0000:85:00.0']),
              ('nvidia-108', ['0000:84:00.0'])),
         ('waiting', HELD.format('0000:84:00.0 keeps nvidia-108 for '
                                 'instance-0000002a (wanted: nvidia-105)')),
         held=[('0000:84:00.0', ('nvidia-108',), ('nvidia-105',),
                [GUEST_A])]),
    # guests/a100-retype-waits.yaml, step 5
    case('A100: a retype keeps every VF of the GPU in use',
         with_mdev_guests(
             host(a100(), nova=CARACAL),
             ('0000:41:00.5', 'nvidia-697', ['instance-0000003a'])),
         "{'nvidia-692': ['0000:41:00.0']}",
         xena(('nvidia-697', ['0000:41:00.4', '0000:41:00.5'])),
         ('waiting', HELD.format('0000:41:00.0 keeps nvidia-697 for '
                                 'instance-0000003a (wanted: nvidia-692)')),
         held=[('0000:41:00.0', ('nvidia-697',), ('nvidia-692',),
                ['instance-0000003a'])],
         sriov_capacity={'nvidia-697': {'0000:41:00.0': 2}},
         published={'nvidia-697': ['0000:41:00.4', '0000:41:00.5']}),
    # sriov/two-a40-guests-caracal.yaml, steps 0, 6 and 8
    case('A40s: the guests VF is the one given for its GPU',
         with_mdev_guests(A40S, ('0000:52:01.1', 'nvidia-566', [GUEST_A])),
         "{'nvidia-566': ['10de:2235']}",
         xena(('nvidia-566', ['0000:51:00.4', '0000:52:01.1'])),
         ready('2 NVIDIA GPUs (A40); 64 SR-IOV VFs; nvidia-566: 1 vGPU per '
               'GPU on 2 GPUs; nvidia-566 on 2 GPUs (10de:2235)'),
         sriov_capacity={'nvidia-566': {'0000:51:00.0': 1,
                                        '0000:52:00.0': 1}}),
    case('A40s: the GPU in use keeps its VF, the other takes the change',
         with_mdev_guests(A40S, ('0000:52:01.1', 'nvidia-566', [GUEST_A])),
         "{'nvidia-557': ['0000:51:00.0']}",
         xena(('nvidia-557', A40_51[:24]), ('nvidia-566', ['0000:52:01.1'])),
         ('waiting', HELD.format('0000:52:00.0 keeps nvidia-566 for '
                                 'instance-0000002a (wanted: out of the '
                                 'mapping)')),
         held=[('0000:52:00.0', ('nvidia-566',), (), [GUEST_A])],
         sriov_capacity={'nvidia-557': {'0000:51:00.0': 24},
                         'nvidia-566': {'0000:52:00.0': 1}},
         published={'nvidia-566': ['0000:51:00.4', '0000:52:01.1']}),
    case('A40s: the change applies once the guest is gone',
         A40S, "{'nvidia-557': ['0000:51:00.0']}",
         xena(('nvidia-557', A40_51[:24])),
         ready('2 NVIDIA GPUs (A40); 64 SR-IOV VFs; nvidia-557: 24 vGPUs on '
               '1 GPU'),
         sriov_capacity={'nvidia-557': {'0000:51:00.0': 24}},
         published={'nvidia-566': ['0000:51:00.4', '0000:52:01.1']}),
    # guests/l40s-retype-waits.yaml, step 8
    case('L40S: no VF is retyped under the guest',
         with_vf_guests(host(l40s(vf_count=4), nova=EPOXY),
                        ('0000:41:00.4', 1148, ['instance-0000004a'])),
         "{'nvidia-1155': ['0000:41:00.0']}",
         pci(L40S_VFS[:4], 'CUSTOM_NVIDIA_1148', 'nvidia-1148'),
         ('waiting', HELD.format('0000:41:00.0 keeps nvidia-1148 for '
                                 'instance-0000004a (wanted: nvidia-1155)')),
         held=[('0000:41:00.0', ('nvidia-1148',), ('nvidia-1155',),
                ['instance-0000004a'])],
         vf_types={'nvidia-1148': list(L40S_VFS[:4])},
         published={'nvidia-1148': list(L40S_VFS[:4])},
         sriov_capacity={'nvidia-1148': {'0000:41:00.0': 4}}),
    # guests/v100-shutoff-guest.yaml, steps 16 and 17
    case('a shut-off guest holds a retype as a running one does',
         shut_off(with_mdev_guests(
             V100S, ('0000:84:00.0', 'nvidia-108', [GUEST_A])), GUEST_A),
         "{'nvidia-105': ['0000:84:00.0', '0000:85:00.0']}",
         xena(('nvidia-105', ['0000:85:00.0']),
              ('nvidia-108', ['0000:84:00.0'])),
         ('waiting', HELD.format('0000:84:00.0 keeps nvidia-108 for '
                                 'instance-0000002a (wanted: nvidia-105)')),
         held=[('0000:84:00.0', ('nvidia-108',), ('nvidia-105',),
                [GUEST_A])],
         published={'nvidia-108': ['0000:84:00.0', '0000:85:00.0']}),
    # guests/l40s-retype-waits.yaml, step 12
    case('L40S: the retype applies once the guest is gone',
         host(l40s(vf_count=4), nova=EPOXY),
         "{'nvidia-1155': ['0000:41:00.0']}",
         pci(L40S_VFS[:4], 'CUSTOM_NVIDIA_1155', 'nvidia-1155'),
         ready(L40S_READY.format(4) + '; nvidia-1155: 4 vGPUs on 1 GPU'),
         vf_types={'nvidia-1155': list(L40S_VFS[:4])},
         published={'nvidia-1148': list(L40S_VFS[:4])},
         sriov_capacity={'nvidia-1155': {'0000:41:00.0': 4}}),

    # ------------------------------------------ vendor-specific VFIO
    # no-mdev/l40s-epoxy.yaml
    case('epoxy: typed VFs go to nova through PCI passthrough',
         host(l40s(), nova=EPOXY), "{'nvidia-1148': ['0000:41:00.0']}",
         pci(L40S_VFS, 'CUSTOM_NVIDIA_1148', 'nvidia-1148'),
         ready(L40S_READY.format(8) + '; nvidia-1148: 8 vGPUs on 1 GPU'),
         vf_types={'nvidia-1148': list(L40S_VFS)},
         sriov_capacity={'nvidia-1148': {'0000:41:00.0': 8}}),
    # no-mdev/l40s-old-libvirt.yaml
    case('libvirt below Nova\'s minimum: no tag, not ready',
         host(l40s(), nova=EPOXY, libvirt_qemu=(
             '9.0.0-0ubuntu1', NOBLE_QEMU)),
         "{'nvidia-1148': ['0000:41:00.0']}",
         pci(L40S_VFS, 'CUSTOM_NVIDIA_1148', 'nvidia-1148', live=False),
         ('active', NOT_MIGRATABLE.format(
             'libvirt 9.0.0 and QEMU 8.2.2', 'libvirt is') +
          L40S_VFS_FOUND.format(8) + '; nvidia-1148: 8 vGPUs on 1 GPU'),
         vf_types={'nvidia-1148': list(L40S_VFS)},
         sriov_capacity={'nvidia-1148': {'0000:41:00.0': 8}}),
    case('QEMU below Nova\'s minimum: no tag, not ready',
         host(l40s(), nova=EPOXY, libvirt_qemu=(
             NOBLE_LIBVIRT, '1:8.2.1+ds-0ubuntu1')),
         "{'nvidia-1148': ['0000:41:00.0']}",
         pci(L40S_VFS, 'CUSTOM_NVIDIA_1148', 'nvidia-1148', live=False),
         ('active', NOT_MIGRATABLE.format(
             'libvirt 10.0.0 and QEMU 8.2.1', 'QEMU is') +
          L40S_VFS_FOUND.format(8) + '; nvidia-1148: 8 vGPUs on 1 GPU'),
         vf_types={'nvidia-1148': list(L40S_VFS)},
         sriov_capacity={'nvidia-1148': {'0000:41:00.0': 8}}),
    case('neither installed (unknown): no tag, not ready',
         host(l40s(), nova=EPOXY, libvirt_qemu=(None, None)),
         "{'nvidia-1148': ['0000:41:00.0']}",
         pci(L40S_VFS, 'CUSTOM_NVIDIA_1148', 'nvidia-1148', live=False),
         ('active', NOT_MIGRATABLE.format(
             'no libvirt package and no QEMU package', 'libvirt and QEMU are')
          + L40S_VFS_FOUND.format(8) + '; nvidia-1148: 8 vGPUs on 1 GPU'),
         vf_types={'nvidia-1148': list(L40S_VFS)},
         sriov_capacity={'nvidia-1148': {'0000:41:00.0': 8}}),
    case('newer than the minimums (flamingo UCA): tagged, ready',
         host(l40s(), nova=EPOXY, libvirt_qemu=(
             '11.6.0-0ubuntu1~cloud0', '1:10.1.0+ds-5ubuntu1~cloud0')),
         "{'nvidia-1148': ['0000:41:00.0']}",
         pci(L40S_VFS, 'CUSTOM_NVIDIA_1148', 'nvidia-1148'),
         ready(L40S_READY.format(8) + '; nvidia-1148: 8 vGPUs on 1 GPU'),
         vf_types={'nvidia-1148': list(L40S_VFS)},
         sriov_capacity={'nvidia-1148': {'0000:41:00.0': 8}}),
    case('a guest holds a retype: what Nova keeps is tagged the same way',
         with_vf_guests(host(l40s(vf_count=4), nova=EPOXY, libvirt_qemu=(
             '9.0.0-0ubuntu1', None)),
             ('0000:41:00.4', 1148, ['instance-0000004a'])),
         "{'nvidia-1155': ['0000:41:00.0']}",
         pci(L40S_VFS[:4], 'CUSTOM_NVIDIA_1148', 'nvidia-1148', live=False),
         ('waiting', HELD.format('0000:41:00.0 keeps nvidia-1148 for '
                                 'instance-0000004a (wanted: nvidia-1155)')),
         held=[('0000:41:00.0', ('nvidia-1148',), ('nvidia-1155',),
                ['instance-0000004a'])],
         vf_types={'nvidia-1148': list(L40S_VFS[:4])},
         published={'nvidia-1148': list(L40S_VFS[:4])},
         sriov_capacity={'nvidia-1148': {'0000:41:00.0': 4}}),
    # no-mdev/l40s-caracal.yaml, step 4
    case('before epoxy: vendor-specific VFIO refused naming nova',
         host(l40s(), nova=CARACAL), "{'nvidia-1148': ['0000:41:00.0']}",
         None,
         blocked("GPUs at 0000:41:00.0 run NVIDIA's vendor-specific VFIO "
                 'driver (no mdev), which Nova supports from 2025.1 Epoxy; '
                 'this host has nova 29.2.0: upgrade OpenStack, or use a '
                 'vGPU driver with mdev')),
    case('before the driver runs the L40S has no VFs yet',
         host(l40s(vfs_enabled=False), nova=EPOXY, driver=None),
         "{'nvidia-1148': ['0000:41:00.0']}", {},
         ready('1 NVIDIA GPU (device 10de:26b9)'),
         waiting=['0000:41:00.0']),
    # resource-class/l40s-epoxy.yaml, cut after start
    case('per-profile before the driver runs: nothing for the L40S',
         host(l40s(vfs_enabled=False), nova=EPOXY, driver=None),
         "{'nvidia-1148': ['0000:41:00.0']}", {},
         ready('1 NVIDIA GPU (device 10de:26b9)'),
         waiting=['0000:41:00.0'], resource_class='per-profile'),

    # ------------------------------------------------ resource classes
    # resource-class/a40-caracal-two-types.yaml, steps 5 and 10
    case('per-profile on caracal, a guest holds one type in VGPU',
         with_mdev_guests(A40S, ('0000:52:00.4', 'nvidia-566', [GUEST_A])),
         "{'A40-2Q': ['0000:51:00.0'], 'nvidia-566': ['0000:52:00.0']}",
         xena(('nvidia-557', A40_51[:24]), ('nvidia-566', ['0000:52:00.4']),
              classes={'nvidia-557': 'CUSTOM_VGPU_A40_2Q'}),
         ('waiting', 'Change of vgpu-resource-class waits for guests using '
          'vGPUs: nvidia-566 keeps VGPU for instance-0000002a (wanted: '
          'CUSTOM_VGPU_A40_48Q); it applies once they are gone (migrate, '
          'resize, shelve-offload or delete them; a stopped guest keeps its '
          'vGPU)'),
         class_held=[('nvidia-566', 'VGPU', 'CUSTOM_VGPU_A40_48Q',
                      [GUEST_A])],
         sriov_capacity={'nvidia-557': {'0000:51:00.0': 24},
                         'nvidia-566': {'0000:52:00.0': 1}},
         resource_class='per-profile',
         published={'nvidia-557': list(A40_51[:24]),
                    'nvidia-566': ['0000:52:00.4']},
         published_classes={'nvidia-557': 'VGPU', 'nvidia-566': 'VGPU'}),
    case('per-profile on caracal once the guest is gone',
         A40S,
         "{'A40-2Q': ['0000:51:00.0'], 'nvidia-566': ['0000:52:00.0']}",
         xena(('nvidia-557', A40_51[:24]), ('nvidia-566', ['0000:52:00.4']),
              classes={'nvidia-557': 'CUSTOM_VGPU_A40_2Q',
                       'nvidia-566': 'CUSTOM_VGPU_A40_48Q'}),
         ready('2 NVIDIA GPUs (A40); 64 SR-IOV VFs; nvidia-557: 24 vGPUs on 1 '
               'GPU; nvidia-566: 1 vGPU on 1 GPU; A40-2Q is nvidia-557; '
               'nvidia-557 as CUSTOM_VGPU_A40_2Q; nvidia-566 as '
               'CUSTOM_VGPU_A40_48Q'),
         sriov_capacity={'nvidia-557': {'0000:51:00.0': 24},
                         'nvidia-566': {'0000:52:00.0': 1}},
         resource_class='per-profile',
         published={'nvidia-557': list(A40_51[:24]),
                    'nvidia-566': ['0000:52:00.4']},
         published_classes={'nvidia-557': 'CUSTOM_VGPU_A40_2Q',
                            'nvidia-566': 'VGPU'}),
    # resource-class/a40-yoga-one-type.yaml, steps 4 and 5
    case('per-profile on yoga with one type: refused',
         host(a40('0000:51:00.0'), a40('0000:52:00.0')),
         "{'A40-2Q': ['10de:2235']}", None,
         blocked('Invalid vgpu-resource-class: OpenStack Yoga (nova 25.2.1) '
                 'ignores [mdev_<type>] mdev_class on a host with only 1 '
                 'vGPU type (its vGPUs would stay VGPU; Nova fixed it in '
                 "Caracal, nova 29); use VGPU, give this host's GPUs at "
                 'least 2 types, or upgrade to Caracal or later'),
         resource_class='per-profile'),
    case('per-profile on yoga with two types: each its class',
         host(a40('0000:51:00.0'), a40('0000:52:00.0')),
         "{'A40-2Q': ['0000:51:00.0'], 'A40-48Q': ['0000:52:00.0']}",
         xena(('nvidia-557', A40_51[:24]), ('nvidia-566', ['0000:52:00.4']),
              classes={'nvidia-557': 'CUSTOM_VGPU_A40_2Q',
                       'nvidia-566': 'CUSTOM_VGPU_A40_48Q'}),
         ready('2 NVIDIA GPUs (A40); 64 SR-IOV VFs; nvidia-557: 24 vGPUs on 1 '
               'GPU; nvidia-566: 1 vGPU on 1 GPU; A40-2Q is nvidia-557; '
               'A40-48Q is nvidia-566; nvidia-557 as CUSTOM_VGPU_A40_2Q; '
               'nvidia-566 as CUSTOM_VGPU_A40_48Q'),
         sriov_capacity={'nvidia-557': {'0000:51:00.0': 24},
                         'nvidia-566': {'0000:52:00.0': 1}},
         resource_class='per-profile'),
    case('per-profile on caracal with one type: its class',
         host(a100(), nova=CARACAL), "{'nvidia-697': ['0000:41:00.0']}",
         xena(('nvidia-697', A100_VFS[:2]),
              classes={'nvidia-697': 'CUSTOM_VGPU_A100D_40C'}),
         ready('1 NVIDIA GPU (A100 PCIe 80GB); 16 SR-IOV VFs; nvidia-697: 2 '
               'vGPUs on 1 GPU; nvidia-697 as CUSTOM_VGPU_A100D_40C'),
         sriov_capacity={'nvidia-697': {'0000:41:00.0': 2}},
         resource_class='per-profile'),
    # resource-class/wallaby-refused.yaml, steps 4 and 6
    case('per-profile on wallaby: no mdev_class, refused',
         host(v100('0000:84:00.0'), v100('0000:85:00.0'), nova=WALLABY),
         V100_TWO, None,
         blocked("Invalid vgpu-resource-class: per-profile needs Nova's "
                 '[mdev_<type>] mdev_class, which OpenStack Wallaby (nova '
                 '23.2.2) does not have; use VGPU, or upgrade to Caracal '
                 '(nova 29) or later'),
         resource_class='per-profile'),
    case('VGPU on wallaby: what nova always had',
         host(v100('0000:84:00.0'), v100('0000:85:00.0'), nova=WALLABY),
         V100_TWO,
         ussuri(('nvidia-105', ['0000:85:00.0']),
                ('nvidia-108', ['0000:84:00.0'])),
         ready(V100_READY), resource_class='VGPU'),
    case('per-profile where the driver names no type yet: waits',
         host(v100('0000:84:00.0', {'nvidia-108': ''}), nova=CARACAL),
         "{'nvidia-108': ['0000:84:00.0']}", {},
         ('waiting', 'Waiting for the NVIDIA driver to name vGPU types '
          'nvidia-108 for their per-profile resource classes (nothing is '
          'published for them until then)'),
         resource_class='per-profile'),
    case('per-profile, a driver name that is no profile: refused',
         host(v100('0000:84:00.0', {'nvidia-108': 'GRID V100 8GB'}),
              nova=CARACAL),
         "{'nvidia-108': ['0000:84:00.0']}", None,
         blocked("Invalid vgpu-resource-class: the NVIDIA driver names "
                 "nvidia-108 'GRID V100 8GB', which is no vGPU profile "
                 'name: no one vGPU profile to name its resource class '
                 'after; set vgpu-resource-class=VGPU'),
         resource_class='per-profile'),
    # resource-class/l40s-epoxy.yaml
    case('per-profile on vendor-specific VFIO: PCI entries under the class',
         host(l40s(), nova=EPOXY), "{'nvidia-1148': ['0000:41:00.0']}",
         pci(L40S_VFS, 'CUSTOM_VGPU_L40S_2Q', 'CUSTOM_VGPU_L40S_2Q'),
         ready(L40S_READY.format(8) + '; nvidia-1148: 8 vGPUs on 1 GPU; '
               'nvidia-1148 as '
               'CUSTOM_VGPU_L40S_2Q'),
         vf_types={'nvidia-1148': list(L40S_VFS)},
         resource_class='per-profile',
         sriov_capacity={'nvidia-1148': {'0000:41:00.0': 8}}),
    # resource-class/a40-caracal-two-types.yaml, step 7
    case('a class that is not one of the two: refused',
         A40S, "{'nvidia-557': ['0000:51:00.0']}", None,
         blocked("Invalid vgpu-resource-class: 'Per-Profile' is not one of "
                 "its values: VGPU (every vGPU in Placement's VGPU class) or "
                 'per-profile (one class per vGPU profile, e.g. '
                 'CUSTOM_VGPU_A40_2Q)'),
         resource_class='Per-Profile'),
]


def shut_off_twin(name: str, twin_of: str, guest: str):
    """A row of CASES again with its guest shut off, expecting the same:
    a retype waits for every guest defined with the GPU's vGPUs, running
    or not (guest_safety)."""
    row, = [param for param in CASES if param.id == twin_of]
    case_ = row.values[0]
    return pytest.param(
        case_._replace(snapshot=shut_off(case_.snapshot, guest)), id=name)


CASES += [
    shut_off_twin('L40S: a shut-off guest keeps its VF typed',
                  'L40S: no VF is retyped under the guest',
                  'instance-0000004a'),
    shut_off_twin('per-profile: a shut-off guest holds its type\'s class',
                  'per-profile on caracal, a guest holds one type in VGPU',
                  GUEST_A),
]


@pytest.mark.parametrize('row', CASES)
def test_plan(row):
    nova_plan = plan.plan_nova(
        row.snapshot, row.mappings, row.resource_class,
        rules(row.snapshot.nova_version), row.published,
        row.published_classes)
    assert outcome(row.snapshot, nova_plan) == row.expected


# --------------------------------------- running or only defined

V100_TWO_GUESTS = with_mdev_guests(
    V100S, ('0000:84:00.0', 'nvidia-108', [GUEST_A]),
    ('0000:85:00.0', 'nvidia-108', [GUEST_B]))


@pytest.mark.parametrize('snapshot, retype, vgpu_manager', [
    pytest.param(shut_off(V100_TWO_GUESTS), [GUEST_A, GUEST_B],
                 [GUEST_A, GUEST_B], id='running guests count for both'),
    pytest.param(shut_off(V100_TWO_GUESTS, GUEST_A), [GUEST_A, GUEST_B],
                 [GUEST_B], id='a shut-off guest counts only for a retype'),
    pytest.param(shut_off(V100_TWO_GUESTS, GUEST_A, GUEST_B),
                 [GUEST_A, GUEST_B], [], id='all shut off: nothing stops'),
    pytest.param(shut_off(with_mdev_guests(
        V100S, ('0000:84:00.0', 'nvidia-108', [GUEST_A, GUEST_B])),
        GUEST_B), [GUEST_A, GUEST_B], [GUEST_A],
        id='one vGPU in two definitions, one of them running'),
    pytest.param(shut_off(with_vf_guests(
        host(l40s(vf_count=4), nova=EPOXY),
        ('0000:41:00.4', 1148, [GUEST_A]), ('0000:41:00.5', 1148, [GUEST_B])),
        GUEST_B), [GUEST_A, GUEST_B], [GUEST_A],
        id='vendor VFIO: typed VFs, one guest shut off'),
    pytest.param(V100_TWO_GUESTS, [GUEST_A, GUEST_B], [GUEST_A, GUEST_B],
                 id='not read: every guest counts as running'),
])
def test_what_each_operation_waits_for(snapshot, retype, vgpu_manager):
    """A retype (mappings, resource class) waits for every guest defined
    with a vGPU here; stopping or replacing the vGPU Manager (pause,
    restart-services, a series upgrade's prepare, a new revision) only
    for those that run."""
    assert guest_safety.guest_names(plan.vgpus_in_use(snapshot)) == retype
    assert guest_safety.guest_names(
        plan.vgpus_running(snapshot)) == vgpu_manager


# ------------------------------------------------ hostile option text

INVALID = ('Invalid vgpu-device-mappings: {}; vGPU types and PCI addresses '
           'are printable ASCII only: retype the value without it')

# nova-config/hostile-values-v100.yaml, steps 7-16 and 21-30: the option
# as Juju hands it over (JSON escapes reach the parser as written).
HOSTILE = [
    ('newline in a type', r'{"nvidia-108\n": ["0000:84:00.0"]}',
     INVALID.format("the vGPU type 'nvidia-108\\n' holds '\\n' (U+000A, a "
                    'control character) at character 11')),
    ('newline after an address', r'{"nvidia-108": ["0000:84:00.0\n"]}',
     INVALID.format("the entry '0000:84:00.0\\n' under 'nvidia-108' holds "
                    "'\\n' (U+000A, a control character) at character 13")),
    ('carriage return', r'{"nvidia-108": ["0000:84:00.0\r"]}',
     INVALID.format("the entry '0000:84:00.0\\r' under 'nvidia-108' holds "
                    "'\\r' (U+000D, a control character) at character 13")),
    ('tab', r'{"nvidia-108": ["0000:84:00.0\t"]}',
     INVALID.format("the entry '0000:84:00.0\\t' under 'nvidia-108' holds "
                    "'\\t' (U+0009, a control character) at character 13")),
    ('NUL', r'{"nvidia-108": ["\u00000000:84:00.0"]}',
     INVALID.format("the entry '\\x000000:84:00.0' under 'nvidia-108' holds "
                    "'\\x00' (U+0000, a control character) at character 1")),
    ('newline after a selector', r'{"nvidia-108": ["10de:1db4\n"]}',
     INVALID.format("the entry '10de:1db4\\n' under 'nvidia-108' holds "
                    "'\\n' (U+000A, a control character) at character 10")),
    ('a nova.conf section smuggled in',
     r'{"nvidia-108": ["0000:84:00.0\n[DEFAULT]\ndebug = true"]}',
     INVALID.format("the entry '0000:84:00.0\\n[DEFAULT]\\ndebug = true' "
                    "under 'nvidia-108' holds '\\n' (U+000A, a control "
                    'character) at character 13')),
    ('block scalar final newline', 'nvidia-108:\n- |\n  0000:84:00.0\n',
     INVALID.format("the entry '0000:84:00.0\\n' under 'nvidia-108' holds "
                    "'\\n' (U+000A, a control character) at character 13")),
    ('newline under an address not on this host',
     r'{"nvidia-108": ["0000:84:00.0"], "nvidia-105": ["0000:99:00.0\n"]}',
     INVALID.format("the entry '0000:99:00.0\\n' under 'nvidia-105' holds "
                    "'\\n' (U+000A, a control character) at character 13")),
    ('newline after a selector matching nothing',
     r'{"nvidia-108": ["10de:2236\n"]}',
     INVALID.format("the entry '10de:2236\\n' under 'nvidia-108' holds "
                    "'\\n' (U+000A, a control character) at character 10")),
    ('a section header glued to an address',
     "{'nvidia-108': ['0000:84:00.0[DEFAULT]']}",
     "Invalid vgpu-device-mappings: '0000:84:00.0[DEFAULT]' under "
     "'nvidia-108' is not a full PCI address domain:bus:device.function, "
     'e.g. 0000:84:00.0, nor a GPU selector such as 10de:1db4'),
    ('an option assignment as the type',
     r'{"nvidia-108]\ndebug=true": ["0000:84:00.0"]}',
     INVALID.format("the vGPU type 'nvidia-108]\\ndebug=true' holds '\\n' "
                    '(U+000A, a control character) at character 12')),
    ('= and ] in a type', "{'debug=true]': ['0000:84:00.0']}",
     "Invalid vgpu-device-mappings: 'debug=true]' is not a vGPU type name; "
     'NVIDIA types look like nvidia-35, or by profile name V100-8Q (see '
     'the list-vgpu-types action)'),
    ('a YAML tag', "{'nvidia-108': !!python/name:os.system ['x']}",
     'Invalid vgpu-device-mappings: YAML tags are not allowed; write plain '
     "text, e.g. {'nvidia-35': ['0000:84:00.0']}"),
]

# Where the value meets the host: a V100 before its driver runs and
# after, a host without a GPU (hostile-values-no-gpu.yaml), and one
# where nova is not installed yet (the value is refused first).
HOSTS = [
    ('V100, no driver', host(v100('0000:84:00.0'), driver=None)),
    ('V100, driver', host(v100('0000:84:00.0'))),
    ('no GPU', host()),
    ('no nova', host(v100('0000:84:00.0'), nova=None)),
]


@pytest.mark.parametrize('text, message', [
    pytest.param(text, message, id=name) for name, text, message in HOSTILE])
@pytest.mark.parametrize('snapshot', [
    pytest.param(snapshot, id=name) for name, snapshot in HOSTS])
def test_hostile_values_are_refused_by_name_and_publish_nothing(
        snapshot, text, message):
    nova_plan = plan.plan_nova(snapshot, text, None,
                               rules(snapshot.nova_version),
                               {'nvidia-108': ['0000:84:00.0']}, None)
    assert nova_plan.problem == ('blocked', message)
    assert nova_plan.sections is None
    assert all(' ' <= character <= '~' for character in message)


# ------------------------------ the table's rules are the release data's


@pytest.mark.parametrize('version', [
    QUEENS, '2:20.6.1-0ubuntu1~cloud0', USSURI, VICTORIA_BEFORE_FIX, VICTORIA,
    WALLABY, YOGA, CARACAL, EPOXY])
def test_the_rules_are_the_release_families(version):
    """The rules the table uses for each release (written here as the
    release notes say them) are those nova/families.py gives the plan."""
    assert families.nova_rules(version) == rules(version)
