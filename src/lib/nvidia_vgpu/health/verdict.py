"""Is this GPU host healthy, and where has it drifted from what Nova was
given? What the vgpu-health action reports and update-status shows.

A host is unhealthy (the action fails, naming each reason) when guests'
vGPUs or what Nova offers are wrong now, or cannot work until someone
acts:

- a GPU but no vGPU host software, an install that failed, or the vGPU
  Manager installed but its driver not running (or an older one still
  running: reboot required);
- vgpu-device-mappings the unit refuses (blocked: Nova keeps what it had);
- a vGPU Manager service not running (unless the unit is paused), or a
  boot unit of the charm that failed;
- drift: an SR-IOV GPU without its VFs although the driver runs (they
  were not enabled after a boot), a GPU in MIG mode without GPU
  instances its mig-layout made, a device Nova was given that the host
  does not have, a type Nova was given that the device does not offer
  (or, on the vendor-specific VFIO driver, a VF without that type), a
  guest whose vGPU is missing (its libvirt definition names an mdev
  that does not exist, or a VF that is gone or has no vGPU type).

Reported but healthy, as they are changes under way that wait for
guests or for the next hook: a paused unit, a retype pending (a GPU
keeps its type for the guests on it), an attached driver revision that
waits for guests, settings not handed to Nova yet; and devices Nova
gives the host's one type beyond the mappings (before Caracal: what that
Nova does, not drift). Live migration readiness (release and versions
against Nova's documented minimums, those for typed VFs on the
vendor-specific VFIO driver) is information, never a failure: many
clouds do not migrate vGPU guests.

Pure functions: HostFacts in (survey.py and the charm class gather
them), findings, rows, a table and a status line out.
"""
from typing import (AbstractSet, Dict, List, Mapping, NamedTuple, Optional,
                    Sequence, Tuple)

from nvidia_vgpu.driver import software
from nvidia_vgpu.health import gpu_faults
from nvidia_vgpu.nova import guest_safety, live_migration, nova_config
from nvidia_vgpu import model, names

Mappings = Dict[str, List[str]]

# Finding codes, as the action's JSON gives them.
NO_SOFTWARE = 'no-software'
SOFTWARE_PROBLEM = 'software-problem'
REBOOT_REQUIRED = 'reboot-required'
CONFIG_BLOCKED = 'config-blocked'
SERVICE_STOPPED = 'service-stopped'
BOOT_UNIT_FAILED = 'boot-unit-failed'
VFS_MISSING = 'vfs-missing'
NOVA_DEVICE_MISSING = 'nova-device-missing'
NOVA_TYPE_MISSING = 'nova-type-missing'
GUEST_VGPU_MISSING = 'guest-vgpu-missing'
GIS_MISSING = 'gpu-instances-missing'
PAUSED = 'paused'
RETYPE_PENDING = 'retype-pending'
SOFTWARE_WAITS = 'software-waits'
MIG_LAYOUT_WAITS = 'mig-layout-waits'
NOVA_NOT_GIVEN_YET = 'nova-not-given-yet'
NOVA_TAKES_MORE = 'nova-takes-more'
# a GPU host gives Nova no vGPU, or a mapped type none (nova/offer_gaps.py)
OFFER_GAP = 'offer-gap'
# GPU hardware faults this boot (health/gpu_faults.py): one that breaks
# or will break the vGPUs on a GPU, and one that asks for a GPU reset
GPU_FAILED = 'gpu-failed'
GPU_DEGRADED = 'gpu-degraded'
# What update-status shows: the drift no other status of the unit names.
DRIFT = (VFS_MISSING, NOVA_DEVICE_MISSING, NOVA_TYPE_MISSING,
         GUEST_VGPU_MISSING, GIS_MISSING)

# Addresses named in one line before "and N more".
NAMED_DEVICES = 3


