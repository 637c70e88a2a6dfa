"""Reading and checking scenario files (the contract's YAML)."""
import os
import re
from typing import Any, Dict, List

import yaml

from sim import guests as simguests, host as simhost, mig as simmig
from sim import pythons


class ScenarioError(Exception):
    """A scenario the simulator cannot run; the message is one line."""


HOOK_STEPS = {
    'install', 'config-changed', 'start', 'stop', 'update-status',
    'upgrade-charm', 'leader-elected', 'leader-settings-changed',
    'pre-series-upgrade', 'post-series-upgrade', 'remove',
}
RELATION_HOOK_SUFFIXES = ('-relation-created', '-relation-joined',
                          '-relation-changed', '-relation-departed',
                          '-relation-broken')

_TOP = {'name': str, 'host': dict, 'config': dict, 'resources': dict,
        'relations': dict, 'steps': list, 'juju_version': str,
        'series_upgrade_target': str}
# The Ubuntu release a series upgrade goes to (series_upgrade_target),
# and the base Juju 3 names it by.
TARGET_BASES = {'bionic': 'ubuntu@18.04', 'focal': 'ubuntu@20.04',
                'jammy': 'ubuntu@22.04', 'noble': 'ubuntu@24.04'}
# JUJU_VERSION as Juju sets it: 2.9.49, 3.4.5, 3.6-beta2.
_JUJU_VERSION = re.compile(r'^\d+\.\d+(?:[.-][0-9a-z.]+)?$')
_HOST = {'packages': dict, 'kernel_modules': list, 'pci': list,
         'mdevs': list, 'libvirt_domains': list, 'series': str,
         'unavailable_packages': list, 'sysfs_noise': int,
         'vf_vgpu_types': dict, 'kernel': dict, 'kernel_messages': list,
         'nova_conf': str}
# The running kernel and what a DKMS build meets (host.kernel, and the
# kernel step).
_KERNEL = {'release': str, 'headers': bool, 'secure_boot': bool,
           'lockdown': str, 'mok': str}
_KERNEL_RELEASE = re.compile(r'^\d+\.\d+\.\d+[-.+~0-9A-Za-z]*$')
_PCI = {'address': str, 'vendor': str, 'device': str, 'class': str,
        'subsystem_vendor': str, 'subsystem_device': str,
        'driver': (str, type(None)), 'mdev_types': dict, 'sriov': dict,
        'revision': str, 'mig': dict}
_SRIOV = {'total_vfs': int, 'vf_mdev_types': dict, 'vf_vgpu_types': dict,
          'mixed_size': dict, 'vgpu_type_max_instances': dict}
_MIXED_SIZE = {'supported': bool, 'mode': str, 'placements': dict}
_PLACEMENTS = {'size': int, 'ids': list}
# A MIG-capable GPU (contract), and its compute slices (an addition).
_MIG = {'mode': str, 'mode_survives_reboot': bool,
        'gpu_instance_profiles': list, 'vgpu_types': dict, 'slices': int,
        'memory_slices': int, 'vgpu_types_per_gi': dict}
_GI_PROFILE = {'id': int, 'name': str, 'max': int, 'placements': list,
               'size': int}
# The memory slices a MIG GPU's placements count unless the scenario
# says (A100, H100, H200, B200: 8), and the most any does (the RTX PRO
# 6000 Blackwell's `-lgipp` counts 12, docs/facts/blackwell-mig.md §2).
_MEMORY_SLICES = 8
_MOST_MEMORY_SLICES = 12
_MDEV_TYPE = {'name': str, 'description': str,
              'available_instances': int, 'device_api': str}
_MDEV = {'uuid': str, 'parent': str, 'type': str, 'defined': bool}
_DOMAIN = {'name': str, 'mdevs': list, 'pci': list, 'state': str,
           'uuid': str, 'vgpu': dict}
# What the simulated NVML reports of a guest's vGPU (an addition).
_GUEST_VGPU = {'license': str, 'guest_driver': str, 'utilization': int,
               'framebuffer_used_mib': int}
_GUEST_LICENSES = ('licensed', 'unlicensed', 'unlicensed-restricted',
                   'unlicensed-unrestricted', 'uninitialized')
_DOMAIN_UUID = re.compile(r'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-'
                          r'[0-9a-f]{4}-[0-9a-f]{12}$')
