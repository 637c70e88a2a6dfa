"""One fake tool's run: record it, find its handler by the name it was
called by, apply a scenario's fault, run it on the locked state, then
start what it left to run after the lock (a unit's ExecStart)."""
import os
import subprocess
import sys

from sim.fakebin.host_commands import COMMANDS
from sim.fakebin.host_commands.common import PASS_THROUGH, READ_ONLY_ENV
from sim.fakebin.host_commands.services import AFTER_STATE
from sim.fakebin.juju_tools import TOOLS
from sim.fakebin.state import COMMAND, HOST_ROOT, Exit, State, record


def pass_through(name, argv):
    if name == 'lspci':
        # Names from pciutils' pci.ids alone, not from this machine's udev
        # hwdb, which differs between machines and updates: the same
        # scenario prints the same JSON everywhere.
        argv = ['-A', 'linux-sysfs', '-O',
                'sysfs.path={}/sys/bus/pci'.format(HOST_ROOT),
                '-O', 'hwdb.disable=1'] + argv
    # dpkg-deb runs tar and decompressors of its own; they only read.
    os.environ['PATH'] = READ_ONLY_ENV['PATH']
    os.execv(PASS_THROUGH[name], [PASS_THROUGH[name]] + argv)


def main(argv):
    name = os.path.basename(argv[0])
    args = argv[1:]
    COMMAND[:] = [name] + args
    if name in PASS_THROUGH:
        record('host', [name] + args)
        pass_through(name, args)
    if name in TOOLS:
        record('tool', [name] + args)
        handler = TOOLS[name]
    elif name in COMMANDS:
        record('host', [name] + args)
        handler = COMMANDS[name]
    else:
        sys.stderr.write('{}: not simulated\n'.format(name))
        return 127
    try:
        with State() as state:
            fault = (state['host'].get('faults', {}).get(name)
                     if name in COMMANDS else None)
            if fault:
                # The scenario broke this command (a faults step).
                raise Exit(1, fault.rstrip('\n') + '\n')
            # A handler may return an exit status: what it changed is
            # kept (raising Exit keeps nothing).
            code = handler(state, args)
    except Exit as stop:
        sys.stderr.write(stop.message)
        return stop.code
    if code:
        return code
    return run_after_state(os.path.dirname(os.path.abspath(argv[0])))


def run_after_state(bin_dir):
    """What the call left to run once the lock is released (a started
    unit's ExecStart; a fake command by its name, from bin_dir)."""
    for command, environment, unit in AFTER_STATE:
        if not os.path.isabs(command[0]):
            command = [os.path.join(bin_dir, command[0])] + command[1:]
        done = subprocess.run(command, env=dict(os.environ, **environment))
        if done.returncode:
            # As systemd: the unit is left failed, systemctl says so.
            with State() as state:
                service = state['host']['services'][unit]
                service['active'] = False
                service['failed'] = True
            sys.stderr.write(
                'Job for {0}.service failed because the control process '
                'exited with error code.\nSee "systemctl status '
                '{0}.service" and "journalctl -xeu {0}.service" for '
                'details.\n'.format(unit))
            return 1
    return 0
