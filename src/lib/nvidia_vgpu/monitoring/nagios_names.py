"""The names Nagios knows this host and its checks by: the nagios_context
and nagios_servicegroups options, and the host name and context the nrpe
unit sends.

They are written into files that nagios-nrpe-server and the Nagios
server parse (monitoring/nrpe.py), and into a file name: a line break
would add a directive there, a `/` would write elsewhere, and a
character in Nagios' illegal_object_name_chars would stop the Nagios
server from loading its configuration. So only names of letters, digits,
`.`, `_` and `-` are used. Policy: an option's bad value is refused in
the unit's status (nothing is written until it is fixed); a bad value
from the nrpe unit, which is not the operator's, is ignored and said in
the log, and the name the charm makes itself is used instead.
"""
import re
from typing import Any, List, Mapping, Optional

from nvidia_vgpu import option_text

CONTEXT = 'nagios_context'
SERVICEGROUPS = 'nagios_servicegroups'
DEFAULT_CONTEXT = 'juju'
# A Nagios object name here: a DNS host name's characters, and `_`.
NAME = re.compile(r'[A-Za-z0-9][A-Za-z0-9_.-]{0,252}', re.ASCII)


def option_problem(config: Mapping[str, Any]) -> Optional[str]:
    """Why nagios_context or nagios_servicegroups cannot name this host's
    checks, or None."""
    context = config.get(CONTEXT)
    if context and not _is_name(context):
        return ('Invalid nagios_context: {} is not a name of letters, '
                'digits, ".", "_" and "-", which Nagios reads from the files '
                'the charm writes for it: nothing is written for Nagios until '
                'it is; set e.g. nagios_context=juju'.format(
                    option_text.shown(str(context))))
    groups = config.get(SERVICEGROUPS)
    if groups and _groups(groups) is None:
        return ('Invalid nagios_servicegroups: {} is not a comma-separated '
                'list of names of letters, digits, ".", "_" and "-", which '
                'Nagios reads from the files the charm writes for it: '
                'nothing is written for Nagios until it is; set e.g. '
                'nagios_servicegroups=juju,gpu'.format(
                    option_text.shown(str(groups))))
    return None


def context(config: Mapping[str, Any]) -> str:
    """nagios_context, once option_problem() has passed it."""
    return config.get(CONTEXT) or DEFAULT_CONTEXT


def servicegroups(config: Mapping[str, Any]) -> str:
    """The check's servicegroups, once option_problem() has passed them:
    the option's names, else the context."""
    return ','.join(_groups(config.get(SERVICEGROUPS) or '') or
                    [context(config)])


def received(value: Any) -> Optional[str]:
    """A name the nrpe unit sent, where it is one; None where it is
    missing or not a name (the caller logs what it ignored)."""
    return value if _is_name(value) else None


def _is_name(value: Any) -> bool:
    return isinstance(value, str) and bool(NAME.fullmatch(value))


def _groups(value: Any) -> Optional[List[str]]:
    """The names of a comma-separated list (spaces around them allowed);
    None where one is not a name."""
    if not isinstance(value, str):
        return None
    groups = [group.strip(' ') for group in value.split(',')]
    return groups if all(_is_name(group) for group in groups) else None
