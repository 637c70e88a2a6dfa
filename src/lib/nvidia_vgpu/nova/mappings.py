"""vgpu-device-mappings: parse and validate what the operator wrote.

nova-compute renders these values into nova.conf without escaping, so a
newline, '[', ']' or '=' in a type or an address would let the option
write arbitrary nova.conf. Nothing leaves this module unless every type
and every address matches a fixed grammar (names.py) as a whole string:
Python's '$' also matches before a final newline, so the grammar is
applied with fullmatch, and any character outside printable ASCII is
refused first, by name, before anything else is said about the value.

The value is YAML (JSON is YAML): a mapping of vGPU type to a non-empty
list of full PCI addresses. A type is the driver's id (nvidia-108) or
NVIDIA's profile name (V100-8Q), which each host turns into its own id
(profiles.py). It is read as a YAML node tree, never through
YAML's type resolution: an unquoted 0000:41:00.0 is a base-60 float to a
YAML 1.1 loader, and an operator should not have to know that.
"""
from typing import (Collection, Dict, Iterable, List, Mapping, NamedTuple,
                    Optional, Set, Tuple)

import yaml
from nvidia_vgpu import model, option_text
from nvidia_vgpu.names import (ANY_SELECTOR, PCI_ADDRESS, SELECTOR,
                               is_profile, is_type_id, profile_of,
                               type_order)

OPTION = 'vgpu-device-mappings'
EXAMPLE = "{'nvidia-35': ['0000:84:00.0']}"

Mappings = Dict[str, List[str]]


class MappingError(ValueError):
    """The option cannot be used; the message says why and what to do."""

    def __init__(self, problem: str) -> None:
        super().__init__('Invalid {}: {}'.format(OPTION, problem))


def _shown(text: str) -> str:
    return option_text.shown(text)


def _printable_ascii(value: str, where: str) -> None:
    option_text.printable_ascii(value, where,
                                'vGPU types and PCI addresses', MappingError)


def _scalar(node: yaml.Node, what: str) -> str:
    return option_text.scalar(node, what, MappingError)


def _addresses(vgpu_type: str, node: yaml.Node,
               budget: option_text.Budget
               ) -> List[str]:
    if not isinstance(node, yaml.SequenceNode):
        raise MappingError(
            'the value of {} must be a list of PCI addresses, e.g. '
            "['0000:84:00.0']".format(_shown(vgpu_type)))
    if not node.value:
        raise MappingError(
            '{} has no PCI addresses; list at least one or remove the '
            'type'.format(_shown(vgpu_type)))
    addresses = []
    for item in node.value:
        budget.spend()
        address = _scalar(item, 'each PCI address of {}'.format(
            _shown(vgpu_type)))
        _printable_ascii(address, 'the entry {} under {}'.format(
            _shown(address), _shown(vgpu_type)))
        written, address = address, address.lower()
        if (ANY_SELECTOR.fullmatch(address)
                and not SELECTOR.fullmatch(address)):
            raise MappingError(
                '{} under {} is not a GPU selector: write an NVIDIA '
                'vendor:device id, e.g. 10de:1db4, optionally with the '
                'subsystem, e.g. 10de:1db4:10de:1214'.format(
                    _shown(written), _shown(vgpu_type)))
        if not (PCI_ADDRESS.fullmatch(address)
                or SELECTOR.fullmatch(address)):
            raise MappingError(
                '{} under {} is not a full PCI address '
                'domain:bus:device.function, e.g. 0000:84:00.0, nor a GPU '
                'selector such as 10de:1db4'.format(
                    _shown(written), _shown(vgpu_type)))
        if address not in addresses:
            addresses.append(address)
    return sorted(addresses)


def parse(text: str) -> Mappings:
    """The validated mappings, types and addresses in a canonical order.

    Empty text means no vGPU types. Raises MappingError naming the
    offending key or value and how to fix it.
    """
    # A mapping of lists (of devices), or of mappings (of profiles).
    root = option_text.compose(text, EXAMPLE, MappingError, depth=2)
    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode):
        raise MappingError(
            'expected a mapping of vGPU type to PCI addresses, e.g. '
            + EXAMPLE)
    return _checked_mapping(root)