_GUESTS = {'libvirt_domains': list, 'mdevs': list}
# A program run on the host (exec): its argv, argv[0] its path there.
_EXEC = {'argv': list, 'user': str}
_USER = re.compile(r'^[a-z_][a-z0-9_-]*$')
# A PCI function's full address, as sysfs and libvirt name it.
_PCI_ADDRESS = re.compile(r'^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}'
                          r'\.[0-7]$')
_DEB = {'package': str, 'version': str, 'architecture': str,
        'depends': str, 'description': str, 'services': list,
        'dkms_source': bool}
_STEP_KINDS = {'action', 'params', 'reboot', 'config', 'attach', 'remote',
               'relation-departed', 'packages', 'services', 'guests',
               'kernel', 'faults', 'exec', 'pci', 'kernel_messages'}
# Host commands a faults step can make fail (the fake tools' names).
FAULTABLE = ('apt-get', 'dpkg', 'mdevctl', 'nvidia-smi', 'sriov-manage',
             'update-initramfs')


def _whole(value: Any, least: int = 0) -> bool:
    """Whether a scenario's value is a whole number, at least `least`
    (YAML's true and false are not numbers here)."""
    return (isinstance(value, int) and not isinstance(value, bool)
            and value >= least)


def _check_keys(where: str, data: Any, allowed: Dict[str, Any],
                required: tuple = ()) -> None:
    if not isinstance(data, dict):
        raise ScenarioError('{}: expected a mapping, got {}'.format(
            where, type(data).__name__))
    for key, value in data.items():
        if key not in allowed:
            raise ScenarioError('{}: unknown key {!r}'.format(where, key))
        if not isinstance(value, allowed[key]) or (
                allowed[key] is int and isinstance(value, bool)):
            raise ScenarioError('{}.{}: wrong type {}'.format(
                where, key, type(value).__name__))
    for key in required:
        if key not in data:
            raise ScenarioError('{}: missing key {!r}'.format(where, key))


def _check_str_map(where: str, data: Dict[Any, Any]) -> None:
    for key, value in data.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise ScenarioError('{}: {!r} must map text to text'.format(
                where, key))


def _check_mdev_types(where: str, types: Dict[str, Any]) -> None:
    for type_id, spec in types.items():
        _check_keys('{}.{}'.format(where, type_id), spec, _MDEV_TYPE)


def _check_mdevs(where: str, mdevs: List[Any]) -> None:
    for index, mdev in enumerate(mdevs):
        _check_keys('{}[{}]'.format(where, index), mdev, _MDEV,
                    required=('uuid', 'parent', 'type'))


def _check_domains(where: str, domains: List[Any]) -> None:
    """Guests libvirt has defined: their mdevs (UUIDs), the VFs they
    have as PCI hostdevs (full PCI addresses), and whether they run."""
    for index, domain in enumerate(domains):
        at = '{}[{}]'.format(where, index)
        _check_keys(at, domain, _DOMAIN, required=('name',))
        for key in ('mdevs', 'pci'):
            for item in domain.get(key, []):
                if not isinstance(item, str):
                    raise ScenarioError('{}.{}: {!r} is not text'.format(
                        at, key, item))
        for address in domain.get('pci', []):
            if not _PCI_ADDRESS.match(address):
                raise ScenarioError(
                    '{}.pci: {!r} is not a PCI address such as '
                    '0000:41:00.4'.format(at, address))
        state = domain.get('state', simguests.DOMAIN_STATES[0])
        if state not in simguests.DOMAIN_STATES:
            raise ScenarioError('{}.state: {!r} is not one of {}'.format(
                at, state, ', '.join(simguests.DOMAIN_STATES)))
        _check_guest_vgpu(at, domain)