class HostFacts(NamedTuple):
    """Everything the verdict is made from."""

    gpus: Sequence[model.GpuState]
    driver: Optional[str]                   # running NVIDIA driver
    installed: Optional[model.Installed]  # what the charm installed
    published: Optional[Mappings]           # what Nova was last given
    wanted: Optional[Mappings] = None       # what it should have now
    mdevs: Sequence[Tuple[str, str, str]] = ()   # (uuid, parent, type)
    mdev_users: Mapping[str, Sequence[str]] = {}  # uuid -> guests
    pci_users: Mapping[str, Sequence[str]] = {}   # address -> guests
    # the guests libvirt runs (None: not known, all count as running)
    running_guests: Optional[AbstractSet[str]] = None
    # where the charm last saw each vGPU: uuid -> (parent, type)
    recorded: Mapping[str, Tuple[str, str]] = {}
    recorded_vf_types: Mapping[str, int] = {}  # VF -> type it was given
    software_problem: Optional[str] = None
    waiting_software: Optional[Tuple[str, str]] = None  # (package, ver)
    held: Sequence[model.HeldGpu] = ()
    held_whole_host: bool = False  # one type per host: all of it waits
    # type -> devices Nova gives it beyond the mappings (one type, < 29)
    nova_adds: Mapping[str, Sequence[str]] = {}
    config_problem: Optional[str] = None    # why the unit is blocked
    # systemctl is-active's answer per service ({}: not asked)
    services: Mapping[str, str] = {}
    boot_units: Mapping[str, str] = {}
    paused: bool = False
    # GPU in MIG mode -> GPU instances its layout has made (the boot
    # record) that do not exist
    gis_missing: Mapping[str, Sequence[str]] = {}
    # GPU -> guests a mig-layout change waits for, and the status line
    mig_held: Mapping[str, Sequence[str]] = {}
    mig_held_message: Optional[str] = None
    # why Nova gets no vGPU from this GPU host, or none of a mapped type
    offer_gaps: Sequence[str] = ()
    # this boot's GPU hardware faults as the host reports them (None:
    # not read: only monitoring and vgpu-health read them, and only
    # while the driver runs)
    gpu_faults: Optional[model.GpuFaultFacts] = None
    # MIG-capable GPUs as the driver reports them, where the hook asked
    # (a mig-layout applied or to undo); {} elsewhere
    mig: Mapping[str, model.MigGpu] = {}


class Finding(NamedTuple):
    """One thing wrong (broken) or worth knowing."""

    code: str
    broken: bool
    message: str

    def as_dict(self) -> Dict[str, object]:
        return {'code': self.code, 'broken': self.broken,
                'message': self.message}


def _listed(items: Sequence[str]) -> str:
    shown = ', '.join(items[:NAMED_DEVICES])
    more = len(items) - NAMED_DEVICES
    return shown + (' and {} more'.format(more) if more > 0 else '')


def _gpu_of(gpus: Sequence[model.GpuState]) -> Dict[str, str]:
    return {device: gpu.address for gpu in gpus
            for device in (gpu.address,) + tuple(gpu.vfs)}


def drift(facts: HostFacts) -> List[Finding]:
    """Where the host differs from what Nova was given and what guests
    need: every finding here is broken. Reads only facts update-status
    already has (no service or package queries)."""
    found: List[Finding] = []
    gpu_of = _gpu_of(facts.gpus)
    if facts.driver is not None and facts.installed is not None:
        for gpu in facts.gpus:
            if gpu.total_vfs and not gpu.vfs:
                found.append(Finding(VFS_MISSING, True, (
                    'SR-IOV GPU {} has no VFs (0 of {}) although the NVIDIA '
                    'driver runs: they were not enabled after the last boot '
                    '(nvidia-vgpu-sriov)').format(gpu.address,
                                                  gpu.total_vfs)))
    by_gpu = {gpu.address: gpu for gpu in facts.gpus}
    missing: Dict[str, List[str]] = {}
    for vgpu_type, devices in sorted((facts.published or {}).items()):
        for device in devices:
            gpu = by_gpu.get(gpu_of.get(device, ''))
            if gpu is None:
                missing.setdefault(vgpu_type, []).append(device)
                continue
            if gpu.vendor_vfio and device in gpu.vfs:
                has = gpu.vf_types.get(device, 0)
                if has != names.type_number(vgpu_type):
                    found.append(Finding(NOVA_TYPE_MISSING, True, (
                        'Nova was given {} as {}, but the VF has vGPU type '
                        '{}').format(device, vgpu_type, has or 'none')))
            elif gpu.types and vgpu_type not in gpu.types.get(device, {}):
                found.append(Finding(NOVA_TYPE_MISSING, True, (
                    'Nova was given {} on {}, which the device does not '
                    'offer').format(vgpu_type, device)))
    for vgpu_type, devices in sorted(missing.items()):
        found.append(Finding(NOVA_DEVICE_MISSING, True, (
            'Nova was given {} device{} this host does not have: {} ({})'
        ).format(len(devices), '' if len(devices) == 1 else 's',
                 _listed(sorted(devices)), vgpu_type)))
    for gpu, profiles in sorted(facts.gis_missing.items()):
        found.append(Finding(GIS_MISSING, True, (
            'GPU {} lacks {} of the GPU instances of its mig-layout ({}): '
            'they were not made after the last boot '
            '(nvidia-vgpu-mig-instances)').format(
                gpu, len(profiles), ', '.join(profiles))))
    found += _guests_without_vgpus(facts, gpu_of, by_gpu)
    return found


