"""Persistent vGPUs: mdevctl's definitions.

From Dalmatian (nova 30) Nova defines the mdevs it creates, through
libvirt's node-device driver, which keeps them with mdevctl: one file
per mdev, /etc/mdevctl.d/<parent>/<uuid>, whose `start` is `auto` where
mdevctl's udev rule starts it when its parent appears at boot. An mdev
made through sysfs (by Nova before Dalmatian, or by the charm's restore
unit) has no such file and is gone at every reboot; Nova 30 and later
start only defined mdevs (../shared/reference/lifecycle-facts.md, 1).
"""
import os
import subprocess
from typing import FrozenSet, Optional

from nvidia_vgpu import model
from nvidia_vgpu.host.hostfs import host_path, parse_json

DEFINITIONS = '/etc/mdevctl.d'
# mdevctl can wait on udev; a hook must still end.
TIMEOUT_S = 60


def persistent_mdevs() -> FrozenSet[str]:
    """The UUIDs of mdevs a boot brings back: defined to start `auto`."""
    top = host_path(DEFINITIONS)
    found = set()
    try:
        parents = os.listdir(top)
    except OSError:
        return frozenset()
    for parent in parents:
        try:
            names = os.listdir(os.path.join(top, parent))
        except OSError:
            continue
        for uuid in names:
            if _starts_at_boot(os.path.join(top, parent, uuid)):
                found.add(uuid.lower())
    return frozenset(found)


def _starts_at_boot(path: str) -> bool:
    try:
        with open(path) as stream:
            definition = parse_json(stream.read())
    except (OSError, ValueError):
        return False
    return isinstance(definition, dict) and definition.get('start') == 'auto'


def define(mdev: model.Mdev) -> Optional[str]:
    """Make a running vGPU persistent, as Nova 30 makes those it creates:
    the same UUID, parent and type, started at every boot. None when
    done, else why not."""
    argv = ['mdevctl', 'define', '--uuid', mdev.uuid, '--parent',
            mdev.parent, '--type', mdev.type_id, '--auto']
    try:
        done = subprocess.run(argv, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as error:
        return '{}: {}'.format(' '.join(argv), error)
    if done.returncode:
        return '{} exited {}: {}'.format(
            ' '.join(argv), done.returncode, done.stdout.strip())
    return None
