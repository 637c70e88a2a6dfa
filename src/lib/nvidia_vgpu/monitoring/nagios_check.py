#!/usr/bin/python3
"""The NRPE check program, installed as
/usr/local/lib/nagios/plugins/check_nvidia_vgpu and run by NRPE as the
nagios user:

    check_nvidia_vgpu CHECK --facts PATH [--max-age SECONDS]

It reads the document the charm's hooks write (monitoring/report.py) and
answers one check from it. It needs no root and no charm code: only the
standard library of the host's python3, so it runs on every series and
after the charm is gone. Facts older than --max-age mean the unit agent
runs no hooks: the answer is UNKNOWN, not a stale OK.
"""
import argparse
import json
import os
import sys
import time
from typing import List, Optional, Tuple

STATES = ('OK', 'WARNING', 'CRITICAL', 'UNKNOWN')
UNKNOWN = 3
# How deep the facts may nest (the charm's document: 4).
MAX_DEPTH = 32
# Where a test or the hook simulator lays out the host.
HOST_ROOT_VARIABLE = 'NVIDIA_VGPU_HOST_ROOT'


def _host_path(path: str) -> str:
    root = os.environ.get(HOST_ROOT_VARIABLE, '')
    return os.path.join(root, path.lstrip('/')) if root else path


def _one_line(text: str) -> str:
    """Nagios reads up to the first newline, and `|` starts perfdata."""
    return ' '.join(text.replace('|', '/').split())


def _parse(text: str) -> object:
    """The facts, refusing (ValueError) nesting deeper than the charm's
    document can be before json sees it: after a RecursionError the C
    decoder of Python 3.6 and 3.8 can abort the check ("Cannot recover
    from stack overflow"). (This program runs alone, without the
    charm's modules: nvidia_vgpu.host.hostfs.parse_json does the same.)"""
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
            if depth > MAX_DEPTH:
                raise ValueError('nested deeper than {} levels'.format(
                    MAX_DEPTH))
        elif char in ']}':
            depth -= 1
    return json.loads(text)


def answer(check: str, facts_path: str, max_age: float,
           now: Optional[float] = None) -> Tuple[int, str]:
    """The check's state and its output line."""
    path = _host_path(facts_path)
    try:
        with open(path) as stream:
            age = (time.time() if now is None else now) - os.fstat(
                stream.fileno()).st_mtime
            facts = _parse(stream.read())
    except FileNotFoundError:
        return UNKNOWN, ('No vGPU facts at {}: the charm writes them at its '
                         'next hook (see juju status for the unit)'.format(
                             facts_path))
    except (OSError, ValueError) as error:
        return UNKNOWN, 'Cannot read the vGPU facts at {}: {}'.format(
            facts_path, _one_line(str(error) or type(error).__name__))
    checks = _checks(facts)
    if checks is None:
        return UNKNOWN, ('The vGPU facts at {} are not the charm\'s (no '
                         'list of checks): the charm rewrites them at its '
                         'next hook'.format(facts_path))
    if age > max_age:
        return UNKNOWN, (
            'vGPU facts are {} min old (at most {}): the unit agent has run '
            'no hook since; see juju status and juju show-status-log for '
            'the unit'.format(int(age // 60), int(max_age // 60)))
    for found in checks:
        if found.get('name') == check:
            state = found.get('state')
            if state not in (0, 1, 2, 3):
                state = UNKNOWN
            line = '{}: {}'.format(STATES[state],
                                   _one_line(str(found.get('text', ''))))
            if found.get('perfdata'):
                line += ' | ' + _one_line(str(found['perfdata']))
            return state, line
    return UNKNOWN, ('The vGPU facts have no check {}: this host has {} '
                     '(the charm rewrites the NRPE checks at its next '
                     'hook)'.format(check, ', '.join(
                         _one_line(str(found.get('name')))
                         for found in checks) or 'none'))


def _checks(facts: object) -> Optional[List[dict]]:
    """The document's checks (entries of another shape left out); None
    where it is not a document of checks at all."""
    if not isinstance(facts, dict) or not isinstance(
            facts.get('checks', []), list):
        return None
    return [found for found in facts.get('checks', [])
            if isinstance(found, dict)]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('check')
    parser.add_argument('--facts', required=True)
    parser.add_argument('--max-age', type=float, default=3600)
    args = parser.parse_args(argv)
    state, line = answer(args.check, args.facts, args.max_age)
    print(line)
    return state


if __name__ == '__main__':
    sys.exit(main())
