"""The simulated host's hardware and files: sysfs tree, /proc, .deb files.

Everything is generated under a host root directory, laid out as on a real
host, so the real lspci and the charm's own sysfs reads find it where they
would look on a compute node.
"""
import os
import re
import shutil
import stat
import struct
import subprocess
from typing import Any, Dict, Iterable, List, Sequence, Tuple

from sim import dkms, mig, noise
from sim.guests import record, running

NVIDIA_VENDOR = '10de'
# A host that boots with the NVIDIA driver already loaded (scenario
# kernel_modules) runs this version unless the scenario installs another.
DEFAULT_DRIVER_VERSION = '550.54.16'
DEFAULT_DEB_SERVICES = ('nvidia-vgpud', 'nvidia-vgpu-mgr')
# The kernel each series runs unless the scenario says (host.kernel).
DEFAULT_KERNELS = {'bionic': '4.15.0-213-generic',
                   'focal': '5.4.0-190-generic',
                   'jammy': '5.15.0-119-generic',
                   'noble': '6.8.0-45-generic'}
# The key pair Ubuntu's DKMS signs modules with, and the states of its
# certificate: none (no key yet), created (not enrolled), imported
# (mokutil --import done: confirmed at the console during the next
# boot), enrolled (in shim's MOK list).
MOK_CERTIFICATE = '/var/lib/shim-signed/mok/MOK.der'
MOK_STATES = ('none', 'created', 'imported', 'enrolled')
LOCKDOWN_MODES = ('none', 'integrity', 'confidentiality')
EFI_GLOBAL = '8be4df61-93ca-11d2-aa0d-00e098032b8c'
# Fixed timestamp for everything built here: the same scenario must give
# byte-identical resources (their sha256 is part of the charm's state).
EPOCH = 1700000000


def is_nvidia_gpu(function: Dict[str, Any]) -> bool:
    """An NVIDIA display or 3D controller: what the nvidia driver binds
    (and nvidia-smi numbers, in PCI address order)."""
    return (function['vendor'].lower() == NVIDIA_VENDOR and
            function['class'][:4] in ('0300', '0302'))


# What nvidia/vgpu_params takes to fix a vGPU's placement (NVIDIA's vGPU
# User Guide, "Placing a vGPU on a Physical GPU in Mixed-Size Mode").
PLACEMENT = 'vgpu-placement-id={}'
PLACEMENT_PATTERN = re.compile(r'vgpu-placement-id=(\d+)')


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as stream:
        stream.write(text)


def _config_space(function: Dict[str, Any]) -> bytes:
    """The first 64 bytes of PCI config space lspci reads for each device."""
    class_code = int(function['class'], 16)
    header = struct.pack(
        '<HHHHB3sBBBB',
        int(function['vendor'], 16), int(function['device'], 16),
        0x0006, 0x0010, int(function.get('revision', 'a1'), 16),
        class_code.to_bytes(3, 'little'), 0, 0, 0, 0)
    bars = bytes(24)
    subsystem = struct.pack(
        '<IHH', 0, int(function.get('subsystem_vendor') or '0', 16),
        int(function.get('subsystem_device') or '0', 16))
    return (header + bars + subsystem).ljust(64, b'\0')


def device_dir(host_root: str, address: str) -> str:
    """Where a PCI function's sysfs directory lives (under its root bus)."""
    domain_bus = address.rsplit(':', 1)[0]
    return os.path.join(host_root, 'sys', 'devices',
                        'pci' + domain_bus, address)


def _link(target: str, link: str) -> None:
    os.makedirs(os.path.dirname(link), exist_ok=True)
    os.symlink(os.path.relpath(target, os.path.dirname(link)), link)


def _write_function(host_root: str, function: Dict[str, Any],
                    driver: Any) -> str:
    path = device_dir(host_root, function['address'])
    os.makedirs(path, exist_ok=True)
    for name in ('vendor', 'device', 'subsystem_vendor', 'subsystem_device'):
        _write(os.path.join(path, name),
               '0x{}\n'.format(function.get(name) or '0000'))
    _write(os.path.join(path, 'class'), '0x{}\n'.format(function['class']))
    _write(os.path.join(path, 'revision'),
           '0x{}\n'.format(function.get('revision', 'a1')))
    with open(os.path.join(path, 'config'), 'wb') as stream:
        stream.write(_config_space(function))
    _link(path, os.path.join(host_root, 'sys', 'bus', 'pci', 'devices',
                             function['address']))
    if driver:
        driver_dir = os.path.join(host_root, 'sys', 'bus', 'pci', 'drivers',
                                  driver)
        os.makedirs(driver_dir, exist_ok=True)
        _link(driver_dir, os.path.join(path, 'driver'))
        _link(path, os.path.join(driver_dir, function['address']))
    return path