def _guests_without_vgpus(facts: HostFacts, gpu_of: Dict[str, str],
                          by_gpu: Dict[str, model.GpuState]) -> List[Finding]:
    """Guests whose definition names a vGPU the host does not have: an
    mdev that does not exist, or a VF (one Nova was given, one the charm
    typed, or a VF of a vendor-VFIO GPU) that is gone or untyped."""
    found = []
    existing = {uuid for uuid, _, _ in facts.mdevs}
    for uuid, guests in sorted(facts.mdev_users.items()):
        if uuid in existing:
            continue
        place = facts.recorded.get(uuid)
        if place and _device_gone(place[0], gpu_of):
            found.append(Finding(GUEST_VGPU_MISSING, True, (
                'Guest {} has lost its vGPU {} with its device {}, which '
                'is not on this host any more (a failed or removed GPU): '
                'cold-migrate the guest off this host, then take the GPU '
                'out of Nova or swap it (Replacing a failed GPU)').format(
                    ', '.join(sorted(guests)), uuid, place[0])))
            continue
        where = ('last seen on {} as {}'.format(*place) if place else
                 'the charm has no record of where it was')
        found.append(Finding(GUEST_VGPU_MISSING, True, (
            'Guest {} has lost its vGPU {} ({})').format(
                ', '.join(sorted(guests)), uuid, where)))
    candidates = set(facts.recorded_vf_types)
    candidates.update(device for devices in (facts.published or {}).values()
                      for device in devices)
    candidates.update(vf for gpu in facts.gpus if gpu.vendor_vfio
                      for vf in gpu.vfs)
    for address, guests in sorted(facts.pci_users.items()):
        if address not in candidates:
            continue
        gpu = by_gpu.get(gpu_of.get(address, ''))
        if gpu is None:
            why = 'the VF is gone'
        elif gpu.vendor_vfio and not gpu.vf_types.get(address):
            why = 'the VF has no vGPU type'
        else:
            continue
        found.append(Finding(GUEST_VGPU_MISSING, True, (
            'Guest {} has lost its vGPU on {} ({})').format(
                ', '.join(sorted(guests)), address, why)))
    return found


def _device_gone(device: str, gpu_of: Mapping[str, str]) -> bool:
    """A device (a GPU, or a VF) that no GPU on the host has, on a PCI
    bus no GPU on the host is on: its GPU failed or was removed (a VF
    that is only not enabled shares its GPU's bus)."""
    bus = device.rsplit(':', 1)[0]
    return device not in gpu_of and not any(
        present.rsplit(':', 1)[0] == bus for present in gpu_of)


def findings(facts: HostFacts) -> List[Finding]:
    """Everything the action reports, broken first in the order to fix
    them (failed GPUs, software, configuration, services, drift), then
    notices (GPUs that want a reset first)."""
    found = _broken_before_drift(facts)
    faults = hardware(facts)
    drifted = drift(facts)
    return ([finding for finding in faults if finding.broken] + found +
            drifted + [finding for finding in faults if not finding.broken] +
            _notices(facts, drifted))


def hardware(facts: HostFacts) -> List[Finding]:
    """This boot's GPU hardware faults (none where they were not read),
    each naming the GPU, the guests on it and the fix."""
    if facts.gpu_faults is None:
        return []
    found = []
    for fault in gpu_faults.faults(facts.gpu_faults,
                                   [gpu.address for gpu in facts.gpus]):
        text = ' and '.join(fault.reasons)
        if fault.gpu is not None:
            guests = guests_on(facts, fault.gpu)
            text = 'GPU {} {}; {}'.format(
                fault.gpu, text, 'guests on it: ' + ', '.join(guests)
                if guests else 'no guest uses it')
        found.append(Finding(GPU_FAILED if fault.critical else GPU_DEGRADED,
                             fault.critical,
                             '{}; fix: {}'.format(text, fault.fix)))
    return found


