"""The rest of a server's /sys/devices: what a real host has besides GPUs.

A two-socket compute node's /sys/devices holds some 150,000 entries: CPU
threads with their caches, idle states and topology, hundreds of memory
blocks, NICs with a hundred queues each, NVMe drives with per-CPU
hardware queues, USB, PCIe bridges. None of it is the charm's business,
but a tool that walks /sys pays for all of it; this module lays out such
content so that benchmarks measure against a realistic tree.

The layout follows the kernel's (attribute names, `subsystem` and `node`
links) closely enough that a walker sees the same shapes; values are
plausible, not exact. Everything is deterministic.
"""
import os
from typing import List

DEFAULT_ENTRIES = 150000
# The mix of a two-socket server at the default size; smaller or larger
# trees scale it, then PCIe bridge functions fill up to the exact size.
SOCKETS = 2
THREADS = 128
MEMORY_BLOCKS = 512          # 1 TiB in 2 GiB blocks
NIC_PORTS = 4
NIC_QUEUES = 64
NVME_DRIVES = 8
USB_PORTS = 16
LOOP_DEVICES = 8
TTYS = 64

CPU_CACHES = (('1', 'Data', '48K'), ('1', 'Instruction', '32K'),
              ('2', 'Unified', '2048K'), ('3', 'Unified', '61440K'))
IDLE_STATES = ('POLL', 'C1', 'C1E', 'C6')
POWER = ('async', 'autosuspend_delay_ms', 'control', 'runtime_active_kids',
         'runtime_active_time', 'runtime_enabled', 'runtime_status',
         'runtime_suspended_time', 'runtime_usage')
PCI_ATTRIBUTES = (
    'aer_dev_correctable', 'aer_dev_fatal', 'aer_dev_nonfatal',
    'ari_enabled', 'broken_parity_status', 'class', 'config',
    'consistent_dma_mask_bits', 'current_link_speed', 'current_link_width',
    'd3cold_allowed', 'device', 'dma_mask_bits', 'driver_override',
    'enable', 'irq', 'local_cpulist', 'local_cpus', 'max_link_speed',
    'max_link_width', 'modalias', 'msi_bus', 'numa_node', 'power_state',
    'remove', 'rescan', 'reset', 'reset_method', 'resource', 'resource0',
    'revision', 'subsystem_device', 'subsystem_vendor', 'uevent', 'vendor')
NET_ATTRIBUTES = (
    'addr_assign_type', 'addr_len', 'address', 'broadcast', 'carrier',
    'carrier_changes', 'carrier_down_count', 'carrier_up_count',
    'dev_id', 'dev_port', 'dormant', 'duplex', 'flags', 'gro_flush_timeout',
    'ifalias', 'ifindex', 'iflink', 'link_mode', 'mtu', 'name_assign_type',
    'napi_defer_hard_irqs', 'netdev_group', 'operstate', 'phys_port_id',
    'phys_port_name', 'phys_switch_id', 'proto_down', 'speed',
    'testing', 'threaded', 'tx_queue_len', 'type', 'uevent')
NET_STATISTICS = (
    'collisions', 'multicast', 'rx_bytes', 'rx_compressed', 'rx_crc_errors',
    'rx_dropped', 'rx_errors', 'rx_fifo_errors', 'rx_frame_errors',
    'rx_length_errors', 'rx_missed_errors', 'rx_nohandler',
    'rx_over_errors', 'rx_packets', 'tx_aborted_errors', 'tx_bytes',
    'tx_carrier_errors', 'tx_compressed', 'tx_dropped', 'tx_errors',
    'tx_fifo_errors', 'tx_heartbeat_errors', 'tx_packets',
    'tx_window_errors')
BLOCK_QUEUE = (
    'add_random', 'chunk_sectors', 'dax', 'discard_granularity',
    'discard_max_bytes', 'discard_max_hw_bytes', 'discard_zeroes_data',
    'dma_alignment', 'fua', 'hw_sector_size', 'io_poll', 'io_poll_delay',
    'io_timeout', 'iostats', 'logical_block_size', 'max_discard_segments',
    'max_hw_sectors_kb', 'max_integrity_segments', 'max_sectors_kb',
    'max_segment_size', 'max_segments', 'minimum_io_size', 'nomerges',
    'nr_requests', 'nr_zones', 'optimal_io_size', 'physical_block_size',
    'read_ahead_kb', 'rotational', 'rq_affinity', 'scheduler',
    'stable_writes', 'wbt_lat_usec', 'write_cache', 'write_same_max_bytes',
    'write_zeroes_max_bytes', 'zone_append_max_bytes', 'zoned')