def _check_guest_vgpu(at: str, domain: Dict[str, Any]) -> None:
    """A domain's UUID (lower-case, as libvirt writes it) and what NVML
    reports of its guest (sim/README.md, "Per-vGPU figures")."""
    if 'uuid' in domain and not _DOMAIN_UUID.match(domain['uuid']):
        raise ScenarioError('{}.uuid: {!r} is not a lower-case UUID'.format(
            at, domain['uuid']))
    figures = domain.get('vgpu', {})
    _check_keys(at + '.vgpu', figures, _GUEST_VGPU)
    if figures.get('license', 'licensed') not in _GUEST_LICENSES:
        raise ScenarioError('{}.vgpu.license: expected one of {}'.format(
            at, ', '.join(_GUEST_LICENSES)))
    if not 0 <= figures.get('utilization', 0) <= 100:
        raise ScenarioError(at + '.vgpu.utilization: a percentage, 0 to 100')
    if figures.get('framebuffer_used_mib', 0) < 0:
        raise ScenarioError(at + '.vgpu.framebuffer_used_mib: not negative')


def _check_mig(where: str, function: Dict[str, Any]) -> None:
    """pci[].mig: its mode, its GPU instance profiles (each fits the
    GPU's slices as many times as its max says) and the MIG-backed vGPU
    types each profile's GIs host (on VFs: the GPU needs sriov)."""
    spec = function['mig']
    _check_keys(where, spec, _MIG)
    if function['vendor'].lower() != simhost.NVIDIA_VENDOR:
        raise ScenarioError(where + ': only an NVIDIA GPU (vendor 10de) '
                            'has MIG')
    if spec.get('mode', 'disabled') not in simmig.MODES:
        raise ScenarioError('{}.mode: expected one of {}'.format(
            where, ', '.join(simmig.MODES)))
    slices = spec.get('slices', simmig.DEFAULT_SLICES)
    if not 1 <= slices <= simmig.DEFAULT_SLICES:
        raise ScenarioError('{}.slices: expected 1 to {}'.format(
            where, simmig.DEFAULT_SLICES))
    names = _check_gi_profiles(where + '.gpu_instance_profiles',
                               spec.get('gpu_instance_profiles', []), slices)
    _check_gi_placements(where, spec)
    types = spec.get('vgpu_types', {})
    if types and 'sriov' not in function:
        raise ScenarioError(where + '.vgpu_types: MIG-backed vGPUs live on '
                            'VFs; the GPU needs sriov')
    vfio = simmig.vfio_form(function)
    time_sliced = set(function.get('sriov', {}).get('vf_mdev_types', {}))
    seen: set = set()
    for profile, specs in types.items():
        at = '{}.vgpu_types.{}'.format(where, profile)
        if profile not in names:
            raise ScenarioError('{}: {!r} is not one of the GPU instance '
                                'profiles ({})'.format(
                                    where + '.vgpu_types', profile,
                                    ', '.join(names) or 'none'))
        if not isinstance(specs, dict):
            raise ScenarioError(at + ': expected a mapping of vGPU types')
        if vfio:
            _check_vfio_mig_types(at, specs, function['sriov'], seen)
            continue
        if any(not isinstance(value, dict) for value in specs.values()):
            raise ScenarioError(
                at + ': the {type number: name} form is for a GPU whose VFs '
                'use sriov.vf_vgpu_types (vendor-specific VFIO); here each '
                'type is a mapping, as in mdev_types')
        _check_mdev_types(at, specs)
        for type_id in specs:
            if type_id in seen or type_id in time_sliced:
                raise ScenarioError('{}: {} is given twice'.format(
                    at, type_id))
            seen.add(type_id)
    _check_per_gi(where, spec, vfio, seen)


def _check_per_gi(where: str, spec: Dict[str, Any], vfio: bool,
                  numbers: set) -> None:
    """mig.vgpu_types_per_gi: {type number: how many of its vGPUs one GI
    holds}, for the MIG-backed types of a GPU in the VFIO form."""
    if 'vgpu_types_per_gi' not in spec:
        return
    at = where + '.vgpu_types_per_gi'
    if not vfio:
        raise ScenarioError(at + ': only on a GPU whose VFs use '
                            'sriov.vf_vgpu_types (vendor-specific VFIO)')
    for number, count in spec['vgpu_types_per_gi'].items():
        if number not in numbers:
            raise ScenarioError('{}: {!r} is not a type number of '
                                'vgpu_types'.format(at, number))
        if not _whole(count, 1):
            raise ScenarioError('{}.{}: expected 1 or more'.format(
                at, number))


