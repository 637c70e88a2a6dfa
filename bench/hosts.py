"""Compute hosts to benchmark on, as simulator scenarios (data only).

A large GPU server today carries SR-IOV GPUs: each physical GPU enables
up to 32 virtual functions at boot, and each VF offers every vGPU type of
the board (dozens). These builders make such hosts, and the rest of the
server's PCI devices, in the simulator's scenario format.
"""
from typing import Any, Dict, List

SERIES = 'noble'
NOVA_COMMON = '3:29.2.0-0ubuntu1'          # 2024.1 (Caracal)
DRIVER = {'package': 'nvidia-vgpu-ubuntu-550', 'version': '550.54.16'}
# An NVIDIA L40S-like board: 48 GB, 32 VFs, A/B/Q/C series types.
GPU_DEVICE = '26b9'
GPU_SUBSYSTEM = '1851'
FIRST_TYPE_ID = 1150
FRAMEBUFFERS_GB = (1, 2, 3, 4, 6, 8, 12, 16, 24, 48)
SERIES_LETTERS = ('A', 'B', 'Q', 'C')
# The server's other PCI functions lspci reports: host bridge, the BMC's
# VGA, a dual-port NIC, NVMe drives.
OTHER_FUNCTIONS = (
    {'address': '0000:00:00.0', 'vendor': '8086', 'device': '09a2',
     'class': '060000'},
    {'address': '0000:03:00.0', 'vendor': '1a03', 'device': '2000',
     'class': '030000', 'revision': '52'},
    {'address': '0000:17:00.0', 'vendor': '15b3', 'device': '101d',
     'class': '020000'},
    {'address': '0000:17:00.1', 'vendor': '15b3', 'device': '101d',
     'class': '020000'},
    {'address': '0000:60:00.0', 'vendor': '144d', 'device': 'a80a',
     'class': '010802'},
    {'address': '0000:61:00.0', 'vendor': '144d', 'device': 'a80a',
     'class': '010802'},
)


def gpu_addresses(count: int) -> List[str]:
    """PCI addresses of `count` GPUs, one per root port as servers have."""
    return ['0000:{:02x}:00.0'.format(0x10 + index * 0x0c)
            for index in range(count)]


def vgpu_types(count: int) -> Dict[str, Dict[str, Any]]:
    """`count` mdev types as the driver lists them on one VF."""
    types = {}
    for index in range(count):
        framebuffer = FRAMEBUFFERS_GB[index % len(FRAMEBUFFERS_GB)]
        letter = SERIES_LETTERS[index // len(FRAMEBUFFERS_GB) %
                                len(SERIES_LETTERS)]
        types['nvidia-{}'.format(FIRST_TYPE_ID + index)] = {
            'name': 'NVIDIA L40S-{}{}'.format(framebuffer, letter),
            'description': 'num_heads=4, frl_config=60, framebuffer={}M, '
                           'max_resolution=7680x4320, max_instance={}'
                           .format(framebuffer * 1024, 48 // framebuffer),
            'available_instances': 1,
        }
    return types


def type_to_map() -> str:
    """The vGPU type every benchmark host maps its GPUs to."""
    return 'nvidia-{}'.format(FIRST_TYPE_ID + 5)


# What a monitored host is related to besides nova-compute: the nrpe
# subordinate (with the host name it gives) and a COS agent.
MONITORING_RELATIONS = {
    'nrpe-external-master': [{'remote_unit': 'nrpe/0', 'data': {
        'nagios_hostname': 'juju-compute-0'}}],
    'cos-agent': [{'remote_unit': 'opentelemetry-collector/0', 'data': {
        'private-address': '10.5.0.17'}}],
}


def gpu_host(gpus: int, vfs: int = 32, types: int = 40,
             sysfs_noise: int = 0, monitored: bool = False
             ) -> Dict[str, Any]:
    """A noble/Caracal compute host with `gpus` SR-IOV GPUs, the vGPU host
    software attached, the charm related to nova-compute, and the
    operator's mapping of one type onto every GPU. A host without GPUs
    gets the same application-wide mapping (addresses it does not have),
    as every GPU-less host of a mixed cloud does. monitored: related to
    nrpe and a COS agent too, as a production host is."""
    addresses = gpu_addresses(gpus) or gpu_addresses(1)
    per_vf = vgpu_types(types)
    functions = [dict(function) for function in OTHER_FUNCTIONS]
    for address in gpu_addresses(gpus):
        functions.append({
            'address': address, 'vendor': '10de', 'device': GPU_DEVICE,
            'class': '030200', 'subsystem_vendor': '10de',
            'subsystem_device': GPU_SUBSYSTEM, 'driver': 'nouveau',
            'sriov': {'total_vfs': vfs, 'vf_mdev_types': per_vf}})
    mapping = '{{{!r}: [{}]}}'.format(
        type_to_map(), ', '.join(repr(address) for address in addresses))
    return {
        'name': '{} GPUs x {} VFs x {} types{}'.format(
            gpus, vfs, types, ', monitored' if monitored else ''),
        'host': {'series': SERIES,
                 'packages': {'nova-common': NOVA_COMMON},
                 'kernel_modules': ['nouveau'],
                 'pci': functions,
                 'sysfs_noise': sysfs_noise},
        'resources': {'nvidia-vgpu-software': {'deb': dict(DRIVER)}},
        'relations': dict({'nova-vgpu': [{'remote_unit': 'nova-compute/0',
                                          'data': {}}]},
                          **(MONITORING_RELATIONS if monitored else {})),
        'config': {'vgpu-device-mappings': mapping},
    }


def vf_addresses(gpu: str, count: int) -> List[str]:
    """A GPU's first `count` VFs, as the simulator numbers them (function
    4 on, sim/host.py)."""
    domain, bus, rest = gpu.split(':')
    slot = int(rest.split('.')[0], 16)
    return ['{}:{}:{:02x}.{}'.format(domain, bus, number // 8, number % 8)
            for number in range(slot * 8 + 4, slot * 8 + 4 + count)]


# The type each benchmark guest runs: 2 GB, so 24 fit an L40S-like GPU.
GUEST_TYPE = 'nvidia-{}'.format(FIRST_TYPE_ID + 1)
GUESTS_PER_GPU = 24


def running_guests(gpus: int, per_gpu: int = GUESTS_PER_GPU):
    """(libvirt domains, mdevs): `per_gpu` running guests on each GPU,
    one vGPU each on a VF of it, with NVML's figures (every seventh
    unlicensed), in the scenario format of a guests step."""
    domains, mdevs = [], []
    for gpu_index, gpu in enumerate(gpu_addresses(gpus)):
        for index, vf in enumerate(vf_addresses(gpu, per_gpu)):
            number = gpu_index * per_gpu + index
            mdev = '{:08x}-0000-4000-8000-{:012x}'.format(gpu_index, index)
            mdevs.append({'uuid': mdev, 'parent': vf, 'type': GUEST_TYPE})
            domains.append({
                'name': 'instance-{:08x}'.format(number),
                'uuid': '{:08x}-1111-4000-8000-{:012x}'.format(
                    gpu_index, index),
                'mdevs': [mdev],
                'vgpu': {'license': 'unlicensed' if number % 7 == 0
                         else 'licensed', 'guest_driver': '550.54.15',
                         'utilization': number % 101,
                         'framebuffer_used_mib': 256 * (index % 8)}})
    return domains, mdevs
