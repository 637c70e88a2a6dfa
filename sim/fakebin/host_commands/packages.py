"""Packages: apt-get, apt-cache, apt-config, dpkg and dpkg-query over the
simulated host's package list."""
import fnmatch
import sys

from sim.fakebin.host_commands.common import (
    guests_disrupted, installed_packages, is_driver_package, simulator)
from sim.fakebin.host_commands.debs import install_deb, read_deb, version_lt
from sim.fakebin.state import HOST_ROOT, Exit, parse

APT_READING = ('Reading package lists...\nBuilding dependency tree...\n'
               'Reading state information...\n')


def _apt_install_debs(state, opts, debs):
    """Local .debs as apt-get installs them (apt 2.x, as observed): one
    already installed at its version is left alone; one older than the
    installed version is a downgrade, which apt refuses (the whole
    transaction) unless given --allow-downgrades and --assume-yes."""
    installed = installed_packages(state)
    notes, downgrades, todo = [], [], []
    for deb in debs:
        current = installed.get(deb['package'])
        if current == deb['version']:
            notes.append('{} is already the newest version ({}).\n'.format(
                deb['package'], current))
            continue
        if current is not None and version_lt(deb['version'], current):
            downgrades.append((deb, current))
        todo.append(deb)
    if downgrades:
        sys.stdout.write(APT_READING + ''.join(notes) +
                         'The following packages will be DOWNGRADED:\n  ' +
                         ' '.join(deb['package'] for deb, _ in downgrades) +
                         '\n{} upgraded, {} newly installed, {} downgraded, 0 '
                         'to remove and 0 not upgraded.\n'.format(
                             sum(1 for deb in todo
                                 if deb['package'] in installed) -
                             len(downgrades),
                             sum(1 for deb in todo
                                 if deb['package'] not in installed),
                             len(downgrades)))
        if not ({'-y', '--assume-yes', '--yes'} & set(opts)):
            sys.stdout.write('Need to get 0 B of archives.\n'
                             'Do you want to continue? [Y/n] Abort.\n')
            raise Exit(1)
        if '--allow-downgrades' not in opts:
            raise Exit(100, 'E: Packages were downgraded and -y was used '
                            'without --allow-downgrades.\n')
    elif notes:
        sys.stdout.write(APT_READING + ''.join(notes))
    for deb, current in downgrades:
        sys.stdout.write('dpkg: warning: downgrading {} from {} to {}\n'
                         .format(deb['package'], current, deb['version']))
    for deb in todo:
        install_deb(state, deb, 'apt-get install')


def cmd_apt_get(state, argv):
    opts, args = parse(argv, ('-o', '--option'),
                       ('-y', '--assume-yes', '--yes', '-q', '--quiet',
                        '--purge', '--no-install-recommends',
                        '--allow-downgrades'))
    if not args:
        raise Exit(100, 'E: Invalid operation\n')
    verb, names = args[0], args[1:]
    unavailable = state['host'].get('unavailable_packages', [])
    if verb in ('update', 'upgrade', 'autoremove', 'clean'):
        return
    if verb == 'install':
        debs = []
        for name in names:
            if name.endswith('.deb') or '/' in name:
                debs.append(read_deb(name))
            elif name in unavailable:
                raise Exit(100, 'E: Unable to locate package {}\n'.format(
                    name))
        _apt_install_debs(state, opts, debs)
        for name in names:
            if not (name.endswith('.deb') or '/' in name):
                installed_packages(state).setdefault(name, '1.0-0ubuntu1')
        headers = [name[len('linux-headers-'):] for name in names
                   if name.startswith('linux-headers-')]
        if headers:
            from sim import dkms
            for release in headers:
                # The headers' postinst has DKMS build for their kernel.
                dkms.autoinstall(state['host'], release)
            _, host = simulator()
            host.write_kernel_files(HOST_ROOT, state['host'])
        return
    if verb in ('remove', 'purge'):
        for name in names:
            if is_driver_package(name) and name in installed_packages(state):
                # Without a driver a stopped guest's vGPU cannot come
                # back either.
                guests_disrupted(state, '{} {} removed (apt-get {})'.format(
                    name, installed_packages(state)[name], verb),
                    running_only=False)
            installed_packages(state).pop(name, None)
            for unit, service in list(state['host']['services'].items()):
                if service.get('package') == name:
                    del state['host']['services'][unit]
        return
    raise Exit(100, 'E: Invalid operation {}\n'.format(verb))


