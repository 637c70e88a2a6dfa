"""The monitoring document on the host: written by every hook (root),
read by the NRPE check and the exporter (no root).

World-readable on purpose: it holds the verdict, guest names included,
which the unit's status and the vgpu-health action show anyway. Its
modification time is when the hook read the host, so it is touched
even when nothing changed, and the readers tell stale facts from fresh.
"""
import json
import os
from typing import Mapping

from nvidia_vgpu.host.hostfs import host_path, write_if_changed

PATH = '/var/lib/nova-compute-nvidia-vgpu/monitoring.json'
# Longer than twice the longest update-status interval Juju allows
# (60 minutes), so a slow model never looks stale; a stopped unit agent
# does, within hours.
MAX_AGE_SECONDS = 7200


def write(document: Mapping[str, object]) -> bool:
    """Write the document (sorted keys: an unchanged verdict is an
    unchanged file) and mark it fresh; True if its content changed."""
    text = json.dumps(document, sort_keys=True, indent=1) + '\n'
    changed = write_if_changed(PATH, text)
    os.chmod(host_path(PATH), 0o644)
    if not changed:
        os.utime(host_path(PATH))
    return changed


def remove() -> None:
    """No monitoring relation left: nothing reads the facts."""
    try:
        os.remove(host_path(PATH))
    except FileNotFoundError:
        pass
