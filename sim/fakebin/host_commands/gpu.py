"""The GPU's tools: sriov-manage (VFs), nvidia-smi and mdevctl."""
import sys

from sim.fakebin.host_commands import nvidia_smi
from sim.fakebin.host_commands.common import (
    installed_packages, is_driver_package, simulator, sync_vf_types)
from sim.fakebin.state import COMMAND, HOST_ROOT, STEP, Exit


def cmd_sriov_manage(state, argv):
    """NVIDIA's tool: -e enables (-d disables) the VFs of one GPU or ALL,
    which only works with the NVIDIA driver loaded."""
    if len(argv) != 2 or argv[0] not in ('-e', '-d'):
        raise Exit(1, 'usage: sriov-manage <-e|-d> <ssss:bb:dd.f|ALL>\n')
    if 'nvidia' not in state['host']['modules']:
        raise Exit(1, 'NVIDIA driver not loaded\n')
    sync_vf_types(state)
    guests, host = simulator()
    types = state['host'].setdefault('vf_vgpu_types', {})
    for function in state['host']['pci']:
        sriov = function.get('sriov')
        if not sriov or argv[1] not in ('ALL', function['address']):
            continue
        if argv[0] == '-e':
            state['host']['vfs'][function['address']] = sriov['total_vfs']
            # Rebinding the GPU wipes its GPU instances (sim/mig.py).
            from sim import mig
            mig.sriov_enabled(state['host'], function['address'])
            continue
        # Disabled VFs are gone, and with them the types they were given.
        for vf in host.vf_addresses(
                function['address'],
                state['host']['vfs'].pop(function['address'], 0)):
            if vf in types:
                guests.vf_retyped(state['host'], STEP, vf, types.pop(vf),
                                  None, ' '.join(COMMAND))
    refresh_sysfs(state)


def refresh_sysfs(state):
    """Regenerate the sandbox's /sys after a change of hardware state,
    keeping the vGPU types written to VFs (host state)."""
    sync_vf_types(state)
    _, host = simulator()
    host.generate_sysfs(HOST_ROOT, state['host']['pci'],
                        host.hardware_state(state['host']))


def cmd_nvidia_smi(state, argv):
    """Installed with the vGPU Manager package; it needs the driver.
    The MIG forms NVIDIA documents are answered in NVIDIA's forms
    (nvidia_smi.py); for anything else no real capture is at hand, so
    the fake says plainly that it is a simulation rather than imitate
    it."""
    if not any(is_driver_package(name) for name in installed_packages(state)):
        raise Exit(127, 'nvidia-smi: command not found\n')
    if 'nvidia' not in state['host']['modules']:
        raise Exit(9, 'simulated nvidia-smi: the NVIDIA driver is not '
                      'loaded\n')
    answered = nvidia_smi.answer(state, argv)
    if answered is None:
        sys.stdout.write('simulated nvidia-smi {}: the simulator does not '
                         'emulate nvidia-smi output\n'.format(' '.join(argv)))
        return None
    code, changed = answered
    if changed:
        refresh_sysfs(state)
    return code


def cmd_mdevctl(state, argv):
    if 'mdevctl' not in installed_packages(state):
        raise Exit(127, 'mdevctl: command not found\n')
    state['host'].setdefault('mdevctl_calls', []).append(argv)
