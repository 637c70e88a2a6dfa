"""The kernel: modules (modprobe, rmmod, lsmod), the initramfs, and shim's
key tool (mokutil)."""
import os
import sys

from sim.fakebin.host_commands.common import installed_packages
from sim.fakebin.state import HOST_ROOT, Exit, parse


def cmd_update_initramfs(state, argv):
    state['host']['initramfs_updated'] = True


def cmd_modprobe(state, argv):
    opts, args = parse(argv, (), ('-r', '--remove', '-q', '--quiet'))
    modules = state['host']['modules']
    for name in args[:1]:
        if '-r' in opts or '--remove' in opts:
            if name in modules:
                modules.remove(name)
        elif name not in modules:
            raise Exit(1, 'modprobe: FATAL: Module {} not found in directory '
                          '/lib/modules/{}\n'.format(
                              name, state['host']['kernel']['release']))


def cmd_rmmod(state, argv):
    cmd_modprobe(state, ['-r'] + argv)


def cmd_lsmod(state, argv):
    sys.stdout.write('Module                  Size  Used by\n')
    for name in state['host']['modules']:
        sys.stdout.write('{:<24}{:>6}  0\n'.format(name, 16384))


def cmd_mokutil(state, argv):
    """shim's key tool, where the mokutil package is installed:
    --sb-state, and --test-key on DKMS's certificate (the only key the
    simulated host has), worded as mokutil 0.6 words them."""
    if 'mokutil' not in installed_packages(state):
        raise Exit(127, 'mokutil: command not found\n')
    kernel = state['host']['kernel']
    if argv == ['--sb-state']:
        sys.stdout.write('SecureBoot {}\n'.format(
            'enabled' if kernel['secure_boot'] else 'disabled'))
        return
    if len(argv) == 2 and argv[0] in ('--test-key', '-t'):
        if not os.path.isfile(HOST_ROOT + argv[1]):
            raise Exit(255, 'Failed to open {}\n'.format(argv[1]))
        if kernel['mok'] == 'enrolled':
            sys.stdout.write('{} is already enrolled\n'.format(argv[1]))
        elif kernel['mok'] == 'imported':
            sys.stdout.write('{} is already in the enrollment request\n'
                             .format(argv[1]))
        else:
            sys.stdout.write('{} is not enrolled\n'.format(argv[1]))
            raise Exit(1)
        return
    raise Exit(2, 'mokutil: not simulated: {}\n'.format(' '.join(argv)))
