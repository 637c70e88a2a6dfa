"""A stand-in of NVIDIA's NVML bindings (nvidia-ml-py's `pynvml`) for
the exporter in the simulator: it answers from the simulated host's
state (SIM_STATE) instead of the driver's libnvidia-ml.so.1, which no
simulated host has.

Only what the exporter calls (nvidia_vgpu/monitoring/guest_metrics.py),
with the shapes nvidia-ml-py 13.615.71 returns (its pynvml.py was read
for each; nothing of it is copied): strings decoded, the VM id a tuple
of bytes and its type, device handles and vGPU instances opaque, the
PCI bus id bytes in NVML's 8-digit-domain form, utilisation samples
with `vgpuInstance` and `smUtil.uiVal`, license info with `isLicensed`
and `currentState`. There is no `_nvmlGetFunctionPointer`, so the
exporter takes the public framebuffer call.

What it reads from the host (sim/README.md, "Per-vGPU figures"):

- the library is there once an nvidia-vgpu-ubuntu-* package is
  installed, and answers once the nvidia module is loaded;
- the GPUs are the NVIDIA display and 3D controllers, in PCI address
  order, as nvidia-smi numbers them;
- a vGPU is active while the libvirt domain that has it runs: an mdev
  of the domain's (on the GPU or on one of its VFs, found by the VF's
  `physfn` link in /sys), or a VF it has as PCI hostdev with a vGPU type;
- each domain's `uuid` (default: a UUID made from its name) is the VM
  id, and its `vgpu` key gives the guest's figures.

Standard library only, for every series' Python (3.6 on).
"""
import json
import os
import uuid

NVML_SUCCESS = 0
NVML_ERROR_UNINITIALIZED = 1
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NOT_FOUND = 6
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_LIBRARY_NOT_FOUND = 12
NVML_ERROR_FUNCTION_NOT_FOUND = 13
NVML_VGPU_VM_ID_DOMAIN_ID = 0
NVML_VGPU_VM_ID_UUID = 1
NVML_GRID_LICENSE_STATE_UNINITIALIZED = 1
NVML_GRID_LICENSE_STATE_UNLICENSED_UNRESTRICTED = 2
NVML_GRID_LICENSE_STATE_UNLICENSED_RESTRICTED = 3
NVML_GRID_LICENSE_STATE_UNLICENSED = 4
NVML_GRID_LICENSE_STATE_LICENSED = 5
# A scenario's word for each license state (host.libvirt_domains[].vgpu).
LICENSE_WORDS = {
    'uninitialized': NVML_GRID_LICENSE_STATE_UNINITIALIZED,
    'unlicensed-unrestricted':
        NVML_GRID_LICENSE_STATE_UNLICENSED_UNRESTRICTED,
    'unlicensed-restricted': NVML_GRID_LICENSE_STATE_UNLICENSED_RESTRICTED,
    'unlicensed': NVML_GRID_LICENSE_STATE_UNLICENSED,
    'licensed': NVML_GRID_LICENSE_STATE_LICENSED}
# What NVML answers for a guest that has not loaded NVIDIA's driver.
NOT_AVAILABLE = 'Not Available'
# Where a domain without a `uuid` gets its UUID from (its name).
DOMAIN_NAMESPACE = uuid.UUID('6f1b4c1e-3c53-4a43-9d0b-7a1d7f0c5e21')
NVIDIA_VENDOR = '10de'
MIB = 1024 * 1024


class NVMLError(Exception):
    """NVML's error, by its number (pynvml's `value`)."""

    def __init__(self, value):
        super().__init__(value)
        self.value = value


class NVMLError_Uninitialized(NVMLError):  # noqa: N801 (pynvml's names)
    def __init__(self):
        super().__init__(NVML_ERROR_UNINITIALIZED)


class NVMLError_NotFound(NVMLError):  # noqa: N801
    def __init__(self):
        super().__init__(NVML_ERROR_NOT_FOUND)


class NVMLError_DriverNotLoaded(NVMLError):  # noqa: N801
    def __init__(self):
        super().__init__(NVML_ERROR_DRIVER_NOT_LOADED)


class NVMLError_LibraryNotFound(NVMLError):  # noqa: N801
    def __init__(self):
        super().__init__(NVML_ERROR_LIBRARY_NOT_FOUND)


class NVMLError_FunctionNotFound(NVMLError):  # noqa: N801
    def __init__(self):
        super().__init__(NVML_ERROR_FUNCTION_NOT_FOUND)


