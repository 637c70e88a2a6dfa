"""The output document (../shared/spec/simulator.md), from what a run
left: the state file, the record of commands, the files under the
sandbox's root, the unit's flags and the VFs' vGPU types in /sys."""
import hashlib
import json
import os
import sqlite3
from typing import Any, Dict, List, Optional

from sim import mdev_definitions, mig

# Files the simulator itself lays out; changes there are not the charm's.
# (DKMS's key pair is the host's: made by shim-signed's tools, enrolled by
# the operator; so are the modules DKMS builds under /lib/modules.)
NOT_HOST_FILES = ('var/lib/juju', 'var/lib/dpkg', 'sys', 'proc',
                  'var/lib/shim-signed', 'lib/modules')


def document(state: Dict[str, Any], steps: List[Dict[str, Any]],
             actions: List[Dict[str, Any]], commands: List[List[str]],
             files: Dict[str, Optional[str]], flags: List[str],
             vf_vgpu_types: Dict[str, str]) -> Dict[str, Any]:
    """The contract's output document, sandbox paths not yet scrubbed."""
    host = state['host']
    output = {
        'status': state['status'],
        'application_version': state['application_version'],
        'relations': {rid: relation['local'] for rid, relation in
                      sorted(state['relations'].items())},
        'steps': steps,
        'actions': actions,
        'commands': commands,
        'files': files,
        'flags': flags,
        'host': {
            'packages': dict(sorted(host['packages'].items())),
            'modules': host['modules'],
            'services': {name: {key: service[key] for key in
                                ('active', 'enabled', 'masked')}
                         for name, service in
                         sorted(host['services'].items())},
            'vfs': host['vfs'],
            'mdevs': mdev_definitions.summary(host),
            'reboots': host['reboots'],
            'reboot_requested': host['reboot_requested'],
            'vf_vgpu_types': vf_vgpu_types,
            'guest_disruptions': host['guest_disruptions'],
            'resources_sha256': {
                name: sha256(path) for name, path in
                sorted(state['resources'].items()) if path},
        },
    }
    inactive = sorted(set(host.get('mdev_definitions', {})) -
                      {mdev['uuid'] for mdev in host['mdevs']})
    if inactive:
        # Defined but not started (their parent or type is missing).
        output['host']['mdevs_inactive'] = inactive
    if host.get('mig'):
        # Only where the scenario has MIG-capable GPUs (sim/mig.py).
        output['host']['mig'] = mig.summary(host)
    if any(mig.vfio_form(function) or function.get('sriov', {}).get(
            'vgpu_type_max_instances') for function in host['pci']):
        # Only where the driver may refuse a VF's type: the VFs of a
        # MIG-capable GPU on the vendor-specific VFIO driver, or of one
        # whose types have a maximum per GPU there (sim/host.py): the
        # current_vgpu_type writes it refused.
        output['host']['vf_type_refusals'] = host.get(
            'vf_type_refusals', [])
    if any(function.get('sriov', {}).get('mixed_size')
           for function in host['pci']):
        # Only where a GPU's driver says what it does of mixed sizes:
        # the GPUs in mixed-size mode now, and the vGPUs whose VMs could
        # not start with their fixed placement (sim/host.py).
        output['host']['mixed_modes'] = host.get('mixed_modes', {})
        output['host']['placement_refusals'] = host.get(
            'placement_refusals', [])
    return output


def host_commands(commands_path: str) -> List[List[str]]:
    """Every host command recorded, in order (no file: no process ran,
    e.g. only guests steps)."""
    commands = []
    lines = []
    if os.path.exists(commands_path):
        with open(commands_path) as stream:
            lines = stream.readlines()
    for line in lines:
        entry = json.loads(line)
        if entry['kind'] == 'host':
            commands.append(entry['argv'])
    return commands


def snapshot(host_root: str) -> Dict[str, bytes]:
    """Every file of the simulated host, by its path on a real host."""
    files = {}
    for directory, dirnames, filenames in os.walk(host_root):
        relative = os.path.relpath(directory, host_root)
        if relative.startswith(NOT_HOST_FILES):
            dirnames[:] = []
            continue
        for name in filenames:
            path = os.path.join(directory, name)
            if os.path.isfile(path):
                with open(path, 'rb') as stream:
                    files['/' + os.path.relpath(path, host_root)] = \
                        stream.read()
    return files


def changed_files(baseline: Dict[str, bytes],
                  now: Dict[str, bytes]) -> Dict[str, Optional[str]]:
    """Files created, changed (their text now) or removed (None)."""
    files = {}
    for path in sorted(set(now) | set(baseline)):
        if now.get(path) != baseline.get(path):
            content = now.get(path)
            files[path] = (None if content is None
                           else content.decode('utf-8', 'replace'))
    return files


def flags(charm_dir: str) -> List[str]:
    """The unit's reactive flags, from its unitdata database."""
    path = os.path.join(charm_dir, '.unit-state.db')
    if not os.path.exists(path):
        return []
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT key FROM kv WHERE key LIKE "
                          "'reactive.states.%'").fetchall()
    return sorted(key[len('reactive.states.'):] for key, in rows)


def vf_vgpu_types(host_root: str) -> Dict[str, str]:
    """VFs given a vGPU type (vendor-specific VFIO), as sysfs says."""
    devices = os.path.join(host_root, 'sys', 'bus', 'pci', 'devices')
    types = {}
    for address in sorted(os.listdir(devices)):
        path = os.path.join(devices, address, 'nvidia',
                            'current_vgpu_type')
        if os.path.exists(path):
            with open(path) as stream:
                value = stream.read().strip()
            if value != '0':
                types[address] = value
    return types


def scrub(value: Any, replacements: List[tuple]) -> Any:
    """Replace sandbox paths so that output is the same on every run."""
    if isinstance(value, str):
        for old, new in replacements:
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [scrub(item, replacements) for item in value]
    if isinstance(value, dict):
        return {scrub(key, replacements): scrub(item, replacements)
                for key, item in value.items()}
    return value


def sha256(path: str) -> str:
    with open(path, 'rb') as stream:
        return hashlib.sha256(stream.read()).hexdigest()
