"""What a reboot does to the simulated host before the charm's units and
its start hook run: the modules that load (the vGPU driver unless
nouveau holds the GPUs, DKMS did not build its module for the kernel
booting, or the kernel refuses that module's signature), the
DKMS key an operator confirmed, what the driver forgets (VFs, mdevs,
VF vGPU types, GPU instances, MIG mode where it does not survive a
reboot), a new kernel log, the services that start; and the order of
the boot units the charm installed."""
import fnmatch
import os
from typing import Any, Dict, List

from sim import dkms, gpu_errors
from sim import host as simhost, mdev_definitions, mig

NVIDIA_DRIVER_PACKAGE = 'nvidia-vgpu-ubuntu-*'
NVIDIA_MODULES = ('nvidia', 'nvidia_vgpu_vfio')


def restart(host: Dict[str, Any], nouveau_blacklisted: bool) -> List[str]:
    """The host state (changed in place) once the machine is back up,
    before any unit the charm installed runs; returns those units that
    start at boot, by name."""
    if 'pci_at_next_boot' in host:
        # The hardware changed while the machine was down (a pci step):
        # a board that stayed keeps its MIG state, a new one comes up as
        # the step describes it.
        unchanged = {function['address'] for function in
                     host['pci_at_next_boot'] if function in host['pci']}
        host['pci'] = host.pop('pci_at_next_boot')
        host['mig'] = dict(mig.initial(host['pci']), **{
            address: gpu for address, gpu in host.get('mig', {}).items()
            if address in unchanged})
    modules = _modules_at_boot(host, nouveau_blacklisted)
    host['modules'] = modules
    host['vfs'] = {}
    host['mdevs'] = []
    # The driver forgets the types it gave VFs (the VFs are gone), and
    # every GPU's mixed-size mode.
    host['vf_vgpu_types'] = {}
    host['mixed_modes'] = {}
    # GPU instances are gone; MIG mode stays only where it survives a
    # reboot (sim/mig.py).
    if 'mig' in host:
        mig.reboot(host)
    # The driver registers the GPUs with the mdev framework: mdevctl's
    # udev rule starts their persistent mdevs (a VF's start with it).
    mdev_definitions.start_for_parents(
        host, [function['address'] for function in host['pci']])
    # A new kernel log; volatile GPU error counts start again.
    gpu_errors.reboot(host)
    host['reboots'] += 1
    host['reboot_requested'] = False
    return _start_services(host, modules)


def _modules_at_boot(host: Dict[str, Any],
                     nouveau_blacklisted: bool) -> List[str]:
    """The kernel modules that load; host's DKMS key and driver version
    follow."""
    modules = [name for name in host['boot_modules']
               if name not in NVIDIA_MODULES and
               not (name == 'nouveau' and nouveau_blacklisted)]
    driver = next((version for name, version in
                   sorted(host['packages'].items())
                   if fnmatch.fnmatchcase(name, NVIDIA_DRIVER_PACKAGE)),
                  None)
    kernel = host['kernel']
    if kernel['mok'] == 'imported':
        # Someone at the console confirms the key in MokManager.
        kernel['mok'] = 'enrolled'
    if host.get('dkms_module') and simhost.signatures_required(
            kernel) and kernel['mok'] != 'enrolled':
        # DKMS signed the module with a key the firmware does not
        # trust: "Key was rejected by service".
        driver = None
    if not dkms.built_for(host, kernel['release']):
        # "modprobe: FATAL: Module nvidia not found in directory
        # /lib/modules/<release>": its headers were not there to build.
        driver = None
    host['nvidia_version'] = None
    if driver and 'nouveau' not in modules:
        modules += list(NVIDIA_MODULES)
        host['nvidia_version'] = driver
    return modules


def _start_services(host: Dict[str, Any], modules: List[str]) -> List[str]:
    """Enabled services start where their module loaded; those the charm
    installed (a unit file of its own) are returned, to run after."""
    boot_units = []
    for name, service in sorted(host['services'].items()):
        needs = service.get('needs_module')
        starts = (service['enabled'] and not service['masked'] and
                  (not needs or needs in modules))
        if starts and service.get('unit_file'):
            boot_units.append(name)
            starts = False
        service['active'] = starts
        service.pop('failed', None)
    return boot_units


def nouveau_blacklisted(host_root: str) -> bool:
    """Whether a file in /etc/modprobe.d keeps nouveau out."""
    directory = os.path.join(host_root, 'etc', 'modprobe.d')
    if not os.path.isdir(directory):
        return False
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name)) as stream:
            if any(line.split()[:2] == ['blacklist', 'nouveau']
                   for line in stream):
                return True
    return False


def boot_order(host_root: str, units: List[str]) -> List[str]:
    """Units sorted as systemd orders them: each after those its After=
    names, and before those its Before= names."""
    after: Dict[str, List[str]] = {name: [] for name in units}
    for name in units:
        path = os.path.join(host_root, 'etc', 'systemd', 'system',
                            name + '.service')
        with open(path) as stream:
            for line in stream:
                key, _, value = line.strip().partition('=')
                named = [word[:-len('.service')] for word in value.split()
                         if word[:-len('.service')] in units]
                if key == 'After':
                    after[name] += named
                elif key == 'Before':
                    for other in named:
                        after[other].append(name)
    ordered: List[str] = []
    while len(ordered) < len(units):
        ready = sorted(name for name in units if name not in ordered and
                       all(dep in ordered for dep in after[name]))
        ordered.append(ready[0] if ready else sorted(
            set(units) - set(ordered))[0])
    return ordered
