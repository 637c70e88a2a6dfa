"""MIG on the simulated host: each MIG-capable GPU's mode and its GPU
instances (GIs), and what follows from them for the host's VFs.

A GPU is MIG-capable where the scenario gives it `mig:` (contract,
../shared/spec/simulator.md). Its state, kept in host['mig'] by PCI
address: {'mode': current mode, 'pending': the mode the next GPU reset
or reboot gives it (equal to mode when nothing is pending),
'gpu_instances': [{'id', 'profile_id', 'profile', 'start', 'size',
'compute_instance'}]}, in the order they were created.

The rules (sim/README.md, "MIG", names their sources):
- a GPU has `slices` compute slices (7 unless the scenario says); a GI
  of profile "<n>g.<m>gb[+variant]" takes n of them, the first run of
  n contiguous free slices (first fit), and no profile has more GIs
  than its `max`;
- where the scenario gives its profiles `placements` and `size` (what
  `nvidia-smi mig -lgipp` lists: NVML's possible placements), a GI
  occupies memory slices [start, start + size) at one of its profile's
  placements instead, and is refused where it would overlap one that
  exists; asked for at a start (`-cgi PROFILE:START`) it is made there
  or refused, asked for without one it takes the lowest free start that
  fits (NVIDIA does not document its driver's choice: this is one a
  driver may make);
- a mode change waits (pending) while the GPU is in use (in_use); on a
  GPU whose mode survives a reboot (Ampere: A100, A30) it also waits
  for a GPU reset or a reboot; a reset or a reboot applies what is
  pending; a reboot takes the mode back to disabled where it does not
  survive one (Hopper and later);
- GIs are lost at every reset and reboot, and when sriov-manage -e
  (re)binds the GPU;
- a VF offers a MIG-backed vGPU type of a profile while a GI of that
  profile is free; each vGPU (mdev) of such a type on the GPU's VFs
  takes one GI of its profile, in the order of the host's mdevs and of
  the GIs' creation;
- on a GPU whose VFs use the vendor-specific VFIO driver
  (sriov.vf_vgpu_types; vfio_form), mig.vgpu_types is {profile: {type
  number: name}}: while MIG mode is enabled each VF's
  creatable_vgpu_types lists the MIG-backed types whose profile has a
  GI with room for one more of them (and no time-sliced type); a
  MIG-backed type written to a VF's current_vgpu_type takes a place on
  the lowest-id GI of its profile with room (the GI records its VFs:
  gi['vfs']), else the write fails (EIO) and the VF keeps its type
  (write_vf_types); writing 0 gives the place back. A GI has room while
  no VF holds it, or while its VFs have that type and are fewer than
  the type's "Max Instances Per GI" (mig.vgpu_types_per_gi; 1 unless
  the scenario says: Blackwell's time-sliced-on-MIG types put several
  vGPUs on one GI, docs/facts/blackwell-mig.md §3). One type per GI is
  stricter than the driver, which lets types of one frame buffer size
  share a GI; the charm types every VF of a GPU alike.

Pure functions of the host state and the scenario's PCI functions; the
callers (fakebin's nvidia-smi and sriov-manage, boot.py, host.py,
report.py) decide when something happened.
"""
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from sim import host as simhost
from sim.guests import guests_on_vf

MODES = ('enabled', 'disabled')
DEFAULT_SLICES = 7
# A GPU instance profile's name: its compute slices, its memory, and an
# optional variant that keeps the slice count (+me, -me, +me.all,
# +gfx): 1g.10gb, 3g.40gb, 1g.10gb+me.
PROFILE_NAME = re.compile(r'^([1-7])g\.[0-9]+gb(?:[+-][a-z]+(?:\.[a-z]+)?)?$')


def slice_count(profile_name: str) -> int:
    """The compute slices a GI of this profile takes (1g.10gb: 1)."""
    match = PROFILE_NAME.match(profile_name)
    if not match:
        raise ValueError(profile_name)
    return int(match.group(1))


def gpu_slices(function: Dict[str, Any]) -> int:
    return function['mig'].get('slices', DEFAULT_SLICES)


def survives_reboot(function: Dict[str, Any]) -> bool:
    return bool(function['mig'].get('mode_survives_reboot', False))