class _Tree:
    """Writes entries under a root, counting files, directories, links."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.entries = 0
        self._made = set()

    def directory(self, path: str) -> str:
        full = os.path.join(self.root, path)
        if full not in self._made:
            parent = os.path.dirname(path)
            if parent and os.path.join(self.root, parent) not in self._made:
                self.directory(parent)
            os.makedirs(full, exist_ok=True)
            self._made.add(full)
            self.entries += 1
        return full

    def files(self, directory: str, names, value: str = '0') -> None:
        full = self.directory(directory)
        for name in names:
            with open(os.path.join(full, name), 'w') as stream:
                stream.write(value + '\n')
        self.entries += len(names)

    def link(self, path: str, target: str) -> None:
        full = os.path.join(self.root, path)
        self.directory(os.path.dirname(path))
        os.symlink(target, full)
        self.entries += 1


def _cpus(tree: _Tree, count: int) -> None:
    per_socket = max(1, count // SOCKETS)
    for cpu in range(count):
        base = 'system/cpu/cpu{}'.format(cpu)
        tree.files(base, ('online', 'crash_notes', 'crash_notes_size',
                          'uevent'), '1')
        tree.link(base + '/subsystem', '../../../../bus/cpu')
        tree.link(base + '/node{}'.format(cpu // per_socket % SOCKETS),
                  '../../node/node{}'.format(cpu // per_socket % SOCKETS))
        tree.files(base + '/topology', (
            'cluster_cpus', 'cluster_cpus_list', 'cluster_id', 'core_cpus',
            'core_cpus_list', 'core_id', 'core_siblings',
            'core_siblings_list', 'die_cpus', 'die_cpus_list', 'die_id',
            'package_cpus', 'package_cpus_list', 'physical_package_id',
            'thread_siblings', 'thread_siblings_list'), str(cpu))
        for index, (level, kind, size) in enumerate(CPU_CACHES):
            tree.files('{}/cache/index{}'.format(base, index), (
                'allocation_policy', 'coherency_line_size', 'id', 'level',
                'number_of_sets', 'physical_line_partition',
                'shared_cpu_list', 'shared_cpu_map', 'size', 'type',
                'ways_of_associativity', 'write_policy', 'uevent'),
                '{} {} {}'.format(level, kind, size))
        for index, name in enumerate(IDLE_STATES):
            tree.files('{}/cpuidle/state{}'.format(base, index), (
                'above', 'below', 'default_status', 'desc', 'disable',
                'latency', 'name', 'power', 'rejected', 'residency', 'time',
                'usage'), name)
        tree.files(base + '/power', POWER, 'auto')
        tree.files(base + '/hotplug', ('fail', 'state', 'states', 'target'),
                   '235')
        tree.files(base + '/microcode', ('processor_flags', 'version'),
                   '0x2b000590')
        tree.files(base + '/cpufreq', (
            'affected_cpus', 'base_frequency', 'cpuinfo_max_freq',
            'cpuinfo_min_freq', 'cpuinfo_transition_latency',
            'energy_performance_available_preferences',
            'energy_performance_preference', 'related_cpus',
            'scaling_available_governors', 'scaling_cur_freq',
            'scaling_driver', 'scaling_governor', 'scaling_max_freq',
            'scaling_min_freq', 'scaling_setspeed'), '2100000')


def _memory(tree: _Tree, blocks: int) -> None:
    per_node = max(1, blocks // SOCKETS)
    for block in range(blocks):
        base = 'system/memory/memory{}'.format(block)
        tree.files(base, ('online', 'phys_device', 'phys_index', 'removable',
                          'state', 'uevent', 'valid_zones'), 'online')
        tree.files(base + '/power', POWER, 'auto')
        tree.link(base + '/subsystem', '../../../../bus/memory')
        node = block // per_node % SOCKETS
        tree.link('{}/node{}'.format(base, node),
                  '../../node/node{}'.format(node))
    for node in range(SOCKETS):
        base = 'system/node/node{}'.format(node)
        tree.files(base, ('cpulist', 'cpumap', 'distance', 'meminfo',
                          'numastat', 'vmstat', 'uevent'), '0-63')
        for size in ('hugepages-1048576kB', 'hugepages-2048kB'):
            tree.files('{}/hugepages/{}'.format(base, size), (
                'free_hugepages', 'nr_hugepages', 'surplus_hugepages'), '0')


def _pci_function(tree: _Tree, path: str, node: int) -> None:
    tree.files(path, PCI_ATTRIBUTES, str(node))
    tree.files(path + '/power', POWER, 'on')
    tree.link(path + '/subsystem', '../../../bus/pci')


def _nic(tree: _Tree, port: int, queues: int) -> None:
    address = '0000:{:02x}:00.{}'.format(0x17 + port // 2, port % 2)
    path = 'pci0000:{:02x}/{}'.format(0x16 + port // 2, address)
    _pci_function(tree, path, port // 2 % SOCKETS)
    for vector in range(queues + 2):
        tree.files(path + '/msi_irqs', (str(200 + port * 100 + vector),),
                   'msix')
    net = '{}/net/ens{}f{}np{}'.format(path, port // 2 + 1, port % 2,
                                       port % 2)
    tree.files(net, NET_ATTRIBUTES, '1')
    tree.files(net + '/statistics', NET_STATISTICS, '0')
    tree.files(net + '/power', POWER, 'auto')
    for queue in range(queues):
        tree.files('{}/queues/rx-{}'.format(net, queue),
                   ('rps_cpus', 'rps_flow_cnt'), '0')
        tree.files('{}/queues/tx-{}'.format(net, queue), (
            'traffic_class', 'tx_maxrate', 'tx_timeout', 'xps_cpus',
            'xps_rxqs'), '0')
        tree.files('{}/queues/tx-{}/byte_queue_limits'.format(net, queue), (
            'hold_time', 'inflight', 'limit', 'limit_max', 'limit_min'),
            '0')


def _nvme(tree: _Tree, drive: int, hardware_queues: int) -> None:
    address = '0000:{:02x}:00.0'.format(0x60 + drive)
    path = 'pci0000:{:02x}/0000:{:02x}:01.0/{}'.format(
        0x5f + drive, 0x5f + drive, address)
    _pci_function(tree, path, drive % SOCKETS)
    controller = '{}/nvme/nvme{}'.format(path, drive)
    tree.files(controller, (
        'address', 'cntlid', 'cntrltype', 'dctype', 'firmware_rev',
        'kato', 'model', 'numa_node', 'queue_count', 'serial', 'sqsize',
        'state', 'subsysnqn', 'transport', 'uevent'), 'live')
    namespace = '{}/nvme{}n1'.format(controller, drive)
    tree.files(namespace, (
        'alignment_offset', 'capability', 'dev', 'discard_alignment',
        'eui', 'ext_range', 'hidden', 'inflight', 'nguid', 'nsid', 'range',
        'removable', 'ro', 'size', 'stat', 'uevent', 'wwid'), '0')
    tree.files(namespace + '/queue', BLOCK_QUEUE, '0')
    for queue in range(hardware_queues):
        tree.files('{}/mq/{}'.format(namespace, queue), (
            'cpu_list', 'nr_reserved_tags', 'nr_tags'), str(queue))


def _usb(tree: _Tree, ports: int) -> None:
    path = 'pci0000:00/0000:00:14.0'
    _pci_function(tree, path, 0)
    for port in range(1, ports + 1):
        device = '{}/usb1/1-{}'.format(path, port)
        tree.files(device, (
            'authorized', 'bConfigurationValue', 'bDeviceClass',
            'bMaxPower', 'bNumInterfaces', 'busnum', 'devnum', 'devpath',
            'idProduct', 'idVendor', 'manufacturer', 'product', 'speed',
            'uevent', 'version'), '1')
        tree.files(device + '/power', POWER, 'auto')
        tree.files('{}/1-{}:1.0'.format(device, port), (
            'bAlternateSetting', 'bInterfaceClass', 'bInterfaceNumber',
            'bInterfaceProtocol', 'bInterfaceSubClass', 'bNumEndpoints',
            'modalias', 'uevent'), '0')


def _virtual(tree: _Tree, loops: int, ttys: int) -> None:
    tree.files('virtual/net/lo', NET_ATTRIBUTES, '1')
    tree.files('virtual/net/lo/statistics', NET_STATISTICS, '0')
    for loop in range(loops):
        base = 'virtual/block/loop{}'.format(loop)
        tree.files(base, ('alignment_offset', 'dev', 'range', 'ro', 'size',
                          'stat', 'uevent'), '0')
        tree.files(base + '/queue', BLOCK_QUEUE, '0')
        tree.files(base + '/loop', ('autoclear', 'backing_file', 'dio',
                                    'offset', 'partscan', 'sizelimit'), '0')
    for tty in range(ttys):
        tree.files('virtual/tty/tty{}'.format(tty), ('dev', 'uevent'), '4')
    tree.files('platform/serial8250', ('driver_override', 'modalias',
                                       'uevent'), '')


def populate(sys_root: str, entries: int = DEFAULT_ENTRIES) -> int:
    """Write about `entries` entries (files, directories, links) of
    unrelated server content under sys_root/devices; returns how many.

    The server's mix is scaled to the size asked, then PCIe bridge
    functions (as a real root complex has dozens of) top it up, so the
    result is `entries` or a few dozen more, never fewer.
    """
    tree = _Tree(os.path.join(sys_root, 'devices'))
    scale = entries / DEFAULT_ENTRIES

    def scaled(count: int) -> int:
        return max(1, int(count * scale))

    _cpus(tree, scaled(THREADS))
    _memory(tree, scaled(MEMORY_BLOCKS))
    for port in range(min(NIC_PORTS, scaled(NIC_PORTS))):
        _nic(tree, port, scaled(NIC_QUEUES))
    for drive in range(scaled(NVME_DRIVES)):
        _nvme(tree, drive, scaled(THREADS // 2))
    _usb(tree, scaled(USB_PORTS))
    _virtual(tree, scaled(LOOP_DEVICES), scaled(TTYS))
    bridges: List[str] = []
    while tree.entries < entries:
        number = len(bridges)
        # A second PCI segment, so they never meet the scenario's devices.
        path = 'pci0001:{:02x}/0001:{:02x}:{:02x}.{}'.format(
            number // 256, number // 256, number // 8 % 32, number % 8)
        _pci_function(tree, path, number % SOCKETS)
        bridges.append(path)
    return tree.entries