def guests_on(facts: HostFacts, address: str) -> List[str]:
    """The guests whose definitions use a vGPU on this GPU."""
    gpu = next((gpu for gpu in facts.gpus if gpu.address == address), None)
    if gpu is None:
        return []
    guests = set()
    if gpu.vendor_vfio:
        for vf in gpu.vfs:
            if gpu.vf_types.get(vf):
                guests.update(facts.pci_users.get(vf, ()))
    else:
        # where each vGPU is, or was last seen (a failing GPU's may be
        # gone already)
        parents = {uuid: parent for uuid, (parent, _) in
                   facts.recorded.items()}
        parents.update((uuid, parent) for uuid, parent, _ in facts.mdevs)
        devices = {gpu.address} | set(gpu.vfs)
        for uuid, users in facts.mdev_users.items():
            if parents.get(uuid) in devices:
                guests.update(users)
    return sorted(guests)


def _broken_before_drift(facts: HostFacts) -> List[Finding]:
    """The software, the configuration, services and boot units."""
    found: List[Finding] = []
    if facts.gpus:
        if facts.software_problem:
            found.append(Finding(SOFTWARE_PROBLEM, True,
                                 facts.software_problem))
        elif facts.installed is None:
            found.append(Finding(NO_SOFTWARE, True,
                                 software.resource_problem(None)))
        elif facts.driver != facts.installed.version:
            found.append(Finding(
                REBOOT_REQUIRED, True,
                software.reboot_message(facts.installed, facts.driver)))
    if facts.config_problem:
        found.append(Finding(CONFIG_BLOCKED, True, facts.config_problem))
    for name, state in sorted(facts.services.items()):
        if state != 'active' and not facts.paused:
            found.append(Finding(SERVICE_STOPPED, True, (
                'Service {} is {} (systemctl status {})').format(
                    name, state, name)))
    for name, state in sorted(facts.boot_units.items()):
        if state == 'failed':
            found.append(Finding(BOOT_UNIT_FAILED, True, (
                'Boot unit {} failed (journalctl -b -u {})').format(
                    name, name)))
    return found


def _notices(facts: HostFacts, drifted: List[Finding]) -> List[Finding]:
    """What is worth knowing but not broken."""
    found: List[Finding] = [Finding(OFFER_GAP, False, gap)
                            for gap in facts.offer_gaps]
    if facts.paused:
        found.append(Finding(PAUSED, False, (
            'The unit is paused: the vGPU Manager is stopped on purpose '
            '(resume to start it)')))
    if facts.held:
        found.append(Finding(RETYPE_PENDING, False, guest_safety.held_message(
            facts.held, facts.held_whole_host)))
    if facts.mig_held_message:
        found.append(Finding(MIG_LAYOUT_WAITS, False,
                             facts.mig_held_message))
    if facts.waiting_software:
        package, version = facts.waiting_software
        found.append(Finding(SOFTWARE_WAITS, False,
                             guest_safety.software_waits_message(
                                 package, version,
                                 software_waits_guests(facts))))
    for message in nova_config.adds_summary(facts.nova_adds,
                                            _gpu_of(facts.gpus)):
        found.append(Finding(NOVA_TAKES_MORE, False, message))
    # While VFs are missing Nova keeps what it has (the charm publishes
    # nothing until they are back): that is the VFs' finding, not this.
    vfs_missing = any(finding.code == VFS_MISSING for finding in drifted)
    if (facts.wanted is not None and not vfs_missing and
            facts.wanted != (facts.published or {})):
        found.append(Finding(NOVA_NOT_GIVEN_YET, False, (
            'Nova has not been given this host\'s vGPU settings yet (they '
            'go at the next hook)')))
    return found


def software_waits_guests(facts: HostFacts) -> List[str]:
    """The running guests an attached driver revision waits for."""
    return guest_safety.guest_names(guest_safety.running(
        _vgpus_in_use(facts), facts.running_guests))


def _vgpus_in_use(facts: HostFacts) -> List[model.VgpuInUse]:
    vf_types = {vf: number for gpu in facts.gpus
                for vf, number in gpu.vf_types.items()}
    return guest_safety.vgpus_in_use(facts.mdevs, facts.mdev_users,
                                     vf_types, facts.pci_users)


def status_message(found: Sequence[Finding]) -> Optional[str]:
    """The unit status line for drift, or None: the first, and how many
    more the vgpu-health action lists."""
    shown = [finding for finding in found if finding.code in DRIFT]
    if not shown:
        return None
    more = len(shown) - 1
    return 'Host drift: {}{}'.format(
        shown[0].message,
        ' (and {} more: run vgpu-health)'.format(more) if more else '')


