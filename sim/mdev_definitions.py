"""Persistent mdevs on the simulated host: the definitions mdevctl keeps
(libvirt's node-device driver keeps Nova's through it), and what they
bring back at a boot.

mdevctl stores each definition as /etc/mdevctl.d/<parent>/<uuid>, a JSON
document with the type and how it starts; its udev rule starts a
parent's `auto` definitions when that parent registers with the mdev
framework (the GPU's driver at boot, a VF when `sriov-manage -e` makes
it). A transient mdev (created through sysfs, as Nova before Dalmatian
and the charm's restore unit make them) is gone at every reboot
(../shared/reference/lifecycle-facts.md, section 1).

The host state keeps the definitions as `mdev_definitions`: uuid ->
{"parent": ..., "type": ...}.
"""
import json
import os
from typing import Any, Dict, Iterable, List

from sim import host as simhost

DIRECTORY = os.path.join('etc', 'mdevctl.d')


def initial(mdevs: Iterable[Dict[str, Any]]) -> Dict[str, Dict[str, str]]:
    """The definitions a scenario starts with: its mdevs marked defined."""
    return {mdev['uuid']: {'parent': mdev['parent'], 'type': mdev['type']}
            for mdev in mdevs if mdev.get('defined')}


def write_files(host_root: str,
                definitions: Dict[str, Dict[str, str]]) -> None:
    """/etc/mdevctl.d as mdevctl leaves it for these definitions."""
    top = os.path.join(host_root, DIRECTORY)
    if os.path.isdir(top):
        for parent in os.listdir(top):
            for name in os.listdir(os.path.join(top, parent)):
                os.unlink(os.path.join(top, parent, name))
            os.rmdir(os.path.join(top, parent))
    for uuid, place in sorted(definitions.items()):
        directory = os.path.join(top, place['parent'])
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, uuid), 'w') as stream:
            json.dump({'mdev_type': place['type'], 'start': 'auto',
                       'attrs': []}, stream, indent=2)
            stream.write('\n')


def offers(host: Dict[str, Any], parent: str, type_id: str) -> bool:
    """Whether `parent` (a GPU, or a VF that exists now) offers the type
    with the NVIDIA driver loaded."""
    if 'nvidia' not in host['modules']:
        return False
    for function in host['pci']:
        if function['address'] == parent:
            return type_id in function.get('mdev_types', {})
        sriov = function.get('sriov') or {}
        vfs = simhost.vf_addresses(function['address'],
                                   host['vfs'].get(function['address'], 0))
        if parent in vfs:
            return type_id in sriov.get('vf_mdev_types', {})
    return False


def start_for_parents(host: Dict[str, Any], parents: Iterable[str]
                      ) -> List[str]:
    """mdevctl's udev rule: the `auto` definitions of these parents start
    where their type is offered and they do not exist yet; the started
    UUIDs."""
    parents = set(parents)
    active = {mdev['uuid'] for mdev in host['mdevs']}
    started = []
    for uuid, place in sorted(host.get('mdev_definitions', {}).items()):
        if (place['parent'] in parents and uuid not in active and
                offers(host, place['parent'], place['type'])):
            host['mdevs'].append({'uuid': uuid, 'parent': place['parent'],
                                  'type': place['type']})
            started.append(uuid)
    return started


def summary(host: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The host's mdevs as the output shows them: each says whether a
    definition keeps it across reboots."""
    definitions = host.get('mdev_definitions', {})
    return [dict({'uuid': mdev['uuid'], 'parent': mdev['parent'],
                  'type': mdev['type'],
                  'defined': mdev['uuid'] in definitions},
                 **({'placement': mdev['placement']}
                    if 'placement' in mdev else {}))
            for mdev in host['mdevs']]
