"""Juju commands the unit's status asks the operator to run, in the form
of the Juju that runs the unit.

Juju 3 named the command that relates two applications `juju integrate`;
Juju 2.9 has only `juju relate` (and `juju add-relation`). Hooks learn the
agent's version from JUJU_VERSION (e.g. 2.9.49, 3.4.5).
"""
import re
from typing import Optional

_MAJOR = re.compile(r'^\s*(\d+)\.')


def juju_major(juju_version: Optional[str]) -> Optional[int]:
    """Juju's major version from JUJU_VERSION; None if unreadable."""
    match = _MAJOR.match(juju_version or '')
    return int(match.group(1)) if match else None


def relate_command(juju_version: Optional[str], endpoint: str,
                   principal_endpoint: str) -> str:
    """The command relating two endpoints on this Juju. An unreadable
    version gets the current form."""
    major = juju_major(juju_version)
    verb = 'relate' if major is not None and major < 3 else 'integrate'
    return 'juju {} {} {}'.format(verb, endpoint, principal_endpoint)


def action_command(juju_version: Optional[str], unit: str,
                   action: str) -> str:
    """The command running an action on a unit and waiting for it on
    this Juju (2.9's `juju run` runs commands, not actions)."""
    major = juju_major(juju_version)
    if major is not None and major < 3:
        return 'juju run-action --wait {} {}'.format(unit, action)
    return 'juju run {} {}'.format(unit, action)