def _mode(gpu: model.GpuState) -> str:
    if not gpu.total_vfs:
        return 'mdev'
    if not gpu.vfs:
        return 'sriov'      # no VFs: which driver model cannot be told
    return 'vendor-vfio' if gpu.vendor_vfio else 'sriov-mdev'


def gpu_rows(facts: HostFacts) -> List[Dict[str, object]]:
    """One record per GPU: its mode, VFs, the type(s) Nova was given and
    what the mappings want, vGPUs created, in use and free, guests."""
    rows = []
    users = {uuid: list(guests) for uuid, guests in facts.mdev_users.items()}
    held = {gpu.gpu: gpu for gpu in facts.held}
    for gpu in facts.gpus:
        devices = (gpu.address,) + tuple(gpu.vfs)
        given = _types_on(facts.published, devices)
        # A GPU whose retype waits keeps its type in what Nova should
        # have now; what the mappings ask for is what waits.
        wanted = (sorted(held[gpu.address].wants) if gpu.address in held
                  else _types_on(facts.wanted, devices))
        guests = set()
        if gpu.vendor_vfio:
            created = [vf for vf in gpu.vfs if gpu.vf_types.get(vf)]
            in_use = [vf for vf in created if vf in facts.pci_users]
            for vf in in_use:
                guests.update(facts.pci_users[vf])
        else:
            created = [uuid for uuid, parent, _ in facts.mdevs
                       if parent in devices]
            in_use = [uuid for uuid in created if uuid in users]
            for uuid in in_use:
                guests.update(users[uuid])
        rows.append({
            'address': gpu.address, 'model': gpu.model, 'mode': _mode(gpu),
            'vfs': {'enabled': len(gpu.vfs), 'total': gpu.total_vfs}
            if gpu.total_vfs else None,
            'nova_types': given,
            'wanted_types': wanted if facts.wanted is not None or
            gpu.address in held else None,
            'profiles': [gpu.names[t] for t in given if gpu.names.get(t)],
            'created': len(created), 'in_use': len(in_use),
            'free': _free(facts, gpu, given),
            'guests': sorted(guests)})
    return rows


def _types_on(mappings: Optional[Mappings],
              devices: Sequence[str]) -> List[str]:
    """The types these mappings give this GPU; a GPU without its VFs is
    matched by the VFs' addresses only while they exist, so it shows
    none then."""
    return sorted(vgpu_type for vgpu_type, listed in (mappings or {}).items()
                  if set(listed) & set(devices))


def _free(facts: HostFacts, gpu: model.GpuState,
          given: Sequence[str]) -> Optional[int]:
    """vGPUs Nova could still create of the type(s) it was given here;
    None where the driver's counts were not read."""
    if not given:
        return None
    devices = {device for vgpu_type in given
               for device in (facts.published or {}).get(vgpu_type, ())}
    if gpu.vendor_vfio:
        return sum(1 for vf in gpu.vfs if vf in devices and
                   gpu.vf_types.get(vf) and vf not in facts.pci_users)
    counts = [gpu.types.get(device, {}).get(vgpu_type)
              for vgpu_type in given for device in sorted(devices)
              if device in gpu.types]
    if not counts or any(count is None for count in counts):
        return None
    return sum(counts)


def type_counts(facts: HostFacts, gpu: model.GpuState,
                vgpu_type: str) -> Dict[str, Optional[int]]:
    """One type Nova was given on one GPU: its vGPUs created, those
    guests use, and how many more Nova can hand out (free: instances
    the driver can create plus created ones no guest uses; on the
    vendor-specific VFIO driver, typed VFs no guest uses). Counted per
    type, so that several types on one GPU (MIG sizes, each on VFs of
    its own) each have their numbers; free is None where the driver's
    counts were not read."""
    devices = set((facts.published or {}).get(vgpu_type, ())) & set(
        (gpu.address,) + tuple(gpu.vfs))
    if gpu.vendor_vfio:
        number = names.type_number(vgpu_type)
        created = [vf for vf in sorted(devices)
                   if number and gpu.vf_types.get(vf) == number]
        in_use = [vf for vf in created if vf in facts.pci_users]
        return {'created': len(created), 'in_use': len(in_use),
                'free': len(created) - len(in_use)}
    created = [uuid for uuid, parent, typ in facts.mdevs
               if parent in devices and typ == vgpu_type]
    in_use = [uuid for uuid in created if uuid in facts.mdev_users]
    counts = [gpu.types.get(device, {}).get(vgpu_type)
              for device in sorted(devices) if device in gpu.types]
    free = None if not counts or None in counts else \
        sum(counts) + len(created) - len(in_use)   # type: ignore
    return {'created': len(created), 'in_use': len(in_use), 'free': free}