def cmd_dpkg(state, argv):
    if argv[:1] == ['-i'] or argv[:1] == ['--install']:
        for path in argv[1:]:
            deb = read_deb(path)
            current = installed_packages(state).get(deb['package'])
            if current is not None and version_lt(deb['version'], current):
                # dpkg itself downgrades, with a warning.
                sys.stderr.write('dpkg: warning: downgrading {} from {} to '
                                 '{}\n'.format(deb['package'], current,
                                               deb['version']))
            install_deb(state, deb, 'dpkg -i')
        return
    if argv[:1] == ['--compare-versions']:
        raise Exit(2, 'dpkg: --compare-versions is not simulated\n')
    if argv[:1] in (['--print-architecture'],):
        sys.stdout.write('amd64\n')
        return
    raise Exit(2, 'dpkg: not simulated: {}\n'.format(' '.join(argv)))


def _matching(state, patterns):
    for pattern in patterns:
        found = sorted(name for name in installed_packages(state)
                       if fnmatch.fnmatchcase(name, pattern))
        yield pattern, found


def cmd_dpkg_query(state, argv):
    opts, args = parse(argv, ('-f', '--showformat'),
                       ('-W', '--show', '-l', '--list', '-L', '--listfiles',
                        '-s', '--status'))
    missing = []
    if '-l' in opts or '--list' in opts:
        lines = ['Desired=Unknown/Install/Remove/Purge/Hold',
                 '| Status=Not/Inst/Conf-files/Unpacked/halF-conf/'
                 'Half-inst/trig-aWait/Trig-pend',
                 '|/ Err?=(none)/Reinst-required (Status,Err: '
                 'uppercase=bad)',
                 '||/ Name Version Architecture Description',
                 '+++-====-=======-============-===========']
        for pattern, found in _matching(state, args):
            if not found:
                missing.append(pattern)
            for name in found:
                lines.append('ii  {} {} amd64 {}'.format(
                    name, installed_packages(state)[name], name))
        sys.stdout.write('\n'.join(lines) + '\n')
    else:
        fmt = opts.get('-f') or opts.get('--showformat') or \
            '${Package}\t${Version}\n'
        fmt = fmt.replace('\\n', '\n').replace('\\t', '\t')
        for pattern, found in _matching(state, args):
            if not found:
                missing.append(pattern)
            for name in found:
                sys.stdout.write(
                    fmt.replace('${Package}', name)
                    .replace('${binary:Package}', name)
                    .replace('${Version}', installed_packages(state)[name])
                    .replace('${db:Status-Abbrev}', 'ii ')
                    .replace('${Status}', 'install ok installed'))
    if missing:
        raise Exit(1, ''.join(
            'dpkg-query: no packages found matching {}\n'.format(name)
            for name in missing))


def cmd_apt_cache(state, argv):
    opts, args = parse(argv, (), ('--no-all-versions',))
    if args[:1] != ['show']:
        raise Exit(100, 'E: not simulated\n')
    unavailable = state['host'].get('unavailable_packages', [])
    for name in args[1:]:
        if name in unavailable:
            raise Exit(100, 'E: No packages found\n')
        version = installed_packages(state).get(name, '1.0-0ubuntu1')
        sys.stdout.write('Package: {}\nVersion: {}\nArchitecture: amd64\n'
                         'Description: {}\n\n'.format(name, version, name))


def cmd_apt_config(state, argv):
    """charmhelpers runs `apt-config dump` when charmhelpers.fetch is
    imported, i.e. in every hook of an OpenStack charm."""
    if argv[:1] != ['dump']:
        raise Exit(100, 'E: not simulated\n')
    sys.stdout.write('APT "";\nAPT::Architecture "amd64";\n'
                     'APT::Install-Recommends "1";\n'
                     'Dir "/";\nDir::Cache "var/cache/apt/";\n')
