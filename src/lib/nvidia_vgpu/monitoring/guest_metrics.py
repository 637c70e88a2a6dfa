"""Per-vGPU (per-guest) figures for the exporter, read through NVML.

The facts document the hooks write is as fresh as the last hook; a
guest's utilisation is not worth anything five minutes late, so the
exporter asks NVML (the vGPU Manager's libnvidia-ml.so.1, through
NVIDIA's Python bindings, nvidia-ml-py's `pynvml`) at each scrape.
nvidia-smi's text is not promised to stay the same from one release to
the next; NVML and its bindings are. The hooks never import this module
nor pynvml: only the exporter service does.

Which calls (nvidia-ml-py 13.615.71, pynvml.py; NVML API reference,
"vGPU Management" and "vGPU Utilization and Accounting"):

- nvmlInit, nvmlShutdown: per scrape, as nvidia-smi does per call. An
  NVML handle kept open between scrapes would make the driver answer
  "In use by another client" to the GPU resets and MIG mode changes the
  charm's hooks make.
- nvmlDeviceGetCount, nvmlDeviceGetHandleByIndex, nvmlDeviceGetPciInfo
  (its busId, bytes such as b'00000000:84:00.0'): the physical GPUs.
- nvmlDeviceGetActiveVgpus: the vGPU instances (ints) running on a GPU;
  on SR-IOV GPUs too, whose vGPUs sit on VFs of the GPU.
- nvmlVgpuInstanceGetVmID: (VM id as bytes, its type); for a KVM guest
  the libvirt domain's UUID, which Nova sets to the instance's UUID.
  nvmlVgpuInstanceGetUUID is the vGPU's own UUID, not the VM's.
- nvmlVgpuInstanceGetType and nvmlVgpuTypeGetName: the type id (mdev
  type nvidia-<id>) and its name (GRID V100-8Q).
- nvmlVgpuInstanceGetFbUsage: framebuffer used, in bytes. NVML writes an
  unsigned long long; pynvml's wrapper reads it into a 32-bit c_uint,
  which wraps at 4 GiB, so the C function is called with a 64-bit
  buffer through pynvml's own function lookup where it has one.
- nvmlDeviceGetVgpuUtilization(handle, 0): one sample per vGPU of the
  GPU, each engine's share as an unsigned int percentage (smUtil.uiVal).
- nvmlVgpuInstanceGetLicenseInfo_v2 (isLicensed, currentState), or on
  drivers without it nvmlVgpuInstanceGetLicenseStatus (1: licensed).
- nvmlVgpuInstanceGetVmDriverVersion: the guest's driver, "Not
  Available" before the guest has loaded one.

Every series is labelled by the guest's UUID, the GPU and the type, no
more: a guest's name is not unique and changes; a guest that leaves takes
its series with it, so a host's series are its running vGPUs, a few per
GPU. Label values are checked against what they can be (a UUID, a PCI
address, `nvidia-<n>`) or cut to a short, plain text, so what a tenant
puts in its guest (a driver string) cannot make series without end.
"""
import ctypes
import re
import threading
import time
from typing import (Any, Callable, Dict, Iterable, List, NamedTuple,
                    Optional, Tuple)

from prometheus_client.core import (GaugeMetricFamily, InfoMetricFamily,
                                    Metric)

from nvidia_vgpu import names

# How long one scrape may spend in NVML. Prometheus' default scrape
# timeout is 10 s; the facts need well under a second.
BUDGET_SECONDS = 5.0
# NVML's license states (nvmlGridLicenseState_t), as label words.
LICENSE_STATES = {0: 'unknown', 1: 'uninitialized',
                  2: 'unlicensed-unrestricted', 3: 'unlicensed-restricted',
                  4: 'unlicensed', 5: 'licensed'}
