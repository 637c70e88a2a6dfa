"""Paths on the host's filesystem (/sys, /proc, /etc).

Every file the charm reads or writes on the host goes through host_path(),
so that a test or the hook simulator can lay out a whole host (a sysfs
tree, /proc/modules, /etc/modprobe.d) under one directory and point
NVIDIA_VGPU_HOST_ROOT at it. On a real host the variable is unset and
paths are used as they are.
"""
import json
import os
from typing import Any, Dict, Optional, Tuple

HOST_ROOT_VARIABLE = 'NVIDIA_VGPU_HOST_ROOT'
# How deep a JSON file on the host may nest: the charm's records nest 3
# deep, its monitoring document 4, mdevctl's definitions 3.
MAX_JSON_DEPTH = 32


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


def read_json_object(path: str) -> Tuple[Dict[str, Any], Optional[str]]:
    """A JSON object the charm or a tool keeps on the host, and why it
    was ignored where it was: ({}, None) where there is no file; ({},
    why) where it cannot be read, is not JSON, nests deeper than
    MAX_JSON_DEPTH, or is not an object. Never raises: a hook
    or a boot program goes on without it, and says so."""
    try:
        with open(host_path(path), 'rb') as stream:
            data = parse_json(stream.read().decode('utf-8'))
    except FileNotFoundError:
        return {}, None
    except (OSError, ValueError) as error:
        return {}, '{} ignored: {}'.format(path, _one_line(error))
    if not isinstance(data, dict):
        return {}, '{} ignored: a JSON {} where an object belongs'.format(
            path, type(data).__name__)
    return data, None


def parse_json(text: str) -> Any:
    """json.loads, refusing (ValueError) a text that nests deeper than
    MAX_JSON_DEPTH before the decoder sees it. A RecursionError is not
    enough: after one, the C decoder of Python 3.6 and 3.8 (bionic,
    focal) can abort the whole process ("Cannot recover from stack
    overflow") at the next deep value, so a hook or a boot unit would
    die instead of going on."""
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == '\\':
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in '[{':
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise ValueError('nested deeper than {} levels'.format(
                    MAX_JSON_DEPTH))
        elif char in ']}':
            depth -= 1
    return json.loads(text)


def _one_line(error: Exception) -> str:
    """An error's text, cut to one printable line."""
    text = ' '.join(str(error).split()) or type(error).__name__
    return ''.join(char if ' ' <= char <= '~' else '?'
                   for char in text)[:200]
