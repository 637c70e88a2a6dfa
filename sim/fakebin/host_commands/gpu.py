"""The GPU's tools: sriov-manage (VFs), nvidia-smi and mdevctl."""
import os
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
        from sim import mdev_definitions, mig
        if argv[0] == '-e':
            if mig.vfio_form(function):
                # Rebinding the GPU makes its VFs anew: on the VFIO form
                # they lose their types, and the GIs they held go with
                # the others (sim/mig.py).
                for vf in host.vf_addresses(
                        function['address'],
                        state['host']['vfs'].get(function['address'], 0)):
                    if vf in types:
                        guests.vf_retyped(state['host'], STEP, vf,
                                          types.pop(vf), 0,
                                          ' '.join(COMMAND))
            state['host']['vfs'][function['address']] = sriov['total_vfs']
            # Rebinding the GPU wipes its GPU instances (sim/mig.py).
            mig.sriov_enabled(state['host'], function['address'])
            # Each new VF registers with mdev: mdevctl's udev rule starts
            # the persistent mdevs defined on it.
            mdev_definitions.start_for_parents(
                state['host'], host.vf_addresses(function['address'],
                                                 sriov['total_vfs']))
            continue
        # Disabled VFs are gone, and with them the types they were given.
        for vf in host.vf_addresses(
                function['address'],
                state['host']['vfs'].pop(function['address'], 0)):
            if mig.vfio_form(function):
                # A GI the VF held is free again (the VF is gone).
                mig.release_vf(state['host'], function, vf)
            if vf in types:
                guests.vf_retyped(state['host'], STEP, vf, types.pop(vf),
                                  None, ' '.join(COMMAND))
    refresh_sysfs(state)


def refresh_sysfs(state):
    """Regenerate the sandbox's /sys after a change of hardware state,
    keeping the vGPU types written to VFs and what was done to vGPUs
    through sysfs (host state)."""
    sync_vf_types(state)
    _, host = simulator()
    host.take_in_mdev_writes(os.path.join(HOST_ROOT, 'sys'), state['host'],
                             STEP)
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
    # Types written to VFs since the last look take (or fail to take)
    # their GPU instances before nvidia-smi looks at them.
    sync_vf_types(state)
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
    """mdevctl's `define` keeps an mdev across reboots (as libvirt's
    node-device driver does for Nova): /etc/mdevctl.d/<parent>/<uuid>.
    The parent and type are those given, else the running mdev's. Other
    forms are only recorded."""
    if 'mdevctl' not in installed_packages(state):
        raise Exit(127, 'mdevctl: command not found\n')
    state['host'].setdefault('mdevctl_calls', []).append(argv)
    if argv[:1] == ['define']:
        _mdevctl_define(state['host'], argv[1:])


def _mdevctl_define(host, args):
    from sim import mdev_definitions
    given = {}
    flags = {'-u': 'uuid', '--uuid': 'uuid', '-p': 'parent',
             '--parent': 'parent', '-t': 'type', '--type': 'type'}
    words = list(args)
    while words:
        word = words.pop(0)
        if word in flags and words:
            given[flags[word]] = words.pop(0)
        elif word not in ('-a', '--auto'):
            raise Exit(1, 'simulated mdevctl define: unexpected {!r}\n'
                       .format(word))
    uuid = given.get('uuid')
    if not uuid:
        raise Exit(1, 'simulated mdevctl define: a UUID is required\n')
    definitions = host.setdefault('mdev_definitions', {})
    if uuid in definitions:
        raise Exit(1, 'simulated mdevctl define: {} is already defined\n'
                   .format(uuid))
    running = next((mdev for mdev in host['mdevs'] if mdev['uuid'] == uuid),
                   {})
    parent = given.get('parent', running.get('parent'))
    type_id = given.get('type', running.get('type'))
    if not parent or not type_id:
        raise Exit(1, 'simulated mdevctl define: {} is not running; give '
                   'its parent and type\n'.format(uuid))
    definitions[uuid] = {'parent': parent, 'type': type_id}
    mdev_definitions.write_files(HOST_ROOT, definitions)