def _check_vfio_mig_types(at: str, specs: Dict[Any, Any],
                          sriov: Dict[str, Any], seen: set) -> None:
    """One profile's MIG-backed types on a GPU whose VFs use the
    vendor-specific VFIO driver: {type number: name}, each number
    positive, once across the profiles, and not also a time-sliced
    number of sriov.vf_vgpu_types."""
    time_sliced = set()
    for number in sriov['vf_vgpu_types']:
        try:
            time_sliced.add(int(number))
        except (TypeError, ValueError):
            pass
    for number, name in specs.items():
        if isinstance(name, dict):
            raise ScenarioError(
                '{}.{}: on a GPU whose VFs use sriov.vf_vgpu_types '
                '(vendor-specific VFIO) MIG-backed types are given as '
                '{{type number: name}}, e.g. {{1130: "NVIDIA '
                'H100XM-1-10C"}}'.format(at, number))
        if not _whole(number, 1):
            raise ScenarioError('{}: {!r} is not a vGPU type number such as '
                                '1130'.format(at, number))
        if not isinstance(name, str):
            raise ScenarioError('{}.{}: expected the type\'s name, such as '
                                '"NVIDIA H100XM-1-10C"'.format(at, number))
        if number in time_sliced:
            raise ScenarioError('{}: {} is also a time-sliced type '
                                '(sriov.vf_vgpu_types)'.format(at, number))
        if number in seen:
            raise ScenarioError('{}: {} is given twice'.format(at, number))
        seen.add(number)


def _check_gi_profiles(where: str, listed: List[Any],
                       slices: int) -> List[str]:
    """The GPU instance profiles nvidia-smi mig -lgip lists; their
    names, in order."""
    names: List[str] = []
    ids: set = set()
    for index, profile in enumerate(listed):
        at = '{}[{}]'.format(where, index)
        _check_keys(at, profile, _GI_PROFILE, required=('id', 'name', 'max'))
        name = profile['name']
        if not simmig.PROFILE_NAME.match(name):
            raise ScenarioError('{}.name: {!r} is not a GPU instance profile '
                                'name such as 1g.10gb or 1g.10gb+me'.format(
                                    at, name))
        if profile['id'] < 0:
            raise ScenarioError(at + '.id: expected 0 or more')
        if profile['id'] in ids or name in names:
            raise ScenarioError('{}: profile {} ({}) is given twice'.format(
                at, profile['id'], name))
        need = simmig.slice_count(name) * profile['max']
        if profile['max'] < 1:
            raise ScenarioError(at + '.max: expected at least 1')
        if need > slices:
            raise ScenarioError(
                '{}.max: {} GPU instances of {} take {} slices; the GPU has '
                '{}'.format(at, profile['max'], name, need, slices))
        ids.add(profile['id'])
        names.append(name)
    return names


def _check_gi_placements(where: str, spec: Dict[str, Any]) -> None:
    """What nvidia-smi mig -lgipp lists, where the scenario gives it:
    every profile has its placements (start memory slices, once each)
    and size, each within the GPU's memory slices, and as many of its
    instances as its max fit at them side by side."""
    listed = spec.get('gpu_instance_profiles', [])
    given = [profile for profile in listed
             if 'placements' in profile or 'size' in profile]
    if not given:
        if 'memory_slices' in spec:
            raise ScenarioError(where + '.memory_slices: only with the '
                                'profiles\' placements and size')
        return
    total = spec.get('memory_slices', _MEMORY_SLICES)
    if not 1 <= total <= _MOST_MEMORY_SLICES:
        raise ScenarioError('{}.memory_slices: expected 1 to {}'.format(
            where, _MOST_MEMORY_SLICES))
    for index, profile in enumerate(listed):
        at = '{}.gpu_instance_profiles[{}]'.format(where, index)
        starts, size = profile.get('placements'), profile.get('size')
        if starts is None or size is None:
            raise ScenarioError(at + ': give placements and size to every '
                                'profile, or to none')
        if not starts or len(set(starts)) != len(starts) or not all(
                _whole(start) for start in starts):
            raise ScenarioError(at + '.placements: expected start memory '
                                'slices, 0 or more, once each')
        if size < 1 or max(starts) + size > total:
            raise ScenarioError('{}: an instance at {} takes memory slices '
                                'beyond the GPU\'s {}'.format(
                                    at, max(starts), total))
        side_by_side, end = 0, 0
        for start in sorted(starts):
            if start >= end:
                side_by_side, end = side_by_side + 1, start + size
        if profile['max'] > side_by_side:
            raise ScenarioError('{}.max: {} GPU instances of {} do not fit '
                                'at its placements side by side'.format(
                                    at, profile['max'], profile['name']))