def _checked_mapping(root: yaml.MappingNode) -> Mappings:
    """Each key a vGPU type, each value its addresses, every string
    checked whole; an address under one type only."""
    budget = option_text.Budget(MappingError)
    result: Mappings = {}
    owner: Dict[str, str] = {}
    for key_node, value_node in root.value:
        budget.spend()
        vgpu_type = _scalar(key_node, 'a vGPU type')
        _printable_ascii(vgpu_type, 'the vGPU type {}'.format(
            _shown(vgpu_type)))
        if not (is_type_id(vgpu_type) or is_profile(vgpu_type)):
            raise MappingError(_not_a_type(vgpu_type))
        if vgpu_type in result:
            raise MappingError('{} is given twice; list all its addresses '
                               'once'.format(_shown(vgpu_type)))
        addresses = _addresses(vgpu_type, value_node, budget)
        for address in addresses:
            if SELECTOR.fullmatch(address):
                continue  # checked against this host's GPUs, in for_host
            if address in owner and not (
                    is_profile(owner[address]) and is_profile(vgpu_type)):
                raise MappingError(
                    '{} is listed under both {} and {}; a GPU offers one '
                    'type (nova-compute refuses to start otherwise); '
                    'MIG-backed types share a GPU in MIG mode by profile '
                    'name, e.g. H100XM-1-10C'.format(
                        address, owner[address], vgpu_type))
            # Several profile names may share an address: one value for
            # hosts with different GPUs there, each takes the one its GPU
            # offers (profiles.py).
            owner.setdefault(address, vgpu_type)
        result[vgpu_type] = addresses
    return dict(sorted(result.items(), key=lambda item: type_order(item[0])))


def _not_a_type(key: str) -> str:
    """Why a key is no vGPU type, with the form meant where it is plain."""
    last = profile_of(key)
    if ' ' in key and last:
        return ('{} is not a vGPU type name: write the profile name without '
                'the driver\'s prefix, e.g. {}'.format(_shown(key), last))
    if is_profile(key.upper()):
        return ('{} is not a vGPU type name: profile names are written in '
                'NVIDIA\'s capitals, e.g. A40-2Q (see the list-vgpu-types '
                'action)'.format(_shown(key)))
    return ('{} is not a vGPU type name; NVIDIA types look like nvidia-35, '
            'or by profile name V100-8Q (see the list-vgpu-types '
            'action)'.format(_shown(key)))


class HostMappings(NamedTuple):
    """The part of the mappings this host can use, and why not the rest."""

    mappings: Mappings
    absent: List[str]      # configured addresses that are no GPU here
    problems: List[str]    # configured but impossible on this host
    waiting: List[str] = []  # SR-IOV GPUs whose VFs are not enabled yet
    # type -> the SR-IOV GPUs it landed on (each gets its own capacity)
    sriov_gpus: Dict[str, List[str]] = {}
    # type -> {selector: GPUs it matched here}; selectors matching none
    selected: Dict[str, Dict[str, List[str]]] = {}
    unmatched: List[str] = []


def for_host(mappings: Mappings, gpus: Iterable[model.HostGpu],
             offered: Optional[Mapping[str, Optional[Collection[str]]]],
             mig_gpus: Collection[str] = ()) -> HostMappings:
    """Keep the addresses that are NVIDIA GPUs (or their VFs) here.

    One application config serves hosts with different GPUs, so an
    address that is not a GPU on this host is left out and reported, not
    refused. On SR-IOV GPUs (Ampere and later) vGPUs live on the virtual
    functions: the GPU's own address stands for all of its enabled VFs.
    Where the driver is loaded (offered is not None), a type the device
    does not offer is a problem: Nova could never create it there.
    Profile names must have been turned into type ids first (profiles.py).
    The VFs of a GPU in MIG mode (mig_gpus) may be given several
    MIG-backed types here: capacity.share_mig_gpus gives each its own.
    """
    account = _HostAccount(gpus, mig_gpus)
    for vgpu_type, entries in mappings.items():
        here: List[str] = []
        for address, through in account.expand(vgpu_type, entries):
            for device in account.place(vgpu_type, address, through):
                if device not in here:
                    here.append(device)
        account.check_offered(vgpu_type, here, offered)
        if here:
            account.kept[vgpu_type] = sorted(here)
    return account.result()


