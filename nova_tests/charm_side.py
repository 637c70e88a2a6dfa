"""The charm's side: what a unit on a given host publishes over nova-vgpu,
and the nova.conf nova-compute renders from it.

The charm class runs unmodified, in this process, on a host laid out by
the simulator's sysfs generator (sim.host), with the real lspci reading
it. Only its boundaries are played: the Juju hook tools and dpkg-query
(FakeCommands, as in the unit tests), and lspci pointed at that tree. The
relation data then goes through charm-nova-compute's consumer
(nova_consumer: charmhelpers' SubordinateConfigContext and the template
part), exactly as the unit tests' round trip does.
"""
import importlib
import json
import os
import subprocess
import sys
from typing import Any, Dict, List, NamedTuple, Optional

import charmhelpers.contrib.openstack.utils as os_utils
import charmhelpers.core.hookenv as hookenv
import charmhelpers.core.unitdata as unitdata

import charms_openstack.charm.core as core
import mig_host
from nova_consumer import consume, render_text
from nvidia_vgpu.host import mig as charm_mig
from sim import host as sim_host

MODULE = 'charm.openstack.nova_compute_nvidia_vgpu'
LSPCI = '/usr/bin/lspci'


class Published(NamedTuple):
    """What the unit decided, and what nova-compute renders from it."""

    status: Optional[tuple]        # (workload, message) when not publishing
    relation_data: Dict[str, str]  # what the unit sets on nova-vgpu
    nova_conf: str                 # nova-compute's rendering of it
    # type -> devices the charm says Nova gives it beyond the mappings
    # (what the ready status names: one type, before Caracal)
    nova_adds: Dict[str, List[str]] = {}
    # GPUs that mix sizes: the vGPUs the charm makes for Nova to take,
    # (VF, type, placement ID)
    mixed_creates: tuple = ()


# What noble installs with nova-compute: libvirt and QEMU at exactly
# Nova's minimums for live_migratable VFs (10.0.0, 8.2.2).
NOBLE_PACKAGES = {'libvirt-daemon-system': '10.0.0-2ubuntu8',
                  'qemu-system-x86': '1:8.2.2+ds-0ubuntu1'}


def _charm_class(fake_commands, config: Dict[str, Any], nova_version: str,
                 packages: Dict[str, Optional[str]]):
    """The charm instance charms.openstack would pick for this nova;
    packages: the other packages dpkg-query knows (None: not
    installed)."""
    fake_commands.set(
        'dpkg-query', stdout='ii \t{}'.format(nova_version),
        by_last_argument={
            name: {'stdout': 'ii \t{}'.format(version)} if version else
            {'exit': 1, 'stderr': 'dpkg-query: no packages found '
             'matching {}\n'.format(name)}
            for name, version in packages.items()})
    fake_commands.set('config-get', stdout=json.dumps(config))
    fake_commands.set('juju-log')
    for name in ('_releases', '_singleton', '_release_selector_function'):
        setattr(core, name, {} if name == '_releases' else None)
    os_utils.OPENSTACK_RELEASES = _RELEASES
    os_utils.CompareOpenStackReleases._list = _RELEASES
    # A fresh hook: charmhelpers keeps what it read for the process.
    hookenv.cache.clear()
    hookenv._cache_config = None
    sys.modules.pop(MODULE, None)
    module = importlib.import_module(MODULE)
    return module.NovaComputeNvidiaVgpuCharm.singleton


_RELEASES = tuple(os_utils.OPENSTACK_RELEASES)


