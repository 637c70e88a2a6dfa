"""Guests on the simulated host, and the oracle of their broken vGPUs.

A guest "uses a vGPU" while its libvirt definition references an mdev the
host has, or has as a PCI hostdev a VF that was given a vGPU type (the
vendor-specific VFIO driver). Stopping or restarting the vGPU Manager, or
replacing the driver package, breaks the vGPUs of those guests that run
(libvirt_domains[].state, running by default); removing the driver, or
retyping such a VF, breaks theirs whether they run or not (a stopped
guest could not start with its vGPU again). The simulator records each
such moment in the host state's guest_disruptions, which the output
reports, so that scenarios can prove the charm waited for the guests
instead.

Pure functions of the host state (a dict as the simulator keeps it);
the callers (runner.py, fakebin/) decide when something happened.
"""
from typing import Any, Dict, List, Optional

# libvirt_domains[].state: running unless the scenario says otherwise.
DOMAIN_STATES = ('running', 'shutoff')
# The daemon that serves the running guests' vGPUs.
VGPU_MANAGER = 'nvidia-vgpu-mgr'
DRIVER_PACKAGE_PREFIX = 'nvidia-vgpu-ubuntu-'


def _domains(host: Dict[str, Any]) -> List[Dict[str, Any]]:
    return sorted(host.get('libvirt_domains', []),
                  key=lambda domain: domain['name'])


def vgpu_guests(host: Dict[str, Any], running_only: bool = True
                ) -> List[str]:
    """Names of the guests that use a vGPU now, sorted; running_only:
    only those running (a stopped guest's vGPU serves no one while the
    vGPU Manager stops or its driver is replaced: it is there again, the
    same, when the guest next starts)."""
    mdevs = {mdev['uuid'].lower() for mdev in host.get('mdevs', [])}
    typed = {vf for vf, type_id in host.get('vf_vgpu_types', {}).items()
             if type_id}
    return [domain['name'] for domain in _domains(host)
            if (running(domain) or not running_only) and (
                mdevs & {uuid.lower() for uuid in domain.get('mdevs', [])} or
                typed & {vf.lower() for vf in domain.get('pci', [])})]


def running(domain: Dict[str, Any]) -> bool:
    """Whether libvirt runs this guest (libvirt_domains[].state)."""
    return domain.get('state', DOMAIN_STATES[0]) == 'running'


def guests_on_vf(host: Dict[str, Any], vf: str) -> List[str]:
    """Names of the guests that have this VF as a PCI hostdev, sorted."""
    return [domain['name'] for domain in _domains(host)
            if vf.lower() in {address.lower()
                              for address in domain.get('pci', [])}]


def record(host: Dict[str, Any], step: int, guests: List[str],
           cause: str) -> None:
    """Note in the host state that these guests' vGPUs broke."""
    host.setdefault('guest_disruptions', []).extend(
        {'step': step, 'guest': guest, 'cause': cause} for guest in guests)


def vf_retyped(host: Dict[str, Any], step: int, vf: str, old: int,
               new: Optional[int], how: str = '') -> None:
    """A VF's vGPU type changed from old (as host['vf_vgpu_types'] said
    before the change) to new (None: the VF is gone); a guest on it
    loses its vGPU if it had one."""
    if not old or old == new:
        return
    change = ('VF {} (vGPU type {}) removed'.format(vf, old) if new is None
              else 'VF {} vGPU type {} -> {}'.format(vf, old, new))
    record(host, step, guests_on_vf(host, vf),
           change + (' by ' + how if how else ''))


def driver_packages(packages: Dict[str, str]) -> Dict[str, str]:
    """The installed vGPU Manager driver packages, name -> version."""
    return {name: version for name, version in sorted(packages.items())
            if name.startswith(DRIVER_PACKAGE_PREFIX)}