class _HostAccount:
    """What for_host finds, type by type."""

    def __init__(self, gpus: Iterable[model.HostGpu],
                 mig_gpus: Collection[str]) -> None:
        self.by_address = {gpu.address: gpu for gpu in gpus}
        self.mig_gpus = mig_gpus
        self.parent = {vf: gpu for gpu in self.by_address.values()
                       for vf in gpu.virtual_functions}
        self.kept: Mappings = {}
        self.absent: List[str] = []
        self.problems: List[str] = []
        self.waiting: List[str] = []
        self.sriov_gpus: Dict[str, List[str]] = {}
        self.claimed: Dict[str, str] = {}
        self.contested: Set[Tuple[str, str, str]] = set()
        self.selected: Dict[str, Dict[str, List[str]]] = {}
        self.unmatched: List[str] = []

    def expand(self, vgpu_type: str, entries: List[str]
               ) -> List[Tuple[str, str]]:
        """(address, ' (through <selector> matching <address>)' or '')
        for each entry, selectors expanded to the GPUs they match."""
        addresses: List[str] = []
        reason: Dict[str, str] = {}
        for entry in entries:
            if not SELECTOR.fullmatch(entry):
                addresses.append(entry)
                continue
            matched = [g.address for g in self.by_address.values()
                       if g.matches(entry)]
            self.selected.setdefault(vgpu_type, {})[entry] = matched
            if not matched:
                self.unmatched.append(entry)
            for address in matched:
                addresses.append(address)
                reason[address] = entry
        return [(address, ' (through {} matching {})'.format(
            reason[address], address) if address in reason else '')
            for address in addresses]

    def place(self, vgpu_type: str, address: str, through: str
              ) -> List[str]:
        """The devices an address gives the type: itself, or an SR-IOV
        GPU's VFs; none where it is no GPU here or already claimed."""
        gpu = self.by_address.get(address)
        if gpu is not None and gpu.sriov:
            if not gpu.virtual_functions:
                self.waiting.append(address)
            devices = list(gpu.virtual_functions)
            via = through or ' (through {})'.format(address)
        elif gpu is not None or address in self.parent:
            gpu = gpu or self.parent[address]
            devices, via = [address], through
        else:
            self.absent.append(address)
            return []
        if gpu.sriov:
            self.sriov_gpus.setdefault(vgpu_type, [])
            if gpu.address not in self.sriov_gpus[vgpu_type]:
                self.sriov_gpus[vgpu_type].append(gpu.address)
        placed = []
        for device in devices:
            if (device in self.claimed and self.claimed[device] != vgpu_type
                    and gpu.address not in self.mig_gpus):
                self._contested(device, self.claimed[device], vgpu_type,
                                via, gpu)
                continue
            self.claimed[device] = vgpu_type
            placed.append(device)
        return placed

    def _contested(self, device: str, claimed: str, vgpu_type: str,
                   via: str, gpu: model.HostGpu) -> None:
        """A device two types claim: said for the first such device of
        each GPU and pair of types (every VF of a GPU named under both
        would repeat it)."""
        pair = (gpu.address, claimed, vgpu_type)
        if pair in self.contested:
            return
        self.contested.add(pair)
        self.problems.append(
            '{} is claimed by both {} and {}{}; a device offers one '
            'type'.format(device, claimed, vgpu_type, via))

    def check_offered(self, vgpu_type: str, here: List[str],
                      offered: Optional[Mapping[str, Optional[
                          Collection[str]]]]) -> None:
        """A problem for each device that does not offer the type (None
        for a device: what it offers cannot be judged now). A VF on the
        vendor-specific VFIO driver lists a type only while its GPU can
        take one more (a MIG-backed type while a GPU instance of its
        profile is free, a time-sliced one below its maximum per GPU):
        there what the GPU's VFs offer together is judged, and
        capacity.py gives the type only the VFs the GPU can type."""
        if offered is None:
            return
        for device in here:
            offers = self._offers(device, offered)
            if offers is not None and vgpu_type not in offers:
                choices = ', '.join(sorted(offers, key=type_order)) or 'none'
                self.problems.append(
                    '{} is not offered by the GPU at {} (it offers: {}); '
                    'see the list-vgpu-types action'.format(
                        vgpu_type, device, choices))

    def _offers(self, device: str,
                offered: Mapping[str, Optional[Collection[str]]]
                ) -> Optional[Collection[str]]:
        """What a device offers, as check_offered judges it."""
        gpu = self.parent.get(device)
        if gpu is None or not gpu.vendor_vfio:
            return offered.get(device, set())
        together: Set[str] = set()
        for vf in gpu.virtual_functions:
            listed = offered.get(vf, set())
            if listed is None:
                return None
            together.update(listed)
        return together

    def result(self) -> HostMappings:
        return HostMappings(self.kept, sorted(set(self.absent)),
                            self.problems, sorted(set(self.waiting)),
                            self.sriov_gpus, self.selected,
                            sorted(set(self.unmatched)))
