"""The host's package manager: installed packages, .deb files, apt-get."""
import os
import subprocess
from typing import Any, Dict, List, Optional, Sequence, Tuple

from nvidia_vgpu.host.hostfs import host_path
from nvidia_vgpu import model

APT_ENV = {'DEBIAN_FRONTEND': 'noninteractive'}
DPKG_STATUS = '/var/lib/dpkg/status'
# Changes dpkg has journalled but not yet folded into the status file.
DPKG_UPDATES = '/var/lib/dpkg/updates'
SYSTEMD_UNIT_DIRS = ('/lib/systemd/system/', '/usr/lib/systemd/system/')
# What DKMS builds from: a module's sources with their dkms.conf, which a
# package ships under /usr/src/<module>-<version>/ for `dkms add`.
DKMS_CONF = 'dkms.conf'
DKMS_PACKAGE = 'dkms'


def installed_version(package: str) -> Optional[str]:
    """Version of an installed package, or None when it is not installed.

    dpkg-query also knows packages that were removed but not purged
    (config-files state); only an installed one counts here, whether it
    is selected for install or held (`apt-mark hold`, which operators
    put on the vGPU Manager and on nova: "hi", not "ii").
    """
    try:
        output = subprocess.run(
            ['dpkg-query', '--show',
             '--showformat=${db:Status-Abbrev}\t${Version}', package],
            check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            universal_newlines=True).stdout
    except subprocess.CalledProcessError:
        return None
    status, _, version = output.partition('\t')
    # Status-Abbrev: selection, state, error flag; the state 'i' is
    # installed.
    return version.strip() if status[1:2] == 'i' else None


def status_versions(packages: Sequence[str]
                    ) -> Optional[Dict[str, Optional[str]]]:
    """The installed version of each of these packages (None: not
    installed) from dpkg's status file, read as a file, without a
    process: for a caller that must stay cheap (list-vgpu-types). None
    where dpkg has changes not yet folded into the file (updates/): ask
    dpkg-query then."""
    if os.listdir(host_path(DPKG_UPDATES)) if os.path.isdir(
            host_path(DPKG_UPDATES)) else False:
        return None
    wanted = set(packages)
    found: Dict[str, Optional[str]] = dict.fromkeys(packages)
    fields: Dict[str, str] = {}
    try:
        with open(host_path(DPKG_STATUS), encoding='utf-8',
                  errors='replace') as stream:
            for line in list(stream) + ['\n']:
                if not line.strip():
                    # Status: selection, flag, state ("hold ok
                    # installed" is installed too)
                    if fields.get('Package') in wanted and fields.get(
                            'Status', '').split()[2:] == ['installed']:
                        found[fields['Package']] = fields.get('Version')
                    fields = {}
                elif not line[0].isspace() and ':' in line:
                    key, _, value = line.partition(':')
                    fields[key] = value.strip()
    except OSError:
        return None
    return found


def database_stamp() -> Optional[List[Any]]:
    """Something that differs whenever dpkg has recorded a change: dpkg
    replaces its status file (new inode and mtime) and journals pending
    changes in updates/. None where there is no dpkg database."""
    try:
        status = os.stat(host_path(DPKG_STATUS))
    except OSError:
        return None
    try:
        pending = sorted(os.listdir(host_path(DPKG_UPDATES)))
    except OSError:
        pending = []
    return [status.st_ino, status.st_mtime_ns, status.st_size] + pending


def remembered_version(package: str, remembered: Optional[Dict[str, Any]]
                       ) -> Tuple[Optional[str], Dict[str, Any]]:
    """installed_version(package), without asking dpkg again while its
    database has not changed since `remembered` (what an earlier call
    returned to keep) was made; returns the version and what to keep.

    Every hook needs nova's version (the release); on a settled host
    update-status then runs no package tool at all.
    """
    stamp = database_stamp()
    if stamp is None:
        return installed_version(package), {}
    versions = {}
    if remembered and remembered.get('stamp') == stamp:
        versions = dict(remembered.get('versions', {}))
    if package not in versions:
        versions[package] = installed_version(package)
    return versions[package], {'stamp': stamp, 'versions': versions}


def read_deb(path: str) -> Optional[model.DebInfo]:
    """Package, version, systemd services of a .deb and whether it builds
    a kernel module on the host; None when dpkg-deb cannot read the file
    as a Debian package."""
    try:
        fields = subprocess.run(
            ['dpkg-deb', '--showformat=${Package}\t${Version}\t'
             '${Architecture}\t${Pre-Depends}\t${Depends}', '--show',
             path],
            check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            universal_newlines=True).stdout
        contents = subprocess.run(['dpkg-deb', '--contents', path],
                                  check=True, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE,
                                  universal_newlines=True).stdout
    except subprocess.CalledProcessError:
        return None
    package, version, architecture, pre_depends, depends = (
        fields.split('\t') + [''] * 4)[:5]
    services = set()
    dkms_sources = False
    for line in contents.splitlines():
        name = line.split()[-1].lstrip('.') if line.split() else ''
        if name.startswith(SYSTEMD_UNIT_DIRS) and name.endswith('.service'):
            services.add(os.path.basename(name)[:-len('.service')])
        if os.path.basename(name) == DKMS_CONF:
            dkms_sources = True
    return model.DebInfo(package.strip(), version.strip(),
                         architecture.strip(), tuple(sorted(services)),
                         dkms_sources or DKMS_PACKAGE in depended_on(
                       pre_depends + ',' + depends))


def depended_on(relations: str) -> List[str]:
    """The package names a Depends-style field names, alternatives
    included ("dkms (>= 2.1), gcc | clang" -> dkms, gcc, clang)."""
    names = []
    for alternative in relations.replace('|', ',').split(','):
        name = alternative.strip().split(' ')[0].split('(')[0]
        name = name.split(':')[0]
        if name:
            names.append(name)
    return names


def install_local_deb(path: str) -> Optional[str]:
    """Install a .deb with apt, so its dependencies (dkms, headers) come
    from the archive. Returns None on success, else apt's reason.

    The file is the revision the operator attached, older than what is
    installed when they roll back: apt refuses a downgrade under
    --assume-yes unless told it is meant.
    """
    return install_packages([path], allow_downgrades=True)


def install_packages(packages: List[str],
                     allow_downgrades: bool = False) -> Optional[str]:
    """apt-get install; None on success, else apt's reason in one line.

    Unlike charmhelpers' apt_install, it neither retries for minutes nor
    loses apt's message: the caller shows it in the unit's status.
    """
    done = subprocess.run(
        ['apt-get', '--assume-yes',
         '--option=Dpkg::Options::=--force-confold'] +
        (['--allow-downgrades'] if allow_downgrades else []) +
        ['install'] + packages,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        universal_newlines=True, env=dict(os.environ, **APT_ENV))
    if done.returncode == 0:
        return None
    lines = [line.strip() for line in (done.stderr + done.stdout).splitlines()
             if line.strip()]
    detail = [line for line in lines if ' : Depends: ' in line]
    errors = [line for line in lines if line.startswith('E:')]
    return (detail or errors or lines or
            ['apt-get exited with {}'.format(done.returncode)])[0]