def report(facts: HostFacts, versions: Optional[model.Versions] = None,
           nvidia_smi: Optional[str] = None) -> Dict[str, object]:
    """The action's structured result."""
    found = findings(facts)
    installed = facts.installed
    result: Dict[str, object] = {
        'healthy': not any(finding.broken for finding in found),
        'vgpu_manager': {
            'package': installed.package if installed else None,
            'installed': installed.version if installed else None,
            'running': facts.driver},
        'services': dict(facts.services),
        'boot_units': dict(facts.boot_units),
        'gpus': gpu_rows(facts),
        'findings': [finding.as_dict() for finding in found],
        'nvidia_smi': nvidia_smi,
    }
    if versions is not None:
        result['live_migration'] = live_migration.readiness(
            versions, any(gpu.vendor_vfio for gpu in facts.gpus),
            facts.driver)
    return result


def _cell(value: object) -> str:
    if value is None:
        return '-'
    if isinstance(value, list):
        return ', '.join(str(item) for item in value) or '-'
    return str(value)


def table(result: Mapping[str, object]) -> str:
    """The action's 'output': a line per GPU, then the software, the
    findings and live migration readiness, then the verdict."""
    lines = _gpu_lines(result) + _host_lines(result)
    broken = [finding for finding in result['findings']
              if finding['broken']]
    lines.append('Healthy' if not broken else
                 'Unhealthy: {} problem{}'.format(
                     len(broken), '' if len(broken) == 1 else 's'))
    return '\n'.join(lines)


def _gpu_lines(result: Mapping[str, object]) -> List[str]:
    """A line per GPU under a header, columns aligned."""
    header = ['GPU', 'model', 'mode', 'VFs', 'Nova type', 'created',
              'in use', 'free', 'guests']
    rows = [header]
    for row in result['gpus']:
        vfs = row['vfs']
        nova = _cell(row['nova_types'])
        if row['profiles']:
            nova += ' ({})'.format(', '.join(row['profiles']))
        if row['wanted_types'] is not None and \
                row['wanted_types'] != row['nova_types']:
            nova += ' -> ' + _cell(row['wanted_types'])
        rows.append([row['address'], row['model'], row['mode'],
                     '{}/{}'.format(vfs['enabled'], vfs['total'])
                     if vfs else '-', nova, _cell(row['created']),
                     _cell(row['in_use']), _cell(row['free']),
                     _cell(row['guests'])])
    lines = []
    if len(rows) > 1:
        widths = [max(len(row[column]) for row in rows)
                  for column in range(len(header))]
        lines = ['  '.join(cell.ljust(width) for cell, width
                           in zip(row, widths)).rstrip() for row in rows]
    else:
        lines = ['No NVIDIA GPU on this host.']
    return lines


def _host_lines(result: Mapping[str, object]) -> List[str]:
    """The software, services, boot units, findings, live migration."""
    lines = []
    manager = result['vgpu_manager']
    if manager['package']:
        lines.append('vGPU Manager: {} {} installed; driver {}'.format(
            manager['package'], manager['installed'],
            '{} running'.format(manager['running']) if manager['running']
            else 'not running'))
    elif result['gpus']:
        lines.append('vGPU Manager: not installed')
    for key, title in (('services', 'Services'),
                       ('boot_units', 'Boot units')):
        if result[key]:
            lines.append('{}: {}'.format(title, ', '.join(
                '{} {}'.format(name, state)
                for name, state in sorted(result[key].items()))))
    for finding in result['findings']:
        lines.append('{}: {}'.format(
            'BROKEN' if finding['broken'] else 'note', finding['message']))
    migration = result.get('live_migration')
    if migration:
        lines.append(live_migration.line(migration))
    if result['nvidia_smi'] is None:
        lines.append('nvidia-smi: not on this host')
    else:
        lines.append('nvidia-smi vgpu: see the nvidia-smi result')
    return lines


def failure(result: Mapping[str, object]) -> Optional[str]:
    """The action-fail message: every broken finding; None if healthy."""
    broken = [finding['message'] for finding in result['findings']
              if finding['broken']]
    if not broken:
        return None
    return 'Host not healthy: ' + '; '.join(broken)