def _write_mdev_types(host_root: str, device: str, address: str,
                      types: Dict[str, Dict[str, Any]]) -> None:
    for type_id, spec in sorted(types.items()):
        type_dir = os.path.join(device, 'mdev_supported_types', type_id)
        _write(os.path.join(type_dir, 'name'), spec.get('name', '') + '\n')
        _write(os.path.join(type_dir, 'description'),
               spec.get('description', '') + '\n')
        _write(os.path.join(type_dir, 'available_instances'),
               '{}\n'.format(spec.get('available_instances', 0)))
        _write(os.path.join(type_dir, 'device_api'),
               spec.get('device_api', 'vfio-pci') + '\n')
        _write(os.path.join(type_dir, 'create'), '')
        os.makedirs(os.path.join(type_dir, 'devices'), exist_ok=True)
    if types:
        _link(device, os.path.join(host_root, 'sys', 'class', 'mdev_bus',
                                   address))


def vf_addresses(address: str, count: int) -> List[str]:
    """Addresses of a PF's first `count` VFs: function 4 onwards, as NVIDIA
    Ampere boards number them (PF 41:00.0 -> VFs 41:00.4 ... 41:00.7,
    41:01.0 ...)."""
    domain, bus, rest = address.split(':')
    slot = int(rest.split('.')[0], 16)
    result = []
    for index in range(count):
        number = slot * 8 + 4 + index
        result.append('{}:{}:{:02x}.{}'.format(
            domain, bus, number // 8, number % 8))
    return result


_MAX_INSTANCE = re.compile(r'(?:^|[ ,])max_instance=([0-9]+)')


def available_instances(types: Dict[str, Dict[str, Any]],
                        on_device: Sequence[str], on_gpu: Sequence[str],
                        sriov: bool) -> Dict[str, int]:
    """Free instances of each type on one device, as NVIDIA's driver
    shows them once vGPUs exist (../shared/reference/
    nvidia-vgpu-host-facts.md, section 3).

    types: type -> its scenario spec, whose available_instances is what
    the device shows while its GPU hosts no vGPU. on_device: the types of
    the vGPUs on this very device; on_gpu: on its whole physical GPU (the
    GPU itself or any of its VFs). A GPU runs one type at a time, so once
    it hosts a vGPU every other type shows 0. A VF hosts one vGPU: it
    shows 0 once it has one, and every other VF shows 0 too once the GPU
    hosts its type's max_instance. Without SR-IOV the GPU's own count
    falls by one per vGPU.
    """
    free = {}
    for type_id, spec in types.items():
        count = int(spec.get('available_instances', 0))
        match = _MAX_INSTANCE.search(spec.get('description', ''))
        cap = int(match.group(1)) if match else None
        if any(other != type_id for other in on_gpu):
            count = 0
        elif sriov:
            if on_device or (cap is not None and len(on_gpu) >= cap):
                count = 0
        else:
            count = max(0, count - len(on_gpu))
        free[type_id] = count
    return free


def full_gpu_available(types: Dict[str, Dict[str, Any]], address: str,
                       mdevs: Sequence[Dict[str, Any]],
                       start_mdevs: Sequence[Dict[str, Any]]
                       ) -> Dict[str, int]:
    """Free instances of each type on a GPU without SR-IOV.

    The scenario's available_instances is what the GPU shows with the
    host's mdevs at the start (scenarios give it as a host shows it).
    Each vGPU of that type made on the GPU since takes one; each of the
    start's gone gives one back, up to the type's max_instance."""
    def count(listed: Sequence[Dict[str, Any]], type_id: str) -> int:
        return sum(1 for mdev in listed if mdev['parent'] == address and
                   mdev['type'] == type_id)
    free = {}
    for type_id, spec in types.items():
        given = int(spec.get('available_instances', 0))
        now, start = count(mdevs, type_id), count(start_mdevs, type_id)
        match = _MAX_INSTANCE.search(spec.get('description', ''))
        if now >= start:
            free[type_id] = max(0, given - (now - start))
        elif match:
            free[type_id] = max(given, min(given + start - now,
                                           int(match.group(1)) - now))
        else:
            free[type_id] = given + start - now
    return free


def kernel_state(spec: Dict[str, Any], series: str) -> Dict[str, Any]:
    """The scenario's host.kernel with every default filled in: the
    series' kernel, its headers installed, no Secure Boot, no DKMS
    key; a Secure Boot host's kernel locked down (integrity), as
    Ubuntu's are."""
    kernel = {'release': DEFAULT_KERNELS[series], 'headers': True,
              'secure_boot': False, 'mok': 'none'}
    kernel.update(spec)
    kernel.setdefault('lockdown',
                      'integrity' if kernel['secure_boot'] else 'none')
    return kernel


def changed_kernel(kernel: Dict[str, Any],
                   changes: Dict[str, Any]) -> Dict[str, Any]:
    """The kernel facts after a scenario's kernel step; turning Secure
    Boot on or off moves lockdown with it unless the step sets it."""
    changed = dict(kernel, **changes)
    if 'secure_boot' in changes and 'lockdown' not in changes:
        changed['lockdown'] = ('integrity' if changed['secure_boot']
                               else 'none')
    return changed


def headers_present(host_state: Dict[str, Any]) -> bool:
    """The running kernel's headers are there: from the start
    (host.kernel.headers), or once linux-headers-<release> is
    installed."""
    return dkms.headers_for(host_state, host_state['kernel']['release'])


def signatures_required(kernel: Dict[str, Any]) -> bool:
    """The kernel refuses unsigned modules (locked down by Secure
    Boot)."""
    return kernel['secure_boot'] and kernel['lockdown'] != 'none'


def write_kernel_files(host_root: str, host_state: Dict[str, Any]) -> None:
    """What the running kernel and its packages put outside /sys:
    /proc/sys/kernel/osrelease, the headers' build link
    (/lib/modules/<release>/build -> /usr/src/linux-headers-<release>,
    relative so that it stays in the sandbox), DKMS's key pair and the
    modules it built."""
    kernel = host_state['kernel']
    release = kernel['release']
    _write(os.path.join(host_root, 'proc', 'sys', 'kernel', 'osrelease'),
           release + '\n')
    modules = os.path.join(host_root, 'lib', 'modules', release)
    tree = os.path.join(host_root, 'usr', 'src', 'linux-headers-' + release)
    link = os.path.join(modules, 'build')
    if os.path.lexists(link):
        os.remove(link)
    shutil.rmtree(tree, ignore_errors=True)
    os.makedirs(modules, exist_ok=True)
    if headers_present(host_state):
        os.makedirs(os.path.join(tree, 'include'))
        _link(tree, link)
    certificate = host_root + MOK_CERTIFICATE
    if kernel['mok'] == 'none':
        for path in (certificate, certificate[:-len('.der')] + '.priv'):
            if os.path.exists(path):
                os.remove(path)
    else:
        os.makedirs(os.path.dirname(certificate), exist_ok=True)
        with open(certificate, 'wb') as stream:
            stream.write(b'0\x82\x03\x1csim DKMS module signing key')
        _write(certificate[:-len('.der')] + '.priv', 'sim private key\n')
    dkms.write_modules(host_root, host_state)


def _write_efi(sys_root: str, kernel: Dict[str, Any]) -> None:
    """Firmware variables as efivarfs shows them (4 bytes of attributes,
    then the value) and the kernel's lockdown; legacy BIOS hosts are
    not simulated: every host boots with EFI."""
    efivars = os.path.join(sys_root, 'firmware', 'efi', 'efivars')
    os.makedirs(efivars, exist_ok=True)
    for name, value in (('SecureBoot', int(kernel['secure_boot'])),
                        ('SetupMode', 0)):
        with open(os.path.join(efivars, '{}-{}'.format(name, EFI_GLOBAL)),
                  'wb') as stream:
            stream.write(b'\x06\x00\x00\x00' + bytes([value]))
    _write(os.path.join(sys_root, 'kernel', 'security', 'lockdown'),
           ' '.join('[{}]'.format(mode) if mode == kernel['lockdown']
                    else mode for mode in LOCKDOWN_MODES) + '\n')


def generate_sysfs(host_root: str, pci: Iterable[Dict[str, Any]],
                   hardware: Dict[str, Any]) -> None:
    """(Re)build /sys from the scenario's PCI functions and host state.

    hardware: {'nvidia_loaded': bool, 'nvidia_version': str,
    'vfs': {pf: count},
    'mdevs': [{'uuid', 'parent', 'type'}],
    'start_mdevs': the mdevs the scenario started with (default: mdevs),
    'vf_vgpu_types': {VF: the vGPU type id it was given (vendor-specific
    VFIO); VFs not named have 0},
    'sysfs_noise': entries of unrelated server content (0: none),
    'kernel': kernel_state() (Secure Boot, lockdown),
    'mig': each MIG-capable GPU's mode and GPU instances (sim/mig.py);
    a GPU not named there has no MIG}.
    """
    sys_root = os.path.join(host_root, 'sys')
    shutil.rmtree(sys_root, ignore_errors=True)
    os.makedirs(os.path.join(sys_root, 'bus', 'pci', 'devices'))
    if hardware.get('kernel'):
        _write_efi(sys_root, hardware['kernel'])
    nvidia_loaded = hardware.get('nvidia_loaded', False)
    if nvidia_loaded:
        _write(os.path.join(sys_root, 'module', 'nvidia', 'version'),
               '{}\n'.format(hardware.get('nvidia_version') or
                             DEFAULT_DRIVER_VERSION))
    for function in pci:
        driver = function.get('driver')
        if is_nvidia_gpu(function):
            driver = 'nvidia' if nvidia_loaded else (
                driver if driver != 'nvidia' else None)
        device = _write_function(host_root, function, driver)
        sriov = function.get('sriov')
        if sriov:
            _write(os.path.join(device, 'sriov_totalvfs'),
                   '{}\n'.format(sriov['total_vfs']))
            enabled = hardware.get('vfs', {}).get(function['address'], 0)
            _write(os.path.join(device, 'sriov_numvfs'),
                   '{}\n'.format(enabled))
            vfs = vf_addresses(function['address'], enabled)
            parent_of = {mdev['parent']: mdev['type']
                         for mdev in hardware.get('mdevs', [])}
            on_gpu = [parent_of[vf] for vf in vfs if vf in parent_of]
            for index, vf in enumerate(vfs):
                vf_function = dict(function, address=vf)
                vf_function.pop('sriov', None)
                vf_device = _write_function(
                    host_root, vf_function,
                    'nvidia' if nvidia_loaded else None)
                _link(device, os.path.join(vf_device, 'physfn'))
                _link(vf_device, os.path.join(device,
                                              'virtfn{}'.format(index)))
                if nvidia_loaded:
                    _write_mdev_types(host_root, vf_device, vf, _vf_offers(
                        hardware, function, vf, parent_of, on_gpu))
                    if mig.vfio_form(function):
                        _write_mig_vgpu_types(vf_device, hardware,
                                              function, vf)
                    else:
                        _write_vgpu_types(
                            vf_device, creatable_time_sliced(
                                function, hardware, vf),
                            hardware.get('vf_vgpu_types', {}).get(vf, 0))
        elif is_nvidia_gpu(function) and nvidia_loaded:
            types = function.get('mdev_types', {})
            mdevs = hardware.get('mdevs', [])
            free = full_gpu_available(
                types, function['address'], mdevs,
                hardware.get('start_mdevs', mdevs))
            _write_mdev_types(host_root, device, function['address'], {
                type_id: dict(spec, available_instances=free[type_id])
                for type_id, spec in types.items()})
    for mdev in hardware.get('mdevs', []):
        parent = device_dir(host_root, mdev['parent'])
        if not os.path.isdir(parent):
            continue
        mdev_dir = os.path.join(parent, mdev['uuid'])
        os.makedirs(mdev_dir)
        type_dir = os.path.join(parent, 'mdev_supported_types', mdev['type'])
        if os.path.isdir(type_dir):
            _link(type_dir, os.path.join(mdev_dir, 'mdev_type'))
        _link(mdev_dir, os.path.join(sys_root, 'bus', 'mdev', 'devices',
                                     mdev['uuid']))
        # Written to take the vGPU away; NVIDIA's placement parameter.
        _write(os.path.join(mdev_dir, 'remove'), '')
        _write(os.path.join(mdev_dir, 'nvidia', 'vgpu_params'),
               PLACEMENT.format(mdev['placement'])
               if 'placement' in mdev else '')
    if hardware.get('sysfs_noise'):
        noise.populate(sys_root, hardware['sysfs_noise'])


def _vf_offers(hardware: Dict[str, Any], function: Dict[str, Any], vf: str,
               parent_of: Dict[str, str],
               on_gpu: List[str]) -> Dict[str, Dict[str, Any]]:
    """The mdev types a VF lists, with their available_instances: while
    its GPU's MIG mode is enabled, the MIG-backed ones (sim/mig.py);
    otherwise the time-sliced ones (sriov.vf_mdev_types)."""
    if mig.mig_enabled(hardware, function):
        # On the VFIO form a VF offers its MIG-backed types in
        # creatable_vgpu_types instead (_write_mig_vgpu_types).
        return ({} if mig.vfio_form(function)
                else mig.vf_mdev_types(hardware, function, vf))
    vf_types = function['sriov'].get('vf_mdev_types', {})
    if hardware.get('mixed_modes', {}).get(function['address']) == 'Enabled':
        free = mixed_available(function, vf in parent_of, on_gpu)
    else:
        free = available_instances(
            vf_types, [parent_of[vf]] if vf in parent_of else [], on_gpu,
            sriov=True)
    return {type_id: dict(spec, available_instances=free[type_id])
            for type_id, spec in vf_types.items()}


def mixed_available(function: Dict[str, Any], occupied: bool,
                    on_gpu: List[str]) -> Dict[str, int]:
    """A VF's free instances while its GPU is in mixed-size mode: one
    of each type with placements while the VF holds no vGPU and the GPU
    fewer of that type than its supported placements (NVIDIA's mixed
    maximum); where the placements themselves leave room is judged when
    a vGPU's placement is fixed (placement_refusals)."""
    placements = function['sriov']['mixed_size'].get('placements', {})
    return {type_id: int(not occupied and type_id in placements and
                         on_gpu.count(type_id) < len(
                             placements[type_id]['ids']))
            for type_id in function['sriov'].get('vf_mdev_types', {})}


def _write_vgpu_types(vf_device: str, types: Dict[Any, str],
                      current: int, always: bool = False) -> None:
    """The vendor-specific VFIO layout: no mdev, a table per VF, and
    the type the VF was given (0: none); with always, even where the
    table lists no type (its heading alone)."""
    if not types and not always:
        return
    lines = ['ID    : vGPU Name']
    lines += ['{:<6}: {}'.format(type_id, name)
              for type_id, name in sorted(types.items(),
                                          key=lambda item: int(item[0]))]
    _write(os.path.join(vf_device, 'nvidia', 'creatable_vgpu_types'),
           '\n'.join(lines) + '\n')
    _write(os.path.join(vf_device, 'nvidia', 'current_vgpu_type'),
           '{}\n'.format(current))


# Where a VF of a MIG-capable GPU on the VFIO form holds no GI, its
# nvidia/gpu_instance_id is a socket file: it is listed, and opening it
# fails with ENXIO (open(2)), as reading NVIDIA's file does until a vGPU
# exists (sim/README.md, "MIG").
GPU_INSTANCE_ID_UNSET = 0o444 | stat.S_IFSOCK


def _write_mig_vgpu_types(vf_device: str, hardware: Dict[str, Any],
                          function: Dict[str, Any], vf: str) -> None:
    """A VF of a MIG-capable GPU on the vendor-specific VFIO driver
    (sim/mig.py, vfio_form): its creatable_vgpu_types as MIG mode and
    the free GIs make it, its current_vgpu_type, and gpu_instance_id:
    the id of the GI it holds, else unreadable (ENXIO)."""
    _write_vgpu_types(vf_device, mig.creatable_vgpu_types(hardware,
                                                          function),
                      hardware.get('vf_vgpu_types', {}).get(vf, 0),
                      always=True)
    path = os.path.join(vf_device, 'nvidia', 'gpu_instance_id')
    if os.path.lexists(path):
        os.remove(path)
    gi = mig.vf_gpu_instance(hardware, function, vf)
    if gi:
        _write(path, '{}\n'.format(gi['id']))
    else:
        os.mknod(path, GPU_INSTANCE_ID_UNSET)


def creatable_time_sliced(function: Dict[str, Any], hardware: Dict[str, Any],
                          vf: str) -> Dict[Any, str]:
    """The time-sliced types a VF of the vendor-specific VFIO form lists
    in nvidia/creatable_vgpu_types: those of sriov.vf_vgpu_types, less,
    on a VF without a type, each type its GPU already holds as many of as
    its maximum (sriov.vgpu_type_max_instances, NVIDIA's "Max Instances"
    of `nvidia-smi vgpu -s -v`): a VF lists what it can take now."""
    sriov = function['sriov']
    table = sriov.get('vf_vgpu_types', {})
    typed = hardware.get('vf_vgpu_types', {})
    if typed.get(vf):
        return table
    held = _held_per_type(function, hardware)
    most = {int(number): count for number, count in
            sriov.get('vgpu_type_max_instances', {}).items()}
    return {number: name for number, name in table.items()
            if int(number) not in most or
            held.get(int(number), 0) < most[int(number)]}


def _held_per_type(function: Dict[str, Any],
                   hardware: Dict[str, Any]) -> Dict[int, int]:
    """type number -> how many of the GPU's VFs have it now."""
    enabled = hardware.get('vfs', {}).get(function['address'], 0)
    held: Dict[int, int] = {}
    for vf in vf_addresses(function['address'], enabled):
        number = hardware.get('vf_vgpu_types', {}).get(vf, 0)
        if number:
            held[number] = held.get(number, 0) + 1
    return held


def _time_sliced_refusals(host_state: Dict[str, Any],
                          function: Dict[str, Any],
                          written: Dict[str, Tuple[int, int]]
                          ) -> Dict[str, str]:
    """VF -> why the driver refuses the type written to it, on the
    vendor-specific VFIO form without MIG: a type the VFs do not list,
    or one its GPU holds as many of as its maximum already; writes are
    taken in address order, as the charm writes them."""
    sriov = function['sriov']
    table = {int(number) for number in sriov.get('vf_vgpu_types', {})}
    most = {int(number): count for number, count in
            sriov.get('vgpu_type_max_instances', {}).items()}
    held = _held_per_type(function, host_state)
    refused = {}
    for vf, (old, new) in sorted(written.items()):
        if old:
            held[old] -= 1
        if not new:
            continue
        if new not in table:
            refused[vf] = 'type {} is not a type of this GPU'.format(new)
        elif new in most and held.get(new, 0) >= most[new]:
            refused[vf] = ('the GPU holds {} of type {} already, its '
                           'maximum').format(most[new], new)
        else:
            held[new] = held.get(new, 0) + 1
            continue
        if old:
            held[old] += 1
    return refused


def collect_vf_vgpu_types(host_root: str, host_state: Dict[str, Any],
                          step: int = 0) -> List[tuple]:
    """Keep in host_state['vf_vgpu_types'] the vGPU types written to the
    VFs' nvidia/current_vgpu_type (by the charm, its boot unit), which
    are host state the next regeneration of /sys must not lose; return
    what changed, [(VF, old type, new type)], in address order.

    Only VFs whose file exists are read: a type given to a VF not (yet)
    enabled stays as it is.

    On a MIG-capable GPU whose VFs use the VFIO form (sim/mig.py), the
    driver takes or refuses each write (mig.write_vf_types): a refused
    one (EIO on a real host) is undone here, the VF keeping its type,
    and noted in host_state['vf_type_refusals'] ({'step', 'vf', 'type',
    'why'}; step: the scenario step it happened in); the GPU's VFs'
    nvidia/ files are then written again (which types are creatable,
    which GI each VF holds).
    """
    types = host_state.setdefault('vf_vgpu_types', {})
    changes = []
    for function in host_state['pci']:
        enabled = host_state['vfs'].get(function['address'], 0)
        if not function.get('sriov') or not enabled:
            continue
        vfs = vf_addresses(function['address'], enabled)
        written = {}
        for vf in vfs:
            path = os.path.join(device_dir(host_root, vf), 'nvidia',
                                'current_vgpu_type')
            try:
                with open(path) as stream:
                    new = int(stream.read().strip() or '0')
            except (OSError, ValueError):
                continue
            old = types.get(vf, 0)
            if new != old:
                written[vf] = (old, new)
        drives = (written and mig.vfio_form(function) and
                  function['address'] in host_state.get('mig', {}))
        time_sliced = bool(written and not drives and function[
            'sriov'].get('vf_vgpu_types'))
        refused = mig.write_vf_types(host_state, function,
                                     written) if drives else (
            _time_sliced_refusals(host_state, function, written)
            if time_sliced else {})
        noted = [{'step': step, 'vf': vf, 'type': written[vf][1],
                  'why': why} for vf, why in sorted(refused.items())]
        if noted:
            host_state.setdefault('vf_type_refusals', []).extend(noted)
        for vf, (old, new) in written.items():
            if vf in refused:
                continue
            changes.append((vf, old, new))
            if new:
                types[vf] = new
            else:
                types.pop(vf)
        if drives:
            for vf in vfs:
                _write_mig_vgpu_types(device_dir(host_root, vf),
                                      host_state, function, vf)
        elif time_sliced:
            for vf in vfs:
                _write_vgpu_types(
                    device_dir(host_root, vf), creatable_time_sliced(
                        function, host_state, vf), types.get(vf, 0),
                    always=True)
    return changes


def write_proc_modules(host_root: str, modules: Iterable[str]) -> None:
    """/proc/modules as the kernel prints it (name size refcount deps state
    address), which is what the charm reads to know the loaded driver."""
    _write(os.path.join(host_root, 'proc', 'modules'), ''.join(
        '{} 16384 0 - Live 0x0000000000000000\n'.format(name)
        for name in modules))


def build_deb(work_dir: str, spec: Dict[str, Any]) -> str:
    """A real Debian package, as NVIDIA ships the vGPU host software:
    systemd units for its daemons and the sriov-manage tool; with
    dkms_source, its kernel module's sources for DKMS under
    /usr/src/nvidia-<version>/."""
    package, version = spec['package'], spec['version']
    root = os.path.join(work_dir, '{}_{}'.format(package, version))
    shutil.rmtree(root, ignore_errors=True)
    control = [
        'Package: {}'.format(package),
        'Version: {}'.format(version),
        'Architecture: {}'.format(spec.get('architecture', 'amd64')),
        'Maintainer: NVIDIA Corporation <linux-bugs@nvidia.com>',
    ]
    if spec.get('depends', 'dkms'):
        control.append('Depends: {}'.format(spec.get('depends', 'dkms')))
    control.append('Description: {}'.format(
        spec.get('description',
                 'NVIDIA vGPU Manager for KVM, version {}'.format(version))))
    _write(os.path.join(root, 'DEBIAN', 'control'), '\n'.join(control) + '\n')
    for service in spec.get('services', DEFAULT_DEB_SERVICES):
        _write(os.path.join(root, 'lib', 'systemd', 'system',
                            service + '.service'),
               '[Unit]\nDescription={}\n\n[Service]\nExecStart=/usr/bin/{}\n'
               '\n[Install]\nWantedBy=multi-user.target\n'.format(
                   service, service))
    _write(os.path.join(root, 'usr', 'lib', 'nvidia', 'sriov-manage'),
           '#!/bin/sh\n')
    if spec.get('dkms_source'):
        # The kernel module's sources, which the package's maintainer
        # scripts hand to DKMS (module nvidia).
        source = os.path.join(root, 'usr', 'src', 'nvidia-' + version)
        _write(os.path.join(source, 'dkms.conf'),
               'PACKAGE_NAME="nvidia"\nPACKAGE_VERSION="{}"\n'
               'BUILT_MODULE_NAME[0]="nvidia"\n'
               'BUILT_MODULE_NAME[1]="nvidia-vgpu-vfio"\n'
               'DEST_MODULE_LOCATION[0]="/updates/dkms"\n'
               'DEST_MODULE_LOCATION[1]="/updates/dkms"\n'
               'AUTOINSTALL="yes"\n'.format(version))
        _write(os.path.join(source, 'Makefile'), 'obj-m := nvidia.o\n')
    for directory, _, files in os.walk(root):
        for name in files + ['.']:
            os.utime(os.path.join(directory, name), (EPOCH, EPOCH))
    output = root + '.deb'
    env = dict(os.environ, SOURCE_DATE_EPOCH=str(EPOCH))
    subprocess.run(['dpkg-deb', '--root-owner-group', '-Zxz', '--build',
                    root, output], check=True, env=env,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return output


LIBVIRT_DOMAINS = os.path.join('etc', 'libvirt', 'qemu')
# libvirt's live state of each running domain (gone when it stops).
LIBVIRT_LIVE_STATE = os.path.join('run', 'libvirt', 'qemu')


def _pci_source(address: str) -> str:
    """A host PCI address as libvirt writes it in a hostdev's source."""
    domain, bus, rest = address.lower().split(':')
    slot, function = rest.split('.')
    return ("<address domain='0x{}' bus='0x{}' slot='0x{}' "
            "function='0x{}'/>".format(domain, bus, slot, function))


def domain_xml(domain: Dict[str, Any]) -> str:
    """A guest's definition as libvirt keeps it: its vGPUs as hostdevs,
    an mdev by UUID, a VF of the vendor-specific VFIO driver as a plain
    PCI hostdev (as Nova's libvirt driver asks for either). Each hostdev
    also has the address libvirt gives it inside the guest, as libvirt
    writes it, so that only its <source> names the host's device."""
    hostdevs = []
    for uuid in domain.get('mdevs', []):
        hostdevs.append(
            "    <hostdev mode='subsystem' type='mdev' managed='no' "
            "model='vfio-pci' display='off'>\n"
            "      <source>\n        <address uuid='{}'/>\n"
            "      </source>\n".format(uuid))
    for address in domain.get('pci', []):
        hostdevs.append(
            "    <hostdev mode='subsystem' type='pci' managed='no'>\n"
            "      <source>\n        {}\n      </source>\n".format(
                _pci_source(address)))
    text = ''.join(
        "{}      <address type='pci' domain='0x0000' bus='0x00' "
        "slot='0x{:02x}' function='0x0'/>\n    </hostdev>\n".format(
            hostdev, 5 + index)
        for index, hostdev in enumerate(hostdevs))
    return ("<domain type='kvm'>\n  <name>{}</name>\n  <devices>\n{}"
            "  </devices>\n</domain>\n".format(domain['name'], text))


def live_state_xml(domain: Dict[str, Any], number: int) -> str:
    """What libvirt keeps of a running domain: its live definition (with
    the id it runs under) inside a domstatus record; number: its place
    among the running ones, for the id and a made-up QEMU pid."""
    definition = domain_xml(domain).replace(
        "<domain type='kvm'>", "<domain type='kvm' id='{}'>".format(number))
    return ("<domstatus state='running' reason='booted' pid='{}'>\n"
            "{}</domstatus>\n".format(4000 + number, definition))


def write_libvirt_domains(host_root: str,
                          domains: Iterable[Dict[str, Any]]) -> None:
    """The guests libvirt has become exactly these: a definition each
    under /etc/libvirt/qemu, and for each running one its live state
    under /run/libvirt/qemu; the files of any others gone."""
    for where in (LIBVIRT_DOMAINS, LIBVIRT_LIVE_STATE):
        directory = os.path.join(host_root, where)
        if os.path.isdir(directory):
            for name in os.listdir(directory):
                if name.endswith('.xml'):
                    os.remove(os.path.join(directory, name))
    number = 0
    for domain in domains:
        _write_root_only(os.path.join(host_root, LIBVIRT_DOMAINS,
                                      domain['name'] + '.xml'),
                         domain_xml(domain))
        if running(domain):
            number += 1
            _write_root_only(os.path.join(host_root, LIBVIRT_LIVE_STATE,
                                          domain['name'] + '.xml'),
                             live_state_xml(domain, number))
    live = os.path.join(host_root, LIBVIRT_LIVE_STATE)
    if os.path.isdir(live):
        os.chmod(live, 0o700)


def _write_root_only(path: str, text: str) -> None:
    """libvirt's files are root's alone on Ubuntu (0600): a program
    run as another user (the exec step) cannot read them."""
    _write(path, text)
    os.chmod(path, 0o600)


def hardware_state(host_state: Dict[str, Any]) -> Dict[str, Any]:
    """What generate_sysfs needs from the simulator's host state."""
    return {'nvidia_loaded': 'nvidia' in host_state['modules'],
            'nvidia_version': host_state.get('nvidia_version'),
            'vfs': host_state['vfs'], 'mdevs': host_state['mdevs'],
            'start_mdevs': host_state.get('start_mdevs',
                                          host_state['mdevs']),
            'vf_vgpu_types': host_state.get('vf_vgpu_types', {}),
            'sysfs_noise': host_state.get('sysfs_noise', 0),
            'kernel': host_state.get('kernel'),
            'mig': host_state.get('mig', {}),
            'mixed_modes': host_state.get('mixed_modes', {})}


# What charm-nova-compute renders at its defaults, in the lines the charm
# reads: live-migration-permit-post-copy false renders no
# live_migration_permit_post_copy line (templates/*/nova.conf), so Nova
# takes its default, off.
NOVA_CONF = '/etc/nova/nova.conf'
DEFAULT_NOVA_CONF = ('# rendered by charm-nova-compute (the simulator\'s '
                     'stand-in)\n[DEFAULT]\n[libvirt]\nvirt_type = kvm\n')


def write_nova_conf(host_root: str, host_state: Dict[str, Any]) -> None:
    """nova-compute's configuration once the principal installed Nova
    (nova-common): the scenario's host.nova_conf, else the defaults'."""
    if 'nova-common' not in host_state['packages']:
        return
    path = host_root + NOVA_CONF
    if not os.path.exists(path):
        _write(path, host_state.get('nova_conf') or DEFAULT_NOVA_CONF)


# ---- vGPUs a process made, removed or placed through sysfs --------------

def created_mdevs(sys_root: str) -> List[Dict[str, Any]]:
    """The vGPUs whose UUIDs were written to a type's create file."""
    created = []
    mdev_bus = os.path.join(sys_root, 'class', 'mdev_bus')
    for parent in sorted(os.listdir(mdev_bus)) if os.path.isdir(
            mdev_bus) else []:
        types_dir = os.path.join(mdev_bus, parent, 'mdev_supported_types')
        for type_id in sorted(os.listdir(types_dir)):
            with open(os.path.join(types_dir, type_id, 'create')) as f:
                created += [{'uuid': uuid, 'parent': parent, 'type': type_id}
                            for uuid in f.read().split()]
    return created


def mdevs_now(sys_root: str, mdevs: List[Dict[str, Any]]
              ) -> List[Dict[str, Any]]:
    """The vGPUs as the kernel has them while a process runs: the state's,
    with what processes created and removed through sysfs since it was
    last taken in (the runner takes it in when they end)."""
    removed = removed_mdevs(sys_root, mdevs)
    return [mdev for mdev in mdevs if mdev not in removed] + \
        created_mdevs(sys_root)


def _mdev_file(sys_root: str, uuid: str, *parts: str) -> str:
    return os.path.join(sys_root, 'bus', 'mdev', 'devices', uuid, *parts)


def _read_text(path: str) -> str:
    try:
        with open(path) as stream:
            return stream.read()
    except OSError:
        return ''


def removed_mdevs(sys_root: str, mdevs: List[Dict[str, Any]]
                  ) -> List[Dict[str, Any]]:
    """The vGPUs a 1 was written to the remove file of."""
    return [mdev for mdev in mdevs if _read_text(
        _mdev_file(sys_root, mdev['uuid'], 'remove')).strip() == '1']


def written_placements(sys_root: str, mdevs: List[Dict[str, Any]]
                       ) -> Dict[str, int]:
    """uuid -> the placement written to its nvidia/vgpu_params, where it
    is not the one the state has."""
    found = {}
    for mdev in mdevs:
        match = PLACEMENT_PATTERN.search(_read_text(_mdev_file(
            sys_root, mdev['uuid'], 'nvidia', 'vgpu_params')))
        if match and int(match.group(1)) != mdev.get('placement'):
            found[mdev['uuid']] = int(match.group(1))
    return found


def take_in_mdev_writes(sys_root: str, host: Dict[str, Any],
                        step: int) -> bool:
    """Take what processes did to vGPUs through sysfs into the host state,
    as the kernel would have done it: UUIDs written to a type's create
    file made vGPUs, a 1 written to a vGPU's remove took it away (a guest
    using it loses it), a placement written to its nvidia/vgpu_params
    fixes where it sits in mixed-size mode. Whether anything changed."""
    created = created_mdevs(sys_root)
    removed = removed_mdevs(sys_root, host['mdevs'])
    placed = written_placements(sys_root, host['mdevs'] + created)
    if not (created or removed or placed):
        return False
    for mdev in removed:
        record(host, step, [domain['name'] for domain in
                            host.get('libvirt_domains', [])
                            if mdev['uuid'] in domain.get('mdevs', [])],
               'vGPU {} removed'.format(mdev['uuid']))
    host['mdevs'] = [mdev for mdev in host['mdevs'] + created
                     if mdev not in removed]
    for mdev in host['mdevs']:
        if mdev['uuid'] in placed:
            mdev['placement'] = placed[mdev['uuid']]
    for refusal in check_placements(host):
        if dict(refusal, step=step) not in host.setdefault(
                'placement_refusals', []):
            host['placement_refusals'].append(dict(refusal, step=step))
    return True


def check_placements(host: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Each vGPU on a GPU in mixed-size mode whose fixed placement its
    VM could not start with (NVIDIA's guide: an invalid or taken
    placement ID stops the VM booting), because the type does not list
    it or it overlaps another vGPU's: what placement_refusals keeps,
    with the step, from each time a process changed vGPUs."""
    refusals = []
    for function in host['pci']:
        mixed = function.get('sriov', {}).get('mixed_size')
        if not mixed or host.get('mixed_modes', {}).get(
                function['address']) != 'Enabled':
            continue
        table = mixed.get('placements', {})
        vfs = set(vf_addresses(function['address'],
                               host['vfs'].get(function['address'], 0)))
        taken: Dict[int, str] = {}
        for mdev in sorted(host['mdevs'], key=lambda m: m['uuid']):
            if mdev['parent'] not in vfs or 'placement' not in mdev:
                continue
            start, spec = mdev['placement'], table.get(mdev['type'])
            if spec is None or start not in spec['ids']:
                refusals.append({'uuid': mdev['uuid'], 'placement': start,
                                 'why': '{} lists no such placement'.format(
                                     mdev['type'])})
                continue
            slots = range(start, start + spec['size'])
            clash = sorted({taken[slot] for slot in slots if slot in taken})
            if clash:
                refusals.append({'uuid': mdev['uuid'], 'placement': start,
                                 'why': 'overlaps ' + ', '.join(clash)})
                continue
            taken.update({slot: mdev['uuid'] for slot in slots})
    return refusals
