"""A MIG GPU as the charm's boot units leave it, for both sides.

The charm reads MIG through nvidia-smi; Nova reads only libvirt's node
devices, where a VF of a GPU in MIG mode offers a MIG-backed type while a
GPU instance (GI) of that type's profile is free. Both must see the same
GPU, so both come from one state kept as the simulator keeps it
(sim/mig.py), changed and read only through the simulator's own fake
nvidia-smi (sim/fakebin/host_commands/nvidia_smi.py, NVIDIA's printed
forms) and its rules: what the charm is answered is what the simulator
would print, and which VF offers what is what the simulator would write
to sysfs.
"""
import contextlib
import io
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from sim import host as sim_host
from sim import mig as sim_mig
from sim.fakebin.host_commands import nvidia_smi as fake_nvidia_smi
from sim.fakebin.state import Exit

# {GPU address: its MIG state, as sim/mig.py keeps it}
MigState = Dict[str, Dict[str, Any]]


def hardware(pci: Sequence[Dict[str, Any]], mig: MigState,
             mdevs: Sequence[Dict[str, str]] = ()) -> Dict[str, Any]:
    """The host dictionary sim/mig.py and the fake nvidia-smi read: every
    SR-IOV GPU's VFs enabled (as charm_side and FakeHost lay them out),
    the NVIDIA driver loaded, these vGPUs (mdevs) existing."""
    return {'pci': list(pci), 'mig': mig, 'mdevs': list(mdevs),
            'modules': ['nvidia'],
            'vfs': {function['address']: function['sriov']['total_vfs']
                    for function in pci if function.get('sriov')}}


def nvidia_smi(host: Dict[str, Any], argv: Sequence[str]
               ) -> Tuple[int, str, str]:
    """(exit status, stdout, stderr) of the simulator's nvidia-smi run
    with argv on this host; a form it does not know exits 2, as
    nvidia-smi does for a bad argument. It may change host['mig'] (-mig,
    -cgi), as the real one changes the GPU."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            answered = fake_nvidia_smi.answer({'host': host}, list(argv))
        except Exit as stopped:
            return stopped.code, out.getvalue(), err.getvalue() + \
                stopped.message
    if answered is None:
        return 2, '', 'not simulated: {}\n'.format(' '.join(argv))
    return answered[0], out.getvalue(), err.getvalue()


def cut(pci: Sequence[Dict[str, Any]],
        layout: Mapping[str, Mapping[str, int]]) -> MigState:
    """Each GPU the layout names (by address: {GI profile: count}) in MIG
    mode with those GIs, made as the charm's boot units make them after
    the VFs are enabled: `-mig 1`, then one `mig -cgi` of every GI,
    largest first (first fit, in the simulator); other MIG-capable GPUs
    as the scenario dictionary says (MIG disabled unless it says
    otherwise). A step nvidia-smi refuses fails the test: the layout
    asked for is then no layout a host could have."""
    host = hardware(pci, sim_mig.initial(pci))
    for address, instances in layout.items():
        bus = fake_nvidia_smi.bus_id(address)
        wanted = sorted(
            (profile for profile, count in instances.items()
             for _ in range(count)),
            key=lambda profile: (-sim_mig.slice_count(profile), profile))
        steps: List[List[str]] = [['-i', bus, '-mig', '1']]
        if wanted:
            steps.append(['mig', '-i', bus, '-cgi', ','.join(wanted)])
        for argv in steps:
            code, out, err = nvidia_smi(host, argv)
            assert code == 0, (argv, out, err)
    return host['mig']


def gi_users(pci: Sequence[Dict[str, Any]], mig: MigState,
             mdevs: Sequence[Dict[str, str]], address: str
             ) -> Dict[str, str]:
    """vGPU UUID -> the profile of the GI it took, on this GPU (sim/mig.py
    gives each vGPU of a MIG-backed type one GI of its profile)."""
    function = next(f for f in pci if f['address'] == address)
    host = hardware(pci, mig, mdevs)
    profiles = {gi['id']: gi['profile']
                for gi in mig[address]['gpu_instances']}
    return {uuid: profiles[gi] for gi, uuid in
            sim_mig.gi_users(host, function).items()}


def vf_offers(pci: Sequence[Dict[str, Any]], mig: MigState,
              mdevs: Sequence[Dict[str, str]], vf: str
              ) -> Optional[Dict[str, Dict[str, Any]]]:
    """The mdev types this VF lists now, with available_instances, where
    its GPU is in MIG mode (sim/mig.py vf_mdev_types: every MIG-backed
    type, 1 while the VF hosts no vGPU and a GI of the type's profile is
    free); None where its GPU is not in MIG mode (its time-sliced types
    then apply)."""
    host = hardware(pci, mig, mdevs)
    for function in pci:
        sriov = function.get('sriov')
        if sriov and vf in sim_host.vf_addresses(function['address'],
                                                 sriov['total_vfs']):
            if not sim_mig.mig_enabled(host, function):
                return None
            return sim_mig.vf_mdev_types(host, function, vf)
    return None