def _check_vf_vgpu_types(where: str, types: Dict[Any, Any]) -> None:
    for address, type_id in types.items():
        if not isinstance(address, str) or not _PCI_ADDRESS.match(address):
            raise ScenarioError('{}: {!r} is not a PCI address such as '
                                '0000:41:00.4'.format(where, address))
        if not _whole(type_id):
            raise ScenarioError('{}.{}: expected a vGPU type id such as '
                                '1148'.format(where, address))


def _check_no_mig_backed_vf_types(host: Dict[str, Any]) -> None:
    """No VF starts with a MIG-backed type: no GPU instance exists at
    the start for it to hold."""
    mig_backed = set()
    for function in host.get('pci', []):
        if simmig.vfio_form(function):
            mig_backed |= set(simmig.vfio_type_profiles(function))
    for address, type_id in sorted(host.get('vf_vgpu_types', {}).items()):
        if type_id in mig_backed:
            raise ScenarioError(
                'host.vf_vgpu_types.{}: {} is a MIG-backed type; no GPU '
                'instance exists at the start for it'.format(address,
                                                             type_id))


def _check_kernel(where: str, kernel: Any) -> None:
    _check_keys(where, kernel, _KERNEL)
    if 'release' in kernel and not _KERNEL_RELEASE.match(kernel['release']):
        raise ScenarioError('{}.release: {!r} is not a kernel release such '
                            'as 6.8.0-45-generic'.format(
                                where, kernel['release']))
    if kernel.get('mok', 'none') not in simhost.MOK_STATES:
        raise ScenarioError('{}.mok: expected one of {}'.format(
            where, ', '.join(simhost.MOK_STATES)))
    if kernel.get('lockdown', 'none') not in simhost.LOCKDOWN_MODES:
        raise ScenarioError('{}.lockdown: expected one of {}'.format(
            where, ', '.join(simhost.LOCKDOWN_MODES)))


def _check_exec(where: str, value: Any) -> None:
    """exec: the program by its absolute path on the host, its
    arguments, and a user name (root unless given)."""
    _check_keys(where, value, _EXEC, required=('argv',))
    argv = value['argv']
    if not argv or not all(isinstance(item, str) for item in argv):
        raise ScenarioError(where + '.argv: expected a non-empty list of '
                            'strings')
    if not argv[0].startswith('/'):
        raise ScenarioError('{}.argv: {!r} is not an absolute path on the '
                            'host'.format(where, argv[0]))
    if not _USER.match(value.get('user', 'root')):
        raise ScenarioError('{}.user: {!r} is not a user name'.format(
            where, value['user']))


def _check_resource(where: str, spec: Any) -> None:
    if not isinstance(spec, dict) or len(spec) != 1:
        raise ScenarioError(
            '{}: give exactly one of deb, file, empty'.format(where))
    (kind, value), = spec.items()
    if kind == 'deb':
        _check_keys(where + '.deb', value, _DEB,
                    required=('package', 'version'))
    elif kind == 'file':
        if not isinstance(value, str):
            raise ScenarioError(where + '.file: expected a path')
    elif kind == 'empty':
        if value is not True:
            raise ScenarioError(where + '.empty: expected true')
    else:
        raise ScenarioError('{}: unknown key {!r}'.format(where, kind))


