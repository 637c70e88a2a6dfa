"""DKMS on the simulated host, kernel by kernel.

A driver package that builds its module with DKMS registers it, and DKMS
builds it for a kernel only where that kernel's headers are installed:
for the running kernel when the package is installed, and for a kernel
whose headers come later as they are installed (their postinst runs
DKMS, as /etc/kernel/header_postinst.d/dkms does), or by `dkms
autoinstall -k <release>`. A kernel that boots without a build of the
module does not load the driver.

The host state keeps it as host['dkms_module']: None (no package whose
module DKMS builds), else {'package', 'version', 'kernels': releases it
is built for}. Each build is a file where DKMS installs it on Ubuntu,
/lib/modules/<release>/updates/dkms/; those files are the kernel's, not
the charm's: the output's `files` leaves /lib/modules out.
"""
import os
import shutil
from typing import Any, Dict, List, Optional

# What the vGPU Manager's dkms.conf builds (module file names).
MODULE_FILES = ('nvidia.ko', 'nvidia-vgpu-vfio.ko')
INSTALL_DIR = os.path.join('lib', 'modules', '{}', 'updates', 'dkms')
HEADERS_PACKAGE = 'linux-headers-{}'


def headers_for(host_state: Dict[str, Any], release: str) -> bool:
    """A kernel's headers are installed: the running kernel's from the
    start (host.kernel.headers), any kernel's once
    linux-headers-<release> is installed."""
    kernel = host_state['kernel']
    return (release == kernel['release'] and kernel['headers']) or (
        HEADERS_PACKAGE.format(release) in host_state['packages'])


def registered(host_state: Dict[str, Any], package: str,
               version: str) -> None:
    """A package whose module DKMS builds was installed; builds for
    other kernels are gone (they were the old version's)."""
    host_state['dkms_module'] = {'package': package, 'version': version,
                                 'kernels': []}


def autoinstall(host_state: Dict[str, Any],
                release: Optional[str] = None) -> bool:
    """Build the registered module for a kernel (default: the running
    one) if its headers are there; whether it is built for it now."""
    module = host_state.get('dkms_module')
    release = release or host_state['kernel']['release']
    if not module:
        return False
    if release not in module['kernels'] and headers_for(host_state,
                                                        release):
        module['kernels'] = sorted(module['kernels'] + [release])
    return release in module['kernels']


def built_for(host_state: Dict[str, Any], release: str) -> bool:
    """Whether a kernel booting now would find the driver's module: one
    DKMS built for it, or a package whose module DKMS does not build
    (it ships its own; not simulated further)."""
    module = host_state.get('dkms_module')
    return not module or release in module['kernels']


def status_lines(host_state: Dict[str, Any]) -> List[str]:
    """`dkms status` as DKMS 2.8 prints it."""
    module = host_state.get('dkms_module')
    if not module:
        return []
    name = 'nvidia/{}'.format(module['version'])
    if not module['kernels']:
        return ['{}: added'.format(name)]
    return ['{}, {}, x86_64: installed'.format(name, release)
            for release in module['kernels']]


def write_modules(host_root: str, host_state: Dict[str, Any]) -> None:
    """The module files of every kernel it is built for; none where it
    is not (any more)."""
    module = host_state.get('dkms_module') or {'kernels': []}
    modules_root = os.path.join(host_root, 'lib', 'modules')
    releases = (os.listdir(modules_root) if os.path.isdir(modules_root)
                else [])
    for release in sorted(set(releases) | set(module['kernels'])):
        directory = os.path.join(host_root, INSTALL_DIR.format(release))
        if release not in module['kernels']:
            shutil.rmtree(directory, ignore_errors=True)
            continue
        os.makedirs(directory, exist_ok=True)
        for name in MODULE_FILES:
            with open(os.path.join(directory, name), 'w') as stream:
                stream.write('sim: {} {} built by DKMS for {}\n'.format(
                    name, module['version'], release))
