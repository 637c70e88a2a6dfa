"""systemd units the charm owns on the host (/etc/systemd/system)."""
import os
import subprocess
from typing import Dict, Sequence

from nvidia_vgpu.host.hostfs import host_path, write_if_changed

UNIT_DIR = '/etc/systemd/system'


def _unit_path(name: str) -> str:
    return host_path(os.path.join(UNIT_DIR, name))


def _systemctl(*args: str) -> None:
    subprocess.run(('systemctl',) + args, check=True,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def install_unit(name: str, text: str) -> bool:
    """Write, reload and enable a unit; True if it was new or changed.

    Nothing runs when the file already says exactly this, so every hook
    can call it.
    """
    if not write_if_changed(os.path.join(UNIT_DIR, name), text):
        return False
    _systemctl('daemon-reload')
    _systemctl('enable', name)
    return True


def reload(name: str) -> None:
    """Have a service read its configuration again."""
    _systemctl('reload', name)


def run_unit(name: str) -> None:
    """Run a oneshot unit now, even if it already ran since boot."""
    _systemctl('restart', name)


def remove_unit(name: str) -> bool:
    """Disable and delete a unit the charm installed; True if it was
    there."""
    path = _unit_path(name)
    if not os.path.exists(path):
        return False
    _systemctl('disable', name)
    os.remove(path)
    _systemctl('daemon-reload')
    return True


def installed(name: str) -> bool:
    """Whether the charm has this unit on the host."""
    return os.path.exists(_unit_path(name))


def states(names: Sequence[str]) -> Dict[str, str]:
    """systemctl is-active's answer for each unit: active, inactive,
    failed, ... (reading only: what the health check shows), from one
    systemctl, which answers a line per unit in order."""
    if not names:
        return {}
    done = subprocess.run(['systemctl', 'is-active'] + list(names),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    answers = done.stdout.splitlines()
    if len(answers) != len(names):
        answers = [''] * len(names)
    return {name: answer.strip() or 'unknown'
            for name, answer in zip(names, answers)}


def stop_unit(name: str) -> None:
    """Stop a running service before its unit is removed (disable alone
    leaves it running)."""
    _systemctl('stop', name)
