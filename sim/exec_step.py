"""The exec step: a program the charm installed on the simulated host,
run as NRPE, cron or an operator would run it; no hook runs.

The program sees the host as hooks and boot units do (the host root,
the fake tools on PATH, the charm directory as working directory) but
not the hook context (JUJU_*, CHARM_DIR), which NRPE and cron do not
give. A user other than root runs without root's privileges, so that a
check that needs root to read something fails here as on a real host.
"""
import os
from typing import Any, Dict, List, Tuple

# Who any user other than root runs as (nobody): a real host's nagios
# has no privileges either.
UNPRIVILEGED = 65534
# What a shell answers for a program it cannot find, or cannot run.
NOT_FOUND = 127
CANNOT_RUN = 126
# What a hook has and NRPE, cron or an operator's shell has not; and
# which Python ran, which is a hook's record: a program's `#!/usr/bin/
# python3` is this machine's, not the series' (the unit tests run such
# programs under each series' Python).
HOOK_CONTEXT = ('JUJU_', 'CHARM_DIR', 'SIM_PYTHONS_SEEN')


def environment(hook_environment: Dict[str, str]) -> Dict[str, str]:
    """A hook's environment less the hook context: a program that needs
    Juju's context fails here as it would under NRPE."""
    return {name: value for name, value in hook_environment.items()
            if not name.startswith(HOOK_CONTEXT)}


def as_user(user: str) -> Tuple[Dict[str, Any], str]:
    """subprocess arguments that drop root for a user other than root,
    and a note for the step's stderr when that is not possible (the
    simulator is not root: the program runs as the current user)."""
    if user == 'root':
        return {}, ''
    if os.geteuid() != 0:
        return {}, ('sim: exec: the simulator is not root, so it cannot '
                    'switch to {}; ran as the current user\n'.format(user))
    return {'user': UNPRIVILEGED, 'group': UNPRIVILEGED,
            'extra_groups': []}, ''


def open_to_others(directories: List[str]) -> None:
    """Let another user traverse the sandbox's own directories (the
    temporary directory is 0700), as a host's / and /var are; what is
    under them keeps its modes (root-only files stay root-only)."""
    for directory in directories:
        mode = os.stat(directory).st_mode
        os.chmod(directory, mode | 0o111)


# The unit's venv Python (layer:basic's), below the agent's directory,
# which runs the exporter: `exec: {argv: [<agent dir>/.venv/bin/python3,
# -m, nvidia_vgpu.monitoring.exporter, --once]}`.
VENV_PYTHON = '/.venv/bin/python3'
# NVML as the simulated host answers it (stand_ins/nvml/pynvml.py).
NVML_STAND_IN = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             'stand_ins', 'nvml')


def unit_python(hook_python: str, charm_dir: str,
                environment: Dict[str, str]) -> Tuple[str, Dict[str, str]]:
    """The unit's venv Python as the exporter's service runs it: the
    hooks' own interpreter (the simulator keeps the venv off the host),
    the charm's lib/ on PYTHONPATH as the service's unit sets it, and the
    simulated NVML ahead of NVIDIA's bindings, which find no driver
    here."""
    paths = [NVML_STAND_IN, os.path.join(charm_dir, 'lib')]
    if environment.get('PYTHONPATH'):
        paths.append(environment['PYTHONPATH'])
    return hook_python, dict(environment, PYTHONPATH=os.pathsep.join(paths))


def missing(program: str) -> Dict[str, Any]:
    """The record of a program that is not on the host, as a shell
    would answer it."""
    return {'exit_code': NOT_FOUND, 'stdout': '',
            'stderr': 'sh: 1: {}: not found\n'.format(program)}
