"""The kernel: modules (modprobe, rmmod, lsmod), the initramfs, DKMS
(dkms), shim's key tool (mokutil), and this boot's kernel log
(journalctl -k)."""
import os
import sys

from sim.fakebin.host_commands.common import installed_packages, simulator
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


def cmd_dkms(state, argv):
    """DKMS: `autoinstall [-k|--kernelver RELEASE]` builds the
    registered module for that kernel (default: the running one) where
    its headers are, silent when there is nothing to do; `status`."""
    from sim import dkms
    opts, args = parse(argv, ('-k', '--kernelver'), ('-q', '--quiet'))
    release = (opts.get('-k') or opts.get('--kernelver') or
               state['host']['kernel']['release'])
    if args == ['status']:
        sys.stdout.write(''.join(line + '\n' for line in
                                 dkms.status_lines(state['host'])))
        return
    if args != ['autoinstall']:
        raise Exit(2, 'dkms: not simulated: {}\n'.format(' '.join(argv)))
    module = state['host'].get('dkms_module')
    if not module or release in module['kernels']:
        return
    if not dkms.autoinstall(state['host'], release):
        raise Exit(11, (
            'Error! Your kernel headers for kernel {0} cannot be found at '
            '/lib/modules/{0}/build or /lib/modules/{0}/source.\n'
            'dkms autoinstall on {0}/x86_64 failed for nvidia(1)\n').format(
                release))
    sys.stdout.write('nvidia.ko:\nRunning module version sanity check.\n'
                     ' - Installation\n   - Installing to /lib/modules/{}/'
                     'updates/dkms/\ndepmod...\n'.format(release))
    _, host = simulator()
    host.write_kernel_files(HOST_ROOT, state['host'])


# journalctl's forms for this boot's kernel messages, one per line with
# nothing added (-o cat); --no-pager and --quiet change nothing here.
_JOURNAL_FLAGS = ('-k', '--dmesg', '-b', '--boot', '--no-pager', '-q',
                  '--quiet')


def cmd_journalctl(state, argv):
    """journalctl -k -b -o cat: the scenario's kernel messages of this
    boot (host.kernel_messages, kernel_messages steps; a reboot starts a
    new log). Other forms are not emulated, and say so."""
    opts, rest = parse(argv, ('-o', '--output'), _JOURNAL_FLAGS)
    output = opts.get('-o', opts.get('--output'))
    if rest or output != 'cat' or not (
            {'-k', '--dmesg'} & set(opts) and {'-b', '--boot'} & set(opts)):
        sys.stdout.write('simulated journalctl {}: the simulator emulates '
                         'only journalctl -k -b -o cat\n'.format(
                             ' '.join(argv)))
        return None
    sys.stdout.write(''.join(line + '\n' for line in
                             state['host'].get('kernel_log', [])))
    return None
