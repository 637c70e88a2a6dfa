"""Hosts written by hand for the plan and status tables (test_plan.py,
test_status.py): the records one read of a host gives (model.HostSnapshot)
for V100s and T4s with mdev on the GPU, A100s and A40s with mdev on their
SR-IOV VFs, an L40S on NVIDIA's vendor-specific VFIO driver, and guests on
any of them; each release's rules as its charm class gives them; and
nova.conf's sections as nova-compute receives them.

Names, ids and capacities are those of the shipped scenarios (scenarios/),
so that a table row and the scenario it mirrors describe one host.
"""
from typing import Dict, NamedTuple, Optional, Sequence, Tuple

from nvidia_vgpu import model
from nvidia_vgpu.nova import nova_config, releases

# ------------------------------------------------ releases, as Nova's
# release notes give them (test_plan.py checks nova/families.py's table
# against this)

QUEENS = '2:17.0.13-0ubuntu5'
USSURI = '2:21.2.4-0ubuntu2'
VICTORIA_BEFORE_FIX = '3:22.2.0-0ubuntu1~cloud0'
VICTORIA = '2:22.4.0-0ubuntu1~cloud0'
WALLABY = '2:23.2.2-0ubuntu1~cloud0'
YOGA = '3:25.2.1-0ubuntu2'
CARACAL = '3:29.2.0-0ubuntu1'
EPOXY = '3:31.0.0-0ubuntu1~cloud0'

QUEENS_REASON = ('OpenStack Queens to Train use only the first type of '
                 '[devices] enabled_vgpu_types')
USSURI_REASON = ('nova 21 (Ussuri) and 22 before 22.2.1 use only the first '
                 'type (Nova bug fixed in 22.2.1)')


def rules(nova_version: Optional[str]) -> model.NovaRules:
    """The release family's rules for this nova-common (None: not
    installed; the plan waits before it reads them)."""
    if nova_version is None:
        return model.NovaRules(nova_config.EPOXY, None, QUEENS_REASON)
    version = releases.upstream_tuple(nova_version)
    if version < (21,):
        return model.NovaRules(nova_config.QUEENS, 1, QUEENS_REASON)
    if version < (24,):
        return model.NovaRules(nova_config.USSURI,
                               1 if version < (22, 2, 1) else None,
                               USSURI_REASON)
    options = (nova_config.XENA if version < (29,) else
               nova_config.CARACAL if version < (31,) else nova_config.EPOXY)
    return model.NovaRules(options, None, USSURI_REASON)


# ------------------------------------------------------------ GPUs

DRIVER = '550.54.16'


class Board(NamedTuple):
    """One physical GPU as a snapshot holds it."""

    function: model.PciFunction
    gpu: model.HostGpu
    offered: Dict[str, Dict[str, str]]    # device -> {type: driver name}
    descriptions: Dict[str, str] = {}     # SR-IOV: type -> description
    device_ids: Dict[str, str] = {}       # vendor VFIO: VF -> device id


def function(address: str, device: str, subsystem: str,
             name: str) -> model.PciFunction:
    return model.PciFunction(address, '0302', '10de', device, '10de',
                             subsystem, 'a1', '3D controller',
                             'NVIDIA Corporation', name)