def _check_step(index: int, step: Any) -> None:
    where = 'steps[{}]'.format(index)
    if isinstance(step, str):
        if step in HOOK_STEPS or step.endswith(RELATION_HOOK_SUFFIXES):
            return
        raise ScenarioError('{}: unknown hook {!r}'.format(where, step))
    if not isinstance(step, dict) or not step:
        raise ScenarioError(where + ': expected a hook name or a mapping')
    unknown = set(step) - _STEP_KINDS
    if unknown:
        raise ScenarioError('{}: unknown key {!r}'.format(
            where, sorted(unknown)[0]))
    kinds = set(step) - {'params'}
    if len(kinds) != 1:
        raise ScenarioError(where + ': one kind of step per entry')
    kind = kinds.pop()
    value = step[kind]
    if 'params' in step and kind != 'action':
        raise ScenarioError(where + ': params only go with action')
    if kind == 'action' and not isinstance(value, str):
        raise ScenarioError(where + '.action: expected an action name')
    if kind == 'action' and not isinstance(step.get('params', {}), dict):
        raise ScenarioError(where + '.params: expected a mapping')
    if kind == 'reboot' and value is not True:
        raise ScenarioError(where + '.reboot: expected true')
    if kind == 'services':
        if not isinstance(value, dict) or not set(value.values()) <= {
                'running', 'stopped'}:
            raise ScenarioError(
                where + '.services: map service names to running or stopped')
    if kind == 'packages':
        if not isinstance(value, dict):
            raise ScenarioError(where + '.packages: expected a mapping')
        _check_str_map(where + '.packages', value)
    if kind in ('config', 'remote', 'attach') and not isinstance(value, dict):
        raise ScenarioError('{}.{}: expected a mapping'.format(where, kind))
    if kind == 'attach':
        for name, spec in value.items():
            _check_resource('{}.attach.{}'.format(where, name), spec)
    if kind == 'remote':
        for name, data in value.items():
            if not isinstance(data, dict):
                raise ScenarioError('{}.remote.{}: expected a mapping'.format(
                    where, name))
    if kind == 'guests':
        _check_keys(where + '.guests', value, _GUESTS)
        _check_domains(where + '.guests.libvirt_domains',
                       value.get('libvirt_domains', []))
        _check_mdevs(where + '.guests.mdevs', value.get('mdevs', []))
    if kind == 'kernel':
        _check_kernel(where + '.kernel', value)
    if kind == 'exec':
        _check_exec(where + '.exec', value)
    if kind == 'pci':
        _check_pci(where + '.pci', value)
    if kind == 'kernel_messages':
        _check_lines(where + '.kernel_messages', value)
    if kind == 'faults':
        if not isinstance(value, dict) or not value:
            raise ScenarioError(where + '.faults: map host commands to the '
                                'error text they fail with, or null')
        for name, text in value.items():
            if name not in FAULTABLE:
                raise ScenarioError('{}.faults: {!r} is not a host command a '
                                    'fault can be given to ({})'.format(
                                        where, name, ', '.join(FAULTABLE)))
            if not (text is None or isinstance(text, str) and text.strip()):
                raise ScenarioError('{}.faults.{}: expected the error text, '
                                    'or null to clear it'.format(where, name))
    if kind == 'relation-departed' and not isinstance(value, str):
        raise ScenarioError(where + '.relation-departed: expected a name')


def _check_lines(where: str, lines: Any) -> None:
    """Kernel log lines (host.kernel_messages, a kernel_messages step)."""
    if not isinstance(lines, list) or not all(
            isinstance(line, str) and '\n' not in line for line in lines):
        raise ScenarioError(where + ': expected a list of one-line strings')


def validate(data: Any) -> Dict[str, Any]:
    """Check a parsed scenario against the contract; return it."""
    _check_keys('scenario', data, _TOP)
    host = data.get('host', {})
    _check_keys('host', host, _HOST)
    if host.get('series', pythons.DEFAULT_SERIES) not in pythons.SERIES_PYTHON:
        raise ScenarioError('host.series: {!r} is not a series this charm '
                            'supports ({})'.format(
                                host['series'],
                                ', '.join(pythons.SERIES_PYTHON)))
    if not _JUJU_VERSION.match(data.get('juju_version', '3.4.5')):
        raise ScenarioError('juju_version: {!r} is not a Juju version such '
                            'as 2.9.49 or 3.4.5'.format(data['juju_version']))
    target = data.get('series_upgrade_target')
    if target is not None and target not in TARGET_BASES:
        raise ScenarioError('series_upgrade_target: {!r} is not one of '
                            '{}'.format(target, ', '.join(TARGET_BASES)))
    _check_str_map('host.packages', host.get('packages', {}))
    _check_pci('host.pci', host.get('pci', []))
    _check_mdevs('host.mdevs', host.get('mdevs', []))
    _check_domains('host.libvirt_domains', host.get('libvirt_domains', []))
    _check_vf_vgpu_types('host.vf_vgpu_types', host.get('vf_vgpu_types', {}))
    _check_no_mig_backed_vf_types(host)
    _check_kernel('host.kernel', host.get('kernel', {}))
    _check_lines('host.kernel_messages', host.get('kernel_messages', []))
    for name, spec in data.get('resources', {}).items():
        _check_resource('resources.{}'.format(name), spec)
    for name, units in data.get('relations', {}).items():
        if not isinstance(units, list):
            raise ScenarioError('relations.{}: expected a list'.format(name))
        for index, unit in enumerate(units):
            _check_keys('relations.{}[{}]'.format(name, index), unit,
                        {'remote_unit': str, 'data': dict},
                        required=('remote_unit',))
    for index, step in enumerate(data.get('steps', [])):
        _check_step(index, step)
    return data