# No state yet: no guest driver has asked for a license (no sample).
NO_LICENSE_STATE = ('unknown', 'uninitialized')
NVML_VGPU_VM_ID_UUID = 1
_UUID = re.compile(r'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                   r'[0-9a-f]{12}$')
# A label from free text (a type name, a guest driver): short and plain.
_PLAIN = re.compile(r'[^A-Za-z0-9 ._+()-]')
PLAIN_MAX = 48
GUEST_LABELS = ('vm_uuid', 'gpu', 'vgpu_type')

METRICS: Dict[str, str] = {
    'nvidia_vgpu_guest_metrics_read':
        '1 where the per-vGPU figures were read through NVML at this '
        'scrape; 0: not (no NVML, NVML failed, or over its time budget)',
    'nvidia_vgpu_guest_info':
        'A vGPU a running guest uses (1), by the guest\'s UUID (Nova\'s '
        'instance UUID), GPU and type, with its profile, its guest '
        'driver and its license state',
    'nvidia_vgpu_guest_framebuffer_used_bytes':
        'Framebuffer the guest uses on its vGPU, in bytes',
    'nvidia_vgpu_guest_utilization_ratio':
        'Share of its GPU\'s SM (3D/compute) time the guest\'s vGPU used '
        'in NVML\'s last sample, 0 to 1',
    'nvidia_vgpu_guest_licensed':
        '1 where the guest\'s vGPU is licensed; 0: unlicensed (its '
        'performance is restricted once the grace period ends); absent: '
        'no guest driver has asked for a license yet',
    'nvidia_vgpu_guest_vgpus_skipped':
        'vGPUs NVML lists whose guest could not be read at this scrape, '
        'or whose VM id is no UUID',
}


class GuestVgpu(NamedTuple):
    """One running vGPU as NVML reports it; None: NVML did not say."""
    vm_uuid: str
    gpu: str
    vgpu_type: str
    profile: str
    framebuffer_used_bytes: Optional[int]
    utilization_percent: Optional[float]
    license_state: str
    guest_driver: str


class GuestReading(NamedTuple):
    """What one scrape read: the vGPUs, whether NVML answered for every
    GPU in time, and how many vGPUs it listed that are not shown."""
    vgpus: List[GuestVgpu]
    read: bool
    skipped: int


NOT_READ = GuestReading([], False, 0)


def _text(value: Any) -> str:
    """pynvml gives str, bytes in older releases and in tuples."""
    if isinstance(value, bytes):
        return value.decode('utf-8', 'replace')
    return str(value)


def plain(value: Any) -> str:
    """Free text fit to be a label value: printable, short."""
    return _PLAIN.sub('', _text(value).replace('\x00', ''))[:PLAIN_MAX]


def vm_uuid(vm_id: Any) -> Optional[str]:
    """The guest's UUID from (VM id, id type); None where it is none."""
    if not isinstance(vm_id, tuple) or len(vm_id) != 2:
        return None
    found = _text(vm_id[0]).strip().lower()
    return found if vm_id[1] == NVML_VGPU_VM_ID_UUID and \
        _UUID.match(found) else None


def gpu_address(bus_id: Any) -> str:
    """NVML's bus id (00000000:84:00.0) as sysfs and the other metrics
    write it (0000:84:00.0); '' where it is no PCI address."""
    found = names.BUS_ID.fullmatch(_text(bus_id).strip().lower())
    return found.group('address') if found else ''


def profile_of(type_name: str) -> str:
    """NVIDIA's profile from a type's name, as the capacity metrics label
    it (GRID V100-8Q and NVIDIA L40S-2Q are V100-8Q and L40S-2Q); ''
    where its last word is no profile name."""
    return names.profile_of(plain(type_name)) or ''


def _framebuffer_used(nvml: Any, instance: int) -> int:
    """Bytes used, read into 64 bits (the module docstring says why)."""
    lookup = getattr(nvml, '_nvmlGetFunctionPointer', None)
    if lookup is None:
        return int(nvml.nvmlVgpuInstanceGetFbUsage(instance))
    used = ctypes.c_ulonglong(0)
    nvml._nvmlCheckReturn(lookup('nvmlVgpuInstanceGetFbUsage')(
        ctypes.c_uint(instance), ctypes.byref(used)))
    return used.value


def _license_state(nvml: Any, instance: int) -> str:
    """NVML's state where it gives one, else whether it is licensed;
    drivers before the _v2 call give only the latter."""
    try:
        info = nvml.nvmlVgpuInstanceGetLicenseInfo_v2(instance)
    except nvml.NVMLError_FunctionNotFound:
        licensed = nvml.nvmlVgpuInstanceGetLicenseStatus(instance)
        return 'licensed' if licensed == 1 else 'unlicensed'
    state = int(info.currentState)
    if state:
        return LICENSE_STATES.get(state, 'unknown')
    return 'licensed' if int(info.isLicensed) else 'unlicensed'


def _optional(nvml: Any, read: Callable[[], Any]) -> Any:
    """A figure NVML may not give (not supported, not yet): None."""
    try:
        return read()
    except (nvml.NVMLError, ValueError, TypeError, AttributeError):
        return None


def _vgpu(nvml: Any, instance: int, gpu: str,
          utilisation: Dict[int, float]) -> Optional[GuestVgpu]:
    """One vGPU; None where its guest has no UUID."""
    guest = vm_uuid(nvml.nvmlVgpuInstanceGetVmID(instance))
    if guest is None:
        return None
    type_id = int(nvml.nvmlVgpuInstanceGetType(instance))
    name = _optional(nvml, lambda: nvml.nvmlVgpuTypeGetName(type_id))
    return GuestVgpu(
        vm_uuid=guest, gpu=gpu, vgpu_type=names.type_id(type_id),
        profile=profile_of(name) if name is not None else '',
        framebuffer_used_bytes=_optional(
            nvml, lambda: _framebuffer_used(nvml, instance)),
        utilization_percent=utilisation.get(instance),
        license_state=_optional(
            nvml, lambda: _license_state(nvml, instance)) or 'unknown',
        guest_driver=plain(_optional(
            nvml, lambda: nvml.nvmlVgpuInstanceGetVmDriverVersion(
                instance)) or ''))


def _utilisation(nvml: Any, handle: Any) -> Dict[int, float]:
    """Each vGPU's SM share in NVML's latest sample of the GPU."""
    samples = _optional(nvml, lambda: nvml.nvmlDeviceGetVgpuUtilization(
        handle, 0)) or []
    found = {}
    for sample in samples:
        value = _optional(nvml, lambda: float(sample.smUtil.uiVal))
        if value is not None and 0 <= value <= 100:
            found[int(sample.vgpuInstance)] = value
    return found


def _gpu(nvml: Any, index: int) -> Tuple[str, List[int], Dict[int, float]]:
    handle = nvml.nvmlDeviceGetHandleByIndex(index)
    gpu = gpu_address(nvml.nvmlDeviceGetPciInfo(handle).busId)
    instances = [int(instance) for instance in
                 nvml.nvmlDeviceGetActiveVgpus(handle)]
    return gpu, instances, _utilisation(nvml, handle) if instances else {}


def read_guests(nvml: Any, clock: Callable[[], float] = time.monotonic,
                budget: float = BUDGET_SECONDS) -> GuestReading:
    """Every running vGPU NVML lists, within the time budget. A vGPU
    whose figures fail is skipped (counted); a GPU NVML cannot read, or
    running out of time, leaves the reading incomplete (read False)."""
    deadline = clock() + budget
    try:
        nvml.nvmlInit()
    except (nvml.NVMLError, OSError):
        return NOT_READ
    vgpus, skipped, complete = [], 0, True
    try:
        for index in range(nvml.nvmlDeviceGetCount()):
            try:
                gpu, instances, utilisation = _gpu(nvml, index)
            except (nvml.NVMLError, ValueError):
                complete = False
                continue
            for instance in instances:
                if clock() > deadline:
                    return GuestReading(vgpus, False, skipped)
                try:
                    found = _vgpu(nvml, instance, gpu, utilisation)
                except (nvml.NVMLError, ValueError, TypeError):
                    found = None
                if found is None:
                    skipped += 1
                else:
                    vgpus.append(found)
    except nvml.NVMLError:
        return GuestReading(vgpus, False, skipped)
    finally:
        _optional(nvml, nvml.nvmlShutdown)
    return GuestReading(vgpus, complete, skipped)


def load_nvml() -> Any:
    """NVIDIA's bindings, or None where the venv has none."""
    try:
        import pynvml
    except ImportError:
        return None
    return pynvml


class GuestReader:
    """Reads NVML in a thread of its own, so that a call that hangs (a
    failing GPU can hang the driver) costs a scrape its per-vGPU figures,
    not the whole scrape; while one read still hangs, no other starts."""

    def __init__(self, nvml_loader: Callable[[], Any] = load_nvml,
                 budget: float = BUDGET_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.nvml_loader = nvml_loader
        self.budget = budget
        self.clock = clock
        self._busy: Optional[threading.Thread] = None

    def read(self) -> GuestReading:
        if self._busy is not None and self._busy.is_alive():
            return NOT_READ
        nvml = self.nvml_loader()
        if nvml is None:
            return NOT_READ
        result: List[GuestReading] = []
        self._busy = threading.Thread(
            target=lambda: result.append(read_guests(
                nvml, self.clock, self.budget)), daemon=True)
        self._busy.start()
        self._busy.join(self.budget + 1.0)
        return result[0] if result else NOT_READ


def _merged(vgpus: Iterable[GuestVgpu]) -> Dict[Tuple[str, ...], GuestVgpu]:
    """One record per label set: a guest with two vGPUs of one type on
    one GPU is shown once, its framebuffer summed, its busiest share,
    its worst license state."""
    merged: Dict[Tuple[str, ...], GuestVgpu] = {}
    for vgpu in vgpus:
        key = (vgpu.vm_uuid, vgpu.gpu, vgpu.vgpu_type)
        seen = merged.get(key)
        if seen is not None:
            figures = [(seen.framebuffer_used_bytes,
                        vgpu.framebuffer_used_bytes),
                       (seen.utilization_percent, vgpu.utilization_percent)]
            vgpu = vgpu._replace(
                framebuffer_used_bytes=None if None in figures[0]
                else sum(figures[0]),
                utilization_percent=max((value for value in figures[1]
                                         if value is not None),
                                        default=None),
                license_state=seen.license_state
                if seen.license_state != 'licensed' else vgpu.license_state)
        merged[key] = vgpu
    return merged


def metric_families(reading: GuestReading) -> List[Metric]:
    """What a scrape shows of the vGPUs it read; pure."""
    def gauge(name: str, labels: Tuple[str, ...] = GUEST_LABELS):
        return GaugeMetricFamily(name, METRICS[name], labels=list(labels))
    read = gauge('nvidia_vgpu_guest_metrics_read', ())
    read.add_metric([], 1.0 if reading.read else 0.0)
    skipped = gauge('nvidia_vgpu_guest_vgpus_skipped', ())
    skipped.add_metric([], float(reading.skipped))
    info = InfoMetricFamily('nvidia_vgpu_guest',
                            METRICS['nvidia_vgpu_guest_info'],
                            labels=list(GUEST_LABELS))
    framebuffer = gauge('nvidia_vgpu_guest_framebuffer_used_bytes')
    utilisation = gauge('nvidia_vgpu_guest_utilization_ratio')
    licensed = gauge('nvidia_vgpu_guest_licensed')
    for key, vgpu in sorted(_merged(reading.vgpus).items()):
        labels = list(key)
        info.add_metric(labels, {'profile': vgpu.profile,
                                 'guest_driver': vgpu.guest_driver,
                                 'license_state': vgpu.license_state})
        if vgpu.framebuffer_used_bytes is not None:
            framebuffer.add_metric(labels,
                                   float(vgpu.framebuffer_used_bytes))
        if vgpu.utilization_percent is not None:
            utilisation.add_metric(labels, vgpu.utilization_percent / 100)
        if vgpu.license_state not in NO_LICENSE_STATE:
            licensed.add_metric(labels, 1.0 if vgpu.license_state ==
                                'licensed' else 0.0)
    return [read, skipped, info, framebuffer, utilisation, licensed]