def vf_addresses(gpu: str, count: int) -> Tuple[str, ...]:
    """The VFs sriov-manage enables: functions 4 onwards of the GPU's
    bus, eight to a device (0000:41:00.4 ... 0000:41:02.3 for 16)."""
    bus = gpu.rsplit(':', 1)[0]
    return tuple('{}:{:02x}.{}'.format(bus, (4 + i) // 8, (4 + i) % 8)
                 for i in range(count))


V100_TYPES = {'nvidia-105': 'GRID V100-1Q', 'nvidia-108': 'GRID V100-8Q'}
V100_16C = dict(V100_TYPES, **{'nvidia-301': 'GRID V100-16C'})
T4_TYPES = {'nvidia-222': 'GRID T4-1B', 'nvidia-234': 'GRID T4-16C'}
# type -> (driver name, max_instance: vGPUs of it one GPU hosts)
A100_TYPES = {'nvidia-692': ('GRID A100D-4C', 20),
              'nvidia-697': ('GRID A100D-40C', 2),
              'nvidia-698': ('GRID A100D-80C', 1)}
A100_MIG = {'nvidia-692': ('GRID A100D-4C', 20),
            'nvidia-699': ('GRID A100D-1-10C', 7),
            'nvidia-700': ('GRID A100D-2-20C', 3)}
# An H100 in MIG mode: every VF lists its MIG-backed types (time-sliced
# ones are not offered while the mode is on).
H100_MIG = {'nvidia-1130': ('NVIDIA H100XM-1-10C', 7),
            'nvidia-1133': ('NVIDIA H100XM-3-40C', 2)}
A40_TYPES = {'nvidia-557': ('NVIDIA A40-2Q', 24),
             'nvidia-565': ('NVIDIA A40-24Q', 2),
             'nvidia-566': ('NVIDIA A40-48Q', 1)}
L40S_TYPES = {'nvidia-1145': 'NVIDIA L40S-1B',
              'nvidia-1148': 'NVIDIA L40S-2Q',
              'nvidia-1155': 'NVIDIA L40S-48Q'}


def v100(address: str = '0000:84:00.0',
         types: Optional[Dict[str, str]] = None) -> Board:
    """A Tesla V100: mdev on the GPU itself."""
    return Board(
        function(address, '1db4', '1214', 'GV100GL [Tesla V100 PCIe 16GB]'),
        model.HostGpu(address, False, (), False, '10de:1db4:10de:1214'),
        {address: dict(V100_TYPES if types is None else types)})


def t4(address: str) -> Board:
    return Board(function(address, '1eb8', '12a2', 'TU104GL [Tesla T4]'),
                 model.HostGpu(address, False, (), False,
                               '10de:1eb8:10de:12a2'),
                 {address: dict(T4_TYPES)})


def description(max_instance: Optional[int]) -> str:
    text = 'num_heads=1, frl_config=60, max_resolution=4096x2160'
    if max_instance is None:
        return text
    return text + ', max_instance={}'.format(max_instance)


def sriov(fn: model.PciFunction, vf_count: int,
          types: Dict[str, Tuple[str, Optional[int]]],
          vfs_enabled: bool = True) -> Board:
    """An SR-IOV GPU with mdev on its VFs: every VF offers the same
    types, the GPU itself none; capacities in the first VF's
    descriptions."""
    vfs = vf_addresses(fn.address, vf_count) if vfs_enabled else ()
    names = {type_id: name for type_id, (name, _) in types.items()}
    offered = {fn.address: {}}
    offered.update({vf: names for vf in vfs})
    return Board(
        fn, model.HostGpu(fn.address, True, vfs, False, ':'.join(
            (fn.vendor_id, fn.device_id, fn.subsystem_vendor_id,
             fn.subsystem_device_id)), vf_count), offered,
        {type_id: description(most) for type_id, (_, most) in types.items()}
        if vfs else {})


def a100(address: str = '0000:41:00.0', types=None,
         vfs_enabled: bool = True) -> Board:
    return sriov(function(address, '20b5', '1533', 'GA100 [A100 PCIe 80GB]'),
                 16, A100_TYPES if types is None else types, vfs_enabled)


def h100(address: str = '0000:41:00.0', types=None) -> Board:
    return sriov(function(address, '2330', '16c1',
                          'GH100 [H100 SXM5 80GB]'), 16,
                 H100_MIG if types is None else types)


def in_mig_mode(snapshot: model.HostSnapshot, *profiles: str,
                address: str = '0000:41:00.0') -> model.HostSnapshot:
    """The GPU at address in MIG mode, with GPU instances of these
    profiles (as nvidia-smi mig -lgi lists them)."""
    instances = tuple(model.GpuInstance(number, 0, profile, '0:1')
                      for number, profile in enumerate(profiles, 1))
    gpu = model.MigGpu(address, 0, 'Enabled', 'Enabled', (), instances)
    return snapshot._replace(mig=dict(snapshot.mig or {}, **{address: gpu}))


def a40(address: str, types=None) -> Board:
    return sriov(function(address, '2235', '145a', 'GA102GL [A40]'), 32,
                 A40_TYPES if types is None else types)


def l40s(address: str = '0000:41:00.0', vf_count: int = 8,
         vfs_enabled: bool = True) -> Board:
    """An L40S on the vendor-specific VFIO driver: no mdev, each VF's
    creatable_vgpu_types names the types, a VF is given one."""
    fn = function(address, '26b9', '1851', '')   # too new for pci.ids
    vfs = vf_addresses(address, vf_count) if vfs_enabled else ()
    offered = {address: {}}
    offered.update({vf: dict(L40S_TYPES) for vf in vfs})
    return Board(fn, model.HostGpu(address, True, vfs, bool(vfs),
                                   '10de:26b9:10de:1851', vf_count),
                 offered, device_ids={vf: '26b9' for vf in vfs})


# NVIDIA's vGPU 17 User Guide, Appendix A.3.4: the 48 GB placement
# table, Ada Lovelace's 1 GB row (docs/facts/mixed-size.md).
L40S_PLACEMENTS = {
    'nvidia-1147': model.Placements(1, (0, 5, 6, 11, 12, 17, 18, 23, 24, 29,
                                        30, 35, 36, 41, 42, 47)),
    'nvidia-1148': model.Placements(2, (0, 4, 6, 10, 12, 16, 18, 22, 24, 28,
                                        30, 34, 36, 40, 42, 46)),
}
L40S_MDEV_TYPES = {'nvidia-1147': ('NVIDIA L40S-1Q', '1024M', 32),
                   'nvidia-1148': ('NVIDIA L40S-2Q', '2048M', 24)}


def l40s_mdev(mode: Optional[str] = 'Disabled',
              address: str = '0000:41:00.0') -> model.HostSnapshot:
    """An L40S on jammy (its vGPUs mdevs on its 32 VFs), whose driver
    mixes sizes (mode: its mixed-size mode now; None: the driver says
    nothing of it), no vGPU on it; Caracal."""
    vfs = vf_addresses(address, 32)
    snapshot = host(Board(
        function(address, '26b9', '1851', 'AD102GL [L40S]'),
        model.HostGpu(address, True, vfs, False, '10de:26b9:10de:1851', 32),
        dict({address: {}}, **{vf: {type_id: name for type_id, (
            name, _, _) in L40S_MDEV_TYPES.items()} for vf in vfs}),
        {type_id: 'num_heads=4, frl_config=60, framebuffer={}, '
         'max_instance={}'.format(framebuffer, most)
         for type_id, (_, framebuffer, most) in L40S_MDEV_TYPES.items()}),
        nova=CARACAL)
    if mode is None:
        return snapshot
    return snapshot._replace(mixed_size={address: model.MixedSize(
        True, mode, L40S_PLACEMENTS)})


# What noble (24.04) installs with nova-compute: Nova's minimums for
# live_migratable VFs exactly (vfio_migration.MINIMUMS).
NOBLE_LIBVIRT = '10.0.0-2ubuntu8'
NOBLE_QEMU = '1:8.2.2+ds-0ubuntu1'
NOBLE = (NOBLE_LIBVIRT, NOBLE_QEMU)


def host(*boards: Board, nova: Optional[str] = YOGA,
         driver: Optional[str] = DRIVER,
         libvirt_qemu: Tuple[Optional[str], Optional[str]] = NOBLE
         ) -> model.HostSnapshot:
    """A host with these GPUs; the driver's tables only while it runs;
    libvirt's and QEMU's versions, read where a GPU runs the
    vendor-specific VFIO driver (as snapshot.read does)."""
    offered: Dict[str, Dict[str, str]] = {}
    for board in boards:
        offered.update(board.offered)
    if not any(board.gpu.vendor_vfio for board in boards):
        libvirt_qemu = (None, None)
    return model.HostSnapshot(
        tuple(board.function for board in boards),
        tuple(board.gpu for board in boards), driver, nova,
        offered=offered if driver is not None else None,
        type_descriptions={board.gpu.address: board.descriptions
                           for board in boards if board.descriptions},
        vf_device_ids={vf: device_id for board in boards
                       for vf, device_id in board.device_ids.items()},
        libvirt_version=libvirt_qemu[0], qemu_version=libvirt_qemu[1])


def with_mdev_guests(snapshot: model.HostSnapshot,
                     *vgpus: Tuple[str, str, Sequence[str]]
                     ) -> model.HostSnapshot:
    """vGPUs (parent device, type, guests whose definition has it)."""
    mdevs = tuple(model.Mdev('00000000-0000-4000-8000-{:012d}'.format(i),
                             parent, vgpu_type)
                  for i, (parent, vgpu_type, _) in enumerate(vgpus))
    return snapshot._replace(mdevs=mdevs, mdev_users={
        mdev.uuid: list(guests)
        for mdev, (_, _, guests) in zip(mdevs, vgpus) if guests})


def with_vf_guests(snapshot: model.HostSnapshot,
                   *vgpus: Tuple[str, int, Sequence[str]]
                   ) -> model.HostSnapshot:
    """Vendor VFIO: typed VFs (VF, type number, guests that have it)."""
    return snapshot._replace(
        vf_types_in_use={vf: number for vf, number, _ in vgpus},
        pci_users={vf: list(guests) for vf, _, guests in vgpus})


def shut_off(snapshot: model.HostSnapshot,
             *guests: str) -> model.HostSnapshot:
    """These guests are defined but not running (libvirt keeps no live
    state for them); every other guest of the snapshot runs."""
    defined = {name for users in (snapshot.mdev_users, snapshot.pci_users)
               for names in users.values() for name in names}
    return snapshot._replace(running_guests=frozenset(defined - set(guests)))


V100S = host(v100('0000:84:00.0'), v100('0000:85:00.0'))
A100_VFS = vf_addresses('0000:41:00.0', 16)
A40_51 = vf_addresses('0000:51:00.0', 32)
A40_52 = vf_addresses('0000:52:00.0', 32)
H100_VFS = vf_addresses('0000:41:00.0', 16)
L40S_VFS = vf_addresses('0000:41:00.0', 8)
A40S = host(a40('0000:51:00.0'), a40('0000:52:00.0'), nova=CARACAL)
GUEST_A = 'instance-0000002a'
GUEST_B = 'instance-0000002b'

# ---------------------------------------------------- what Nova gets


def mdev(options_prefix: str, *groups: Tuple[str, Sequence[str]],
         classes: Optional[Dict[str, str]] = None,
         type_list: str = 'enabled_mdev_types') -> Dict[str, list]:
    """nova.conf sections for mdev types: (type, devices) in order."""
    sections = {'devices': [[type_list, ', '.join(t for t, _ in groups)]]}
    for vgpu_type, devices in groups:
        group = [['device_addresses', ','.join(devices)]]
        if classes and vgpu_type in classes:
            group.append(['mdev_class', classes[vgpu_type]])
        sections[options_prefix + vgpu_type] = group
    return sections


def xena(*groups, classes=None):
    return mdev('mdev_', *groups, classes=classes)


def ussuri(*groups):
    return mdev('vgpu_', *groups, type_list='enabled_vgpu_types')


def queens(vgpu_type: str) -> Dict[str, list]:
    return {'devices': [['enabled_vgpu_types', vgpu_type]]}


def pci(vfs: Sequence[str], resource_class: str, alias: str,
        product: str = '26b9', live: bool = True) -> Dict[str, list]:
    """[pci] for typed VFs, written as nova-compute receives it; live:
    tagged live_migratable (what a host with noble's libvirt and QEMU
    gets)."""
    tag = '"live_migratable": "yes", ' if live else ''
    entries = [['device_spec', (
        '{{"address": "{}", {}"managed": "no", "product_id": "{}", '
        '"resource_class": "{}", "vendor_id": "10de"}}').format(
            vf, tag, product, resource_class)] for vf in vfs]
    entries.append(['alias', (
        '{{"device_type": "type-VF", {}"name": "{}", "product_id": "{}", '
        '"resource_class": "{}", "vendor_id": "10de"}}').format(
            tag, alias, product, resource_class)])
    entries.append(['report_in_placement', 'True'])
    return {'pci': entries}
