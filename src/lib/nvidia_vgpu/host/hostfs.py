"""Paths on the host's filesystem (/sys, /proc, /etc).

Every file the charm reads or writes on the host goes through host_path(),
so that a test or the hook simulator can lay out a whole host (a sysfs
tree, /proc/modules, /etc/modprobe.d) under one directory and point
NVIDIA_VGPU_HOST_ROOT at it. On a real host the variable is unset and
paths are used as they are.
"""
import os

HOST_ROOT_VARIABLE = 'NVIDIA_VGPU_HOST_ROOT'


def host_path(path: str) -> str:
    """The real location of an absolute host path."""
    root = os.environ.get(HOST_ROOT_VARIABLE, '')
    return os.path.join(root, path.lstrip('/')) if root else path


def write_if_changed(path: str, text: str) -> bool:
    """Write a host file unless it already says exactly this; True if it
    was written. Lets every hook call the writers, with no restart,
    reload or rebuild behind them unless something changed."""
    real = host_path(path)
    try:
        with open(real) as stream:
            if stream.read() == text:
                return False
    except FileNotFoundError:
        os.makedirs(os.path.dirname(real), exist_ok=True)
    with open(real, 'w') as stream:
        stream.write(text)
    return True