def publish(tmp_path, fake_commands, pci: List[Dict[str, Any]],
            mappings: str, nova_version: str,
            mdevs: Optional[List[Dict[str, str]]] = None,
            domains: Optional[List[Dict[str, Any]]] = None,
            resource_class: Optional[str] = None,
            packages: Optional[Dict[str, Optional[str]]] = None,
            mig: Optional[mig_host.MigState] = None,
            mig_layout: Optional[str] = None,
            nvidia_smi: Optional[Dict[str, str]] = None) -> Published:
    """Run the charm's nova-vgpu decision on this host, with every SR-IOV
    GPU's VFs enabled and the NVIDIA driver loaded; resource_class: the
    vgpu-resource-class option (unset: the default); packages: libvirt's
    and QEMU's as dpkg reports them (default: noble's); mig: the MIG-
    capable GPUs' state (mig_host.cut), which the VFs' mdev types follow
    and nvidia-smi answers from; mig_layout: the mig-layout option (the
    charm asks nvidia-smi only where one is set); nvidia_smi: what
    nvidia-smi prints, by its last argument (-q, -v: mixed-size mode)."""
    root = str(tmp_path / 'host')
    os.environ['NVIDIA_VGPU_HOST_ROOT'] = root
    os.environ['UNIT_STATE_DB'] = str(tmp_path / 'unit-state.db')
    os.environ['CHARM_DIR'] = os.environ['JUJU_CHARM_DIR'] = str(tmp_path)
    unitdata._KV = None
    sim_host.generate_sysfs(root, pci, {
        'nvidia_loaded': True, 'mdevs': mdevs or [], 'mig': mig or {},
        'vfs': {f['address']: f['sriov']['total_vfs']
                for f in pci if f.get('sriov')}})
    if mig is not None:
        _answer_nvidia_smi(fake_commands, mig_host.hardware(
            pci, mig, mdevs or []))
    if nvidia_smi is not None:
        fake_commands.set('nvidia-smi', exit=2, by_last_argument={
            last: {'stdout': text} for last, text in nvidia_smi.items()})
    sim_host.write_proc_modules(root, ['nvidia'])
    sim_host.write_libvirt_domains(root, domains or [])
    fake_commands.set('lspci', stdout=subprocess.run(
        [LSPCI, '-A', 'linux-sysfs', '-O',
         'sysfs.path={}/sys/bus/pci'.format(root), '-Dmmnn'],
        check=True, capture_output=True, text=True).stdout)
    config = {'vgpu-device-mappings': mappings}
    if resource_class is not None:
        config['vgpu-resource-class'] = resource_class
    if mig_layout is not None:
        config['mig-layout'] = mig_layout
    charm = _charm_class(fake_commands, config, nova_version,
                         NOBLE_PACKAGES if packages is None else packages)
    decided = charm.context.plan.nova
    data = {}
    if decided.sections is not None:
        from nvidia_vgpu.nova import nova_config
        data['subordinate_configuration'] = json.dumps(
            nova_config.subordinate_configuration(decided.sections),
            sort_keys=True)
    rendered = render_text(consume(fake_commands, data)) if data else ''
    return Published(decided.problem, data, rendered, decided.nova_adds,
                     decided.mixed_work.create)


# What the charm reads of MIG (nvidia_vgpu/host/mig.py read()): the CSV
# query of the modes, then the profiles and the GIs.
# (vgpu -s -v: where each MIG-backed type goes, on the vendor-specific
# VFIO driver; a driver without those fields prints none.)
MIG_READS = (charm_mig.QUERY[1:], ('mig', '-lgip'), ('mig', '-lgi'),
             ('vgpu', '-s', '-v'))


def _answer_nvidia_smi(fake_commands, host: Dict[str, Any]) -> None:
    """nvidia-smi answers the charm's reads of MIG as the simulator's
    nvidia-smi prints them for this host; anything else is refused as a
    bad argument (it would be a read this tier does not know of, or a
    change, which belongs to the boot units, not to this decision)."""
    answers = {}
    for argv in MIG_READS:
        code, out, err = mig_host.nvidia_smi(host, argv)
        answers[argv[-1]] = {'stdout': out, 'stderr': err, 'exit': code}
    fake_commands.set('nvidia-smi', exit=2,
                      stderr='nova_tests: nvidia-smi not answered here\n',
                      by_last_argument=answers)
