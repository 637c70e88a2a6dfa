"""Local .deb files as apt-get and dpkg install them: their control
fields (read with the real dpkg-deb), their Depends, the systemd units
they ship, and the DKMS build of a driver package's module."""
import os
import subprocess
import sys

from sim.fakebin.host_commands.common import (
    PASS_THROUGH, READ_ONLY_ENV, REAL_DPKG, guests_disrupted,
    installed_packages, is_driver_package, simulator)
from sim.fakebin.state import HOST_ROOT, Exit


def version_lt(first, second):
    return subprocess.run([REAL_DPKG, '--compare-versions', first, 'lt',
                           second], env=READ_ONLY_ENV).returncode == 0


def _deb_field(path, field):
    return subprocess.run([PASS_THROUGH['dpkg-deb'], '-f', path, field],
                          capture_output=True, text=True, check=True,
                          env=READ_ONLY_ENV).stdout.strip()


def _deb_listing(path):
    return [line.split()[-1] for line in subprocess.run(
        [PASS_THROUGH['dpkg-deb'], '-c', path], capture_output=True,
        text=True, check=True, env=READ_ONLY_ENV).stdout.splitlines()]


def _deb_units(path):
    return sorted(os.path.basename(name)[:-len('.service')]
                  for name in _deb_listing(path)
                  if '/systemd/system/' in name and name.endswith('.service'))


def _builds_module(deb):
    """Whether installing the package runs DKMS: it depends on dkms or
    ships a dkms.conf."""
    depends = [d.strip().split(' ')[0].split(':')[0]
               for d in deb['depends'].replace('|', ',').split(',')]
    return 'dkms' in depends or any(
        os.path.basename(name) == 'dkms.conf'
        for name in _deb_listing(deb['path']))


def _dkms_build(state, deb):
    """What the package's maintainer script does with DKMS: register
    the module and build it for the running kernel, which fails without
    its headers (dkms exits 21, dpkg leaves the package unconfigured;
    here it is left out of the package list, and DKMS forgets it)."""
    from sim import dkms
    _, host = simulator()
    dkms.registered(state['host'], deb['package'], deb['version'])
    if dkms.autoinstall(state['host']):
        host.write_kernel_files(HOST_ROOT, state['host'])
        return
    state['host']['dkms_module'] = None
    release = state['host']['kernel']['release']
    sys.stdout.write('Setting up {} ({}) ...\n'.format(
        deb['package'], deb['version']))
    raise Exit(100, (
        'Error! Your kernel headers for kernel {release} cannot be found at '
        '/lib/modules/{release}/build or /lib/modules/{release}/source.\n'
        'Please install the linux-headers-{release} package or use the '
        '--kernelsourcedir option to tell DKMS where it\'s located.\n'
        'dpkg: error processing package {package} (--configure):\n'
        ' installed {package} package post-installation script subprocess '
        'returned error exit status 21\n'
        'Errors were encountered while processing:\n {package}\n'
        'E: Sub-process /usr/bin/dpkg returned an error code (1)\n').format(
            release=release, package=deb['package']))


def read_deb(path):
    """A local .deb's path on this machine and its control fields."""
    real = HOST_ROOT + path if not path.startswith(HOST_ROOT) else path
    try:
        return {'path': real, 'package': _deb_field(real, 'Package'),
                'version': _deb_field(real, 'Version'),
                'depends': _deb_field(real, 'Depends')}
    except subprocess.CalledProcessError:
        raise Exit(100, 'E: Invalid archive signature\n'
                        'E: Could not read meta data from {}\n'.format(path))


def install_deb(state, deb, how):
    """Install a local .deb (read by _read_deb): its Depends must be
    installable. how: the command doing it, e.g. 'apt-get install'."""
    real, package, version, depends = (
        deb['path'], deb['package'], deb['version'], deb['depends'])
    unavailable = state['host'].get('unavailable_packages', [])
    for dependency in filter(None, (d.strip().split(' ')[0]
                                    for d in depends.split(','))):
        if dependency in unavailable:
            raise Exit(100, (
                'Some packages could not be installed.\n'
                'The following packages have unmet dependencies:\n'
                ' {} : Depends: {} but it is not installable\n'
                'E: Unable to correct problems, you have held broken '
                'packages.\n').format(package, dependency))
        installed_packages(state).setdefault(dependency, '1.0-0ubuntu1')
    if is_driver_package(package):
        state['host']['dkms_module'] = None
        if _builds_module(deb):
            _dkms_build(state, deb)
    if is_driver_package(package) and \
            installed_packages(state).get(package) != version:
        # Another driver version takes the place of what is installed.
        replaced = ['{} {}'.format(name, old) for name, old in sorted(
            installed_packages(state).items()) if is_driver_package(name)]
        if replaced:
            guests_disrupted(state, '{} replaced by {} {} ({})'.format(
                ', '.join(replaced), package, version, how))
    installed_packages(state)[package] = version
    for unit in _deb_units(real):
        service = state['host']['services'].setdefault(
            unit, {'active': False, 'enabled': False, 'masked': False})
        service['enabled'] = True
        service['package'] = package
        if package.startswith('nvidia-vgpu'):
            # The vGPU Manager daemons only run on the NVIDIA kernel driver.
            service['needs_module'] = 'nvidia'
        # Debian maintainer scripts start what they enable, where it can run.
        needs = service.get('needs_module')
        service['active'] = not service['masked'] and (
            not needs or needs in state['host']['modules'])