def _check_pci(where: str, functions: Any) -> None:
    """The host's PCI functions (host.pci, and a pci step's)."""
    if not isinstance(functions, list):
        raise ScenarioError(where + ': expected a list')
    for index, function in enumerate(functions):
        at = '{}[{}]'.format(where, index)
        _check_keys(at, function, _PCI,
                    required=('address', 'vendor', 'device', 'class'))
        _check_mdev_types(at + '.mdev_types',
                          function.get('mdev_types', {}))
        if 'sriov' in function:
            _check_keys(at + '.sriov', function['sriov'], _SRIOV,
                        required=('total_vfs',))
            _check_mdev_types(at + '.sriov.vf_mdev_types',
                              function['sriov'].get('vf_mdev_types', {}))
            _check_max_instances(at + '.sriov', function['sriov'])
            if 'mixed_size' in function['sriov']:
                _check_mixed_size(at + '.sriov.mixed_size',
                                  function['sriov'])
        if 'mig' in function:
            _check_mig(at + '.mig', function)


def _check_max_instances(where: str, sriov: Dict[str, Any]) -> None:
    """The most vGPUs of each type of the VFIO form one GPU takes."""
    for number, count in sriov.get('vgpu_type_max_instances', {}).items():
        if number not in sriov.get('vf_vgpu_types', {}):
            raise ScenarioError('{}.vgpu_type_max_instances.{}: not a type '
                                'of vf_vgpu_types'.format(where, number))
        if not _whole(count, 1):
            raise ScenarioError('{}.vgpu_type_max_instances.{}: a count of '
                                'at least 1'.format(where, number))


def _check_mixed_size(where: str, sriov: Dict[str, Any]) -> None:
    """What nvidia-smi says of mixed-size mode: each type's placements
    are of a type the VFs offer, sized and started in whole slots."""
    mixed = sriov['mixed_size']
    _check_keys(where, mixed, _MIXED_SIZE, required=('supported',))
    for type_id, placements in mixed.get('placements', {}).items():
        at = '{}.placements.{}'.format(where, type_id)
        if type_id not in sriov.get('vf_mdev_types', {}):
            raise ScenarioError('{}: not a type of vf_mdev_types'.format(at))
        _check_keys(at, placements, _PLACEMENTS, required=('size', 'ids'))
        if placements['size'] < 1 or not placements['ids'] or not all(
                _whole(start) for start in placements['ids']):
            raise ScenarioError('{}: size and ids are whole slots, at least '
                                'one id'.format(at))


def load(path: str) -> Dict[str, Any]:
    """Read and check a scenario file; ScenarioError on any problem."""
    try:
        with open(path) as stream:
            data = yaml.safe_load(stream)
    except OSError as error:
        raise ScenarioError('cannot read {}: {}'.format(
            path, error.strerror))
    except yaml.YAMLError as error:
        raise ScenarioError('{}: not valid YAML ({})'.format(
            path, str(error).splitlines()[0]))
    scenario = validate(data)
    scenario['_base_dir'] = os.path.dirname(os.path.abspath(path))
    return scenario


def default_steps(scenario: Dict[str, Any]) -> List[Any]:
    """What Juju runs on a fresh deployment of this scenario."""
    steps: List[Any] = ['install']
    for name in scenario.get('relations', {}):
        steps += [name + '-relation-created', name + '-relation-joined',
                  name + '-relation-changed']
    return steps + ['config-changed', 'start', 'update-status']
