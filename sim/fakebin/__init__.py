"""Fake Juju hook tools and host commands, one program under many names.

The simulator writes a small launcher (launcher()) with its own
interpreter in the shebang and links it under every tool name into a
directory that comes first (and, with a few read-only pass-throughs,
alone) on the hook's PATH. The launcher imports this package from the
simulator's tree and runs dispatch.main, which picks the tool by the
name it was called by. Each call reads and writes the JSON state file
named by $SIM_STATE (state.py), answering in the forms charmhelpers uses
(see ../shared/reference/reactive-anatomy.md). Host commands are recorded
in $SIM_COMMANDS and change only the simulated host.
It runs with `python -IS` (quick to start, and nothing from the hook's
environment leaks in); only relation-set --file reaches for PyYAML.
juju-log, called dozens of times per hook, is a separate shell script.
Where a C compiler builds sim/tool_client.c, the names link to it
instead, and sim/tool_server.py runs dispatch.main in a fork of one warm
process per simulation, on the caller's streams and environment.

    state.py          the shared state, the command record, helpers
    juju_tools.py     Juju's hook tools (config-get, status-set, ...)
    host_commands/    the host's commands: packages.py (apt, dpkg) and
                      debs.py (the .debs they install), services.py
                      (systemctl, service), kernel.py (modules,
                      initramfs, mokutil), gpu.py (sriov-manage,
                      nvidia-smi, mdevctl), nvidia_smi.py (its MIG
                      forms), sandbox.py (touch,
                      virtualenv, nc), common.py (what they share)
    dispatch.py       one call: record, fault, handler, what runs after
"""
import os

from sim.fakebin.host_commands import HOST_COMMANDS
from sim.fakebin.host_commands.common import PASS_THROUGH
from sim.fakebin.juju_tools import HOOK_TOOLS, JUJU_LOG
from sim.fakebin.state import write_dpkg_status

__all__ = ['HOOK_TOOLS', 'HOST_COMMANDS', 'JUJU_LOG', 'PASS_THROUGH',
           'launcher', 'write_dpkg_status']

# The tree this package is imported from (it holds sim/).
_TREE = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def launcher(python):
    """The program linked under every tool name: `python -IS`, this
    package from this tree."""
    return ('#!{} -IS\n'
            'import sys\n'
            'sys.path.insert(0, {!r})\n'
            'from sim.fakebin.dispatch import main\n'
            'sys.exit(main(sys.argv))\n').format(python, _TREE)