def initial(pci: Sequence[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """Each MIG-capable GPU as it comes up: its mode as the scenario
    says, nothing pending, no GIs."""
    state = {}
    for function in pci:
        if 'mig' in function:
            mode = function['mig'].get('mode', 'disabled')
            state[function['address']] = {
                'mode': mode, 'pending': mode, 'gpu_instances': []}
    return state


def capable(pci: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return [function for function in pci if 'mig' in function]


def profiles(function: Dict[str, Any]) -> List[Dict[str, Any]]:
    return function['mig'].get('gpu_instance_profiles', [])


def find_profile(function: Dict[str, Any],
                 token: str) -> Optional[Dict[str, Any]]:
    """A profile by its ID, its short name (3g.40gb) or its full name
    (MIG 3g.40gb), as nvidia-smi mig -cgi takes them."""
    name = token[len('MIG '):] if token.startswith('MIG ') else token
    for profile in profiles(function):
        if name == profile['name'] or (
                name.isdigit() and int(name) == profile['id']):
            return profile
    return None


def placed(function: Dict[str, Any]) -> bool:
    """Whether the scenario gives this GPU's placements (-lgipp)."""
    return any('placements' in profile for profile in profiles(function))


def memory_slices(function: Dict[str, Any]) -> int:
    """The GPU's memory slices, where placements are given: as the
    scenario says, else as far as its placements reach."""
    return function['mig'].get('memory_slices', max(
        [start + profile['size'] for profile in profiles(function)
         for start in profile.get('placements', [])] or [0]))


# ---------------------------------------------------------------- slices

def _taken(gpu: Dict[str, Any]) -> set:
    return {slot for gi in gpu['gpu_instances']
            for slot in range(gi['start'], gi['start'] + gi['size'])}


def _first_fit(free: set, size: int, total: int) -> Optional[int]:
    for start in range(total - size + 1):
        if all(slot in free for slot in range(start, start + size)):
            return start
    return None


def _starts(function: Dict[str, Any], profile: Dict[str, Any]) -> List[int]:
    """Where a GI of this profile may start: its placements where they
    are given, else wherever its compute slices fit."""
    if placed(function):
        return sorted(profile.get('placements', []))
    return list(range(gpu_slices(function) -
                      slice_count(profile['name']) + 1))


def _size(function: Dict[str, Any], profile: Dict[str, Any]) -> int:
    """The slices a GI of this profile occupies: memory slices where
    placements are given, else compute slices."""
    return (profile['size'] if placed(function)
            else slice_count(profile['name']))


def _lowest_free(function: Dict[str, Any], free: set,
                 profile: Dict[str, Any]) -> Optional[int]:
    size = _size(function, profile)
    for start in _starts(function, profile):
        if all(slot in free for slot in range(start, start + size)):
            return start
    return None


def _free_slots(function: Dict[str, Any], gpu: Dict[str, Any]) -> set:
    total = memory_slices(function) if placed(function) else \
        gpu_slices(function)
    return set(range(total)) - _taken(gpu)


def free_instances(function: Dict[str, Any], gpu: Dict[str, Any],
                   profile: Dict[str, Any]) -> int:
    """How many more GIs of this profile fit now (nvidia-smi mig -lgip's
    Free): no more than its max, at the free starts left (contiguous
    free compute slices, or its placements' free memory slices)."""
    size = _size(function, profile)
    room = profile['max'] - sum(1 for gi in gpu['gpu_instances']
                                if gi['profile_id'] == profile['id'])
    free = _free_slots(function, gpu)
    count = 0
    while count < room:
        start = _lowest_free(function, free, profile)
        if start is None:
            break
        free -= set(range(start, start + size))
        count += 1
    return count


def create(function: Dict[str, Any], gpu: Dict[str, Any],
           wanted: Sequence[Tuple[Dict[str, Any], Optional[int]]],
           compute_instance: bool
           ) -> Tuple[List[Dict[str, Any]], Optional[int]]:
    """GIs of these (profile, start or None) in order, until one does
    not fit, as NVIDIA's MIG User Guide shows -cgi doing: (the GIs
    made, also added to gpu; None when all were, else the index in
    wanted of the first that does not fit; those before it stay). One
    asked for at a start fits only at that start, one of its profile's
    placements, over free memory slices."""
    trial = {'gpu_instances': list(gpu['gpu_instances'])}
    made = []
    for index, (profile, start) in enumerate(wanted):
        size = _size(function, profile)
        free = _free_slots(function, trial)
        if start is None:
            start = _lowest_free(function, free, profile)
        elif start not in _starts(function, profile) or not all(
                slot in free for slot in range(start, start + size)):
            start = None
        if start is None or not free_instances(function, trial, profile):
            gpu['gpu_instances'] = trial['gpu_instances']
            return made, index
        used = {gi['id'] for gi in trial['gpu_instances']}
        gi = {'id': min(set(range(1, len(used) + 2)) - used),
              'profile_id': profile['id'], 'profile': profile['name'],
              'start': start, 'size': size,
              'compute_instance': compute_instance}
        trial['gpu_instances'].append(gi)
        made.append(gi)
    gpu['gpu_instances'] = trial['gpu_instances']
    return made, None


# ------------------------------------------------------------- its users

def _vfs(host: Dict[str, Any], function: Dict[str, Any]) -> List[str]:
    return simhost.vf_addresses(
        function['address'], host.get('vfs', {}).get(function['address'], 0))


def type_profiles(function: Dict[str, Any]) -> Dict[str, str]:
    """Each MIG-backed vGPU type -> the GI profile it needs."""
    return {type_id: profile for profile, types in
            function['mig'].get('vgpu_types', {}).items()
            for type_id in types}


def vfio_form(function: Dict[str, Any]) -> bool:
    """Whether this MIG-capable GPU's VFs use NVIDIA's vendor-specific
    VFIO driver (its sriov has vf_vgpu_types), so that its
    mig.vgpu_types is {profile: {type number: name}} and a VF takes a
    GI when its current_vgpu_type is written."""
    return 'mig' in function and 'vf_vgpu_types' in function.get(
        'sriov', {})


def vfio_type_profiles(function: Dict[str, Any]) -> Dict[int, str]:
    """On the VFIO form: each MIG-backed type number -> the GI profile
    it needs. (Numbers are ints in a scenario, text once the host state
    went through JSON.)"""
    return {int(number): profile for profile, types in
            function['mig'].get('vgpu_types', {}).items()
            for number in types}


def _time_sliced(function: Dict[str, Any]) -> Dict[int, str]:
    return {int(number): name for number, name in
            function['sriov'].get('vf_vgpu_types', {}).items()}


def gi_users(host: Dict[str, Any],
             function: Dict[str, Any]) -> Dict[int, Any]:
    """GI id -> what holds it: the UUID of the vGPU (mdev on one of the
    GPU's VFs, of a MIG-backed type) that took it; on the VFIO form,
    the VFs whose current_vgpu_type took a place on it (gi['vfs'])."""
    gpu = host['mig'][function['address']]
    if vfio_form(function):
        return {gi['id']: list(gi['vfs']) for gi in gpu['gpu_instances']
                if gi.get('vfs')}
    vfs = {vf.lower() for vf in _vfs(host, function)}
    needs = type_profiles(function)
    users = {}
    for profile in sorted(set(needs.values())):
        gis = [gi for gi in gpu['gpu_instances'] if gi['profile'] == profile]
        vgpus = [mdev for mdev in host.get('mdevs', [])
                 if mdev['parent'].lower() in vfs and
                 needs.get(mdev['type']) == profile]
        for gi, mdev in zip(gis, vgpus):
            users[gi['id']] = mdev['uuid']
    return users


def in_use(host: Dict[str, Any], function: Dict[str, Any],
           vfs_count: bool = False, gis_count: bool = False
           ) -> Optional[str]:
    """Why the GPU is in use (one line), or None: a vGPU (an mdev on it
    or on one of its VFs), a VF with a vGPU type that a guest has (on
    the VFIO form, any VF with a vGPU type: the type is the vGPU, as an
    mdev is); with vfs_count, enabled VFs; with gis_count, existing
    GIs."""
    address = function['address'].lower()
    vfs = [vf.lower() for vf in _vfs(host, function)]
    for mdev in host.get('mdevs', []):
        if mdev['parent'].lower() in [address] + vfs:
            return 'vGPU {} on {}'.format(mdev['uuid'], mdev['parent'])
    for vf, type_id in sorted(host.get('vf_vgpu_types', {}).items()):
        if type_id and vf.lower() in vfs and guests_on_vf(host, vf):
            return 'VF {} (vGPU type {}) used by {}'.format(
                vf, type_id, ', '.join(guests_on_vf(host, vf)))
        if type_id and vf.lower() in vfs and vfio_form(function):
            return 'VF {} has vGPU type {}'.format(vf, type_id)
    if vfs_count and vfs:
        return '{} VFs enabled'.format(len(vfs))
    gis = host['mig'].get(function['address'], {}).get('gpu_instances')
    if gis_count and gis:
        return '{} GPU instances'.format(len(gis))
    return None


# ------------------------------------------------------- what changes it

def set_mode(host: Dict[str, Any], function: Dict[str, Any],
             wanted: str) -> str:
    """nvidia-smi -mig: 'applied' (the mode is wanted now), 'in use'
    (pending while the GPU is in use) or 'reset' (pending until a GPU
    reset or a reboot: Ampere)."""
    gpu = host['mig'][function['address']]
    gpu['pending'] = wanted
    if gpu['mode'] == wanted:
        return 'applied'
    if in_use(host, function, vfs_count=wanted == 'disabled',
              gis_count=wanted == 'disabled'):
        return 'in use'
    if survives_reboot(function):
        return 'reset'
    apply_pending(gpu)
    return 'applied'


def apply_pending(gpu: Dict[str, Any]) -> None:
    """A GPU reset: the pending mode takes effect; no GI survives it."""
    gpu['mode'] = gpu['pending']
    gpu['gpu_instances'] = []


def reset(host: Dict[str, Any], function: Dict[str, Any]) -> Optional[str]:
    """nvidia-smi -r: refused (why, one line) while the GPU is in use or
    has VFs; else the pending mode applies and the GIs are gone."""
    busy = in_use(host, function, vfs_count=True)
    if busy:
        return busy
    if function['address'] in host.get('mig', {}):
        apply_pending(host['mig'][function['address']])
    return None


def reboot(host: Dict[str, Any]) -> None:
    """Every GI is gone; a pending mode applies where the mode survives
    a reboot (Ampere's InfoROM bit), elsewhere the GPU comes up with MIG
    disabled."""
    for function in capable(host['pci']):
        gpu = host['mig'][function['address']]
        if not survives_reboot(function):
            gpu['pending'] = 'disabled'
        apply_pending(gpu)


def sriov_enabled(host: Dict[str, Any], address: str) -> None:
    """sriov-manage -e rebinds the GPU: its GIs are gone."""
    if address in host.get('mig', {}):
        host['mig'][address]['gpu_instances'] = []


# ----------------------------------------------------- what the host shows

def creatable_vgpu_types(host: Dict[str, Any],
                         function: Dict[str, Any]) -> Dict[int, str]:
    """On the VFIO form, what every VF of the GPU lists in
    nvidia/creatable_vgpu_types: while MIG mode is enabled, the
    MIG-backed types whose profile has a GI no VF holds (no time-sliced
    type); while it is disabled, the time-sliced ones
    (sriov.vf_vgpu_types)."""
    if not mig_enabled(host, function):
        return _time_sliced(function)
    return {int(number): name for types in
            function['mig'].get('vgpu_types', {}).values()
            for number, name in types.items()
            if _gi_with_room(host, function, int(number))}


def per_gi(function: Dict[str, Any], number: int) -> int:
    """How many VFs of a MIG-backed type one GI holds (VFIO form): the
    driver's "Max Instances Per GI" (mig.vgpu_types_per_gi), 1 unless
    the scenario says."""
    return int({int(key): value for key, value in function['mig'].get(
        'vgpu_types_per_gi', {}).items()}.get(number, 1))


def _gi_with_room(host: Dict[str, Any], function: Dict[str, Any],
                  number: int) -> Optional[Dict[str, Any]]:
    """The lowest-id GI of the type's profile with room for one more VF
    of it: one no VF holds, or one whose VFs have that type and are
    fewer than its per-GI count (VFIO form); None where none has."""
    profile = vfio_type_profiles(function).get(number)
    room = [gi for gi in host['mig'][function['address']]['gpu_instances']
            if gi['profile'] == profile and (not gi.get('vfs') or (
                gi['vf_type'] == number and
                len(gi['vfs']) < per_gi(function, number)))]
    return min(room, key=lambda gi: gi['id']) if room else None


def vf_gpu_instance(host: Dict[str, Any], function: Dict[str, Any],
                    vf: str) -> Optional[Dict[str, Any]]:
    """The GI a VF holds (VFIO form: its MIG-backed type took it), or
    None."""
    gpu = host.get('mig', {}).get(function['address'], {})
    return next((gi for gi in gpu.get('gpu_instances', [])
                 if vf in gi.get('vfs', ())), None)


def release_vf(host: Dict[str, Any], function: Dict[str, Any],
               vf: str) -> None:
    """The VF holds no place on a GI any more (its type is 0, or it is
    gone); a GI no VF holds has no type."""
    gi = vf_gpu_instance(host, function, vf)
    if gi:
        gi['vfs'].remove(vf)
        if not gi['vfs']:
            del gi['vfs'], gi['vf_type']


def _hold(gi: Dict[str, Any], vf: str, number: int) -> None:
    """The VF takes a place on the GI for a vGPU of this type."""
    gi.setdefault('vfs', []).append(vf)
    gi['vf_type'] = number


def type_refusal(host: Dict[str, Any], function: Dict[str, Any],
                 number: int) -> Optional[str]:
    """Why the driver refuses (EIO) a write of this type number to the
    current_vgpu_type of a VF of the GPU (VFIO form) that holds no GI:
    one line; None where it takes it (the VF lists it as creatable)."""
    if number in creatable_vgpu_types(host, function):
        return None
    profile = vfio_type_profiles(function).get(number)
    enabled = mig_enabled(host, function)
    if profile and enabled:
        return 'no free GPU instance of profile {} on {}'.format(
            profile, function['address'])
    if profile:
        return ('MIG mode is disabled on {}: MIG-backed types are not '
                'creatable'.format(function['address']))
    if enabled and number in _time_sliced(function):
        return ('MIG mode is enabled on {}: time-sliced types are not '
                'creatable'.format(function['address']))
    return 'not a vGPU type of {}'.format(function['address'])


def write_vf_types(host: Dict[str, Any], function: Dict[str, Any],
                   written: Dict[str, Tuple[int, int]]) -> Dict[str, str]:
    """The type numbers processes wrote to the current_vgpu_type of VFs
    of a GPU in the VFIO form since the last look, {VF: (its type
    before, the number written)}, as the driver takes them: writes of 0
    first (each gives back the VF's place on a GI), then the others in
    VF address order, each VF giving back its own place before it asks
    for one; a MIG-backed type takes a place on the lowest-id GI of its
    profile with room. Returns {VF: why} for the writes refused (EIO):
    such a VF keeps its type and place."""
    for vf, (_, new) in sorted(written.items()):
        if not new:
            release_vf(host, function, vf)
    needs = vfio_type_profiles(function)
    refused = {}
    for vf, (_, new) in sorted(written.items()):
        if not new:
            continue
        held = vf_gpu_instance(host, function, vf)
        before = held and held['vf_type']
        if held:
            release_vf(host, function, vf)
        why = type_refusal(host, function, new)
        if why:
            refused[vf] = why
            if held:
                _hold(held, vf, before)
        elif new in needs:
            _hold(_gi_with_room(host, function, new), vf, new)
    return refused


def vf_mdev_types(host: Dict[str, Any], function: Dict[str, Any],
                  vf: str) -> Dict[str, Dict[str, Any]]:
    """What a VF of a MIG-capable GPU lists under mdev_supported_types
    while MIG mode is enabled: every MIG-backed type, available (1)
    while the VF hosts no vGPU and a GI of the type's profile is free."""
    gpu = host['mig'][function['address']]
    mdevs = host.get('mdevs', [])
    taken = set(gi_users(host, function))
    hosting = any(mdev['parent'].lower() == vf.lower() for mdev in mdevs)
    free = {gi['profile'] for gi in gpu['gpu_instances']
            if gi['id'] not in taken}
    types = {}
    for profile, specs in function['mig'].get('vgpu_types', {}).items():
        for type_id, spec in specs.items():
            types[type_id] = dict(spec, available_instances=int(
                profile in free and not hosting))
    return types


def mig_enabled(host: Dict[str, Any], function: Dict[str, Any]) -> bool:
    gpu = host.get('mig', {}).get(function['address'])
    return bool(gpu) and gpu['mode'] == 'enabled'


def summary(host: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """The output's host.mig: each MIG-capable GPU's mode and its GIs'
    profiles, sorted; where placements are given, also each GI's
    profile and start, by start."""
    modelled = {function['address'] for function in capable(host['pci'])
                if placed(function)}
    vfio = {function['address'] for function in capable(host['pci'])
            if vfio_form(function)}
    found = {}
    for address, gpu in sorted(host.get('mig', {}).items()):
        found[address] = {'mode': gpu['mode'], 'gpu_instances': sorted(
            gi['profile'] for gi in gpu['gpu_instances'])}
        if address in modelled:
            found[address]['gpu_instance_placements'] = [
                {'profile': gi['profile'], 'start': gi['start']}
                for gi in sorted(gpu['gpu_instances'],
                                 key=lambda gi: gi['start'])]
        if address in vfio:
            # Only on the VFIO form: which GI each typed VF holds.
            found[address]['vf_gpu_instances'] = dict(sorted(
                (vf, gi['id']) for gi in gpu['gpu_instances']
                for vf in gi.get('vfs', ())))
    return found