class _Record(object):
    """A structure's fields as attributes, as ctypes gives them."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


_host = None


def nvmlInit():  # noqa: N802 (pynvml's names)
    """Read the host once, as NVML attaches to the driver once."""
    global _host
    with open(os.environ['SIM_STATE']) as stream:
        host = json.load(stream)['host']
    if not any(name.startswith('nvidia-vgpu-ubuntu-')
               for name in host.get('packages', {})):
        raise NVMLError_LibraryNotFound()
    if 'nvidia' not in host.get('modules', []):
        raise NVMLError_DriverNotLoaded()
    _host = _model(host, os.environ.get('NVIDIA_VGPU_HOST_ROOT', '/'))


def nvmlShutdown():  # noqa: N802
    global _host
    _check()
    _host = None


def _check():
    if _host is None:
        raise NVMLError_Uninitialized()
    return _host


def _gpus(host):
    return sorted((function for function in host.get('pci', [])
                   if function['vendor'].lower() == NVIDIA_VENDOR and
                   function['class'][:4] in ('0300', '0302')),
                  key=lambda function: function['address'].lower())


def _type_names(gpus):
    """{type number: name} of every type a GPU offers, on itself, on its
    VFs or on its GPU instances."""
    names = {}
    for function in gpus:
        sriov = function.get('sriov') or {}
        offers = [function.get('mdev_types') or {},
                  sriov.get('vf_mdev_types') or {}]
        offers += list(((function.get('mig') or {}).get('vgpu_types')
                        or {}).values())
        for types in offers:
            for type_id, spec in types.items():
                names[int(str(type_id).split('-')[-1])] = spec['name']
        for number, name in (sriov.get('vf_vgpu_types') or {}).items():
            names[int(number)] = name
    return names


def _physical(root, address):
    """The GPU of a VF (its physfn link), or the address itself."""
    link = os.path.join(root, 'sys', 'bus', 'pci', 'devices', address,
                        'physfn')
    if os.path.islink(link):
        return os.path.basename(os.path.realpath(link))
    return address


def _vgpus_of(domain, host, root):
    """(GPU, type number) of each vGPU a running domain has."""
    if domain.get('state', 'running') != 'running':
        return []
    types = {mdev['uuid']: mdev for mdev in host.get('mdevs', [])}
    found = []
    for mdev_uuid in domain.get('mdevs', []):
        mdev = types.get(mdev_uuid)
        if mdev:
            found.append((_physical(root, mdev['parent']),
                          int(mdev['type'].split('-')[-1])))
    for vf in domain.get('pci', []):
        number = (host.get('vf_vgpu_types') or {}).get(vf.lower())
        if number:
            found.append((_physical(root, vf.lower()), int(number)))
    return found


def _model(host, root):
    """The GPUs in NVML's order and the active vGPUs on each."""
    gpus = _gpus(host)
    addresses = [function['address'].lower() for function in gpus]
    vgpus = {address: [] for address in addresses}
    instance = 0
    for domain in host.get('libvirt_domains', []):
        for gpu, number in _vgpus_of(domain, host, root):
            if gpu in vgpus:
                instance += 1
                vgpus[gpu].append(_vgpu(instance, number, domain))
    return {'gpus': addresses, 'vgpus': vgpus,
            'instances': {vgpu.instance: vgpu for found in vgpus.values()
                          for vgpu in found},
            'type_names': _type_names(gpus)}


def _vgpu(instance, number, domain):
    figures = domain.get('vgpu') or {}
    return _Record(
        instance=instance, type_id=number,
        vm_uuid=domain.get('uuid') or str(uuid.uuid5(DOMAIN_NAMESPACE,
                                                     domain['name'])),
        license=LICENSE_WORDS[figures.get('license', 'uninitialized')],
        driver=figures.get('guest_driver', NOT_AVAILABLE),
        utilization=int(figures.get('utilization', 0)),
        framebuffer=int(figures.get('framebuffer_used_mib', 0)) * MIB)


def _instance(vgpu_instance):
    found = _check()['instances'].get(vgpu_instance)
    if found is None:
        raise NVMLError_NotFound()
    return found


def nvmlDeviceGetCount():  # noqa: N802
    return len(_check()['gpus'])


def nvmlDeviceGetHandleByIndex(index):  # noqa: N802
    gpus = _check()['gpus']
    if not 0 <= index < len(gpus):
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
    return _Record(address=gpus[index])


def nvmlDeviceGetPciInfo(handle):  # noqa: N802
    domain, rest = handle.address.split(':', 1)
    return _Record(busId='{:08X}:{}'.format(int(domain, 16),
                                            rest.upper()).encode())


def nvmlDeviceGetActiveVgpus(handle):  # noqa: N802
    return [vgpu.instance for vgpu in _check()['vgpus'][handle.address]]


def nvmlDeviceGetVgpuUtilization(handle, timeStamp):  # noqa: N802,N803
    return [_Record(vgpuInstance=vgpu.instance, timeStamp=1,
                    smUtil=_Record(uiVal=vgpu.utilization),
                    memUtil=_Record(uiVal=0), encUtil=_Record(uiVal=0),
                    decUtil=_Record(uiVal=0))
            for vgpu in _check()['vgpus'][handle.address]]


def nvmlVgpuInstanceGetVmID(vgpuInstance):  # noqa: N802,N803
    return (_instance(vgpuInstance).vm_uuid.encode(), NVML_VGPU_VM_ID_UUID)


def nvmlVgpuInstanceGetType(vgpuInstance):  # noqa: N802,N803
    return _instance(vgpuInstance).type_id


def nvmlVgpuTypeGetName(vgpuTypeId):  # noqa: N802,N803
    names = _check()['type_names']
    if vgpuTypeId not in names:
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
    return names[vgpuTypeId]


def nvmlVgpuInstanceGetFbUsage(vgpuInstance):  # noqa: N802,N803
    return _instance(vgpuInstance).framebuffer


def nvmlVgpuInstanceGetLicenseInfo_v2(vgpuInstance):  # noqa: N802,N803
    state = _instance(vgpuInstance).license
    return _Record(isLicensed=int(state == NVML_GRID_LICENSE_STATE_LICENSED),
                   currentState=state)


def nvmlVgpuInstanceGetLicenseStatus(vgpuInstance):  # noqa: N802,N803
    return int(_instance(vgpuInstance).license ==
               NVML_GRID_LICENSE_STATE_LICENSED)


def nvmlVgpuInstanceGetVmDriverVersion(vgpuInstance):  # noqa: N802,N803
    return _instance(vgpuInstance).driver
