"""PCI functions as lspci reports them, and which of them are NVIDIA GPUs.

The charm reads `lspci -Dmmnn`: machine-readable, with numeric ids next to
the names from lspci's database, so decisions rest on the ids (never on
localised or outdated names) and the names are kept only for messages.
"""
import re
import subprocess
from collections import Counter
from typing import Collection, Iterable, List, NamedTuple, Optional

NVIDIA_VENDOR_ID = '10de'
# VGA compatible controller (boards with display outputs enabled) and 3D
# controller (datacenter boards); audio, USB, serial and bridge functions
# (NVSwitch) of the same vendor are not GPUs.
GPU_CLASSES = ('0300', '0302')
LSPCI_COMMAND = ('lspci', '-Dmmnn')

_TOKEN = re.compile(r'"(?P<quoted>[^"]*)"|(?P<bare>\S+)')
_NAMED_ID = re.compile(r'(?:(?P<name>.*?) ?)?\[(?P<id>[0-9a-fA-F]{4})\]')
_BARE_ID = re.compile(r'[0-9a-fA-F]{4}')
_ADDRESS = re.compile(r'[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]')
_MARKETING_NAME = re.compile(r'\[(?P<model>[^\]]+)\]$')


class PciFunction(NamedTuple):
    """One PCI function: ids as lower-case hex, names as lspci knows them."""

    address: str
    class_id: str
    vendor_id: str
    device_id: str
    subsystem_vendor_id: str = ''
    subsystem_device_id: str = ''
    revision: str = ''
    class_name: str = ''
    vendor_name: str = ''
    device_name: str = ''

    @property
    def model(self) -> str:
        """A name an operator recognises, e.g. "Tesla V100 PCIe 16GB".

        lspci's database writes "GV100GL [Tesla V100 PCIe 16GB]": the
        marketing name is the bracketed part. Boards newer than the
        host's database only have ids.
        """
        match = _MARKETING_NAME.search(self.device_name)
        if match:
            return match.group('model')
        if self.device_name and self.device_name != 'Device':
            return self.device_name
        return 'device {}:{}'.format(self.vendor_id, self.device_id)

    @property
    def is_nvidia_gpu(self) -> bool:
        return (self.vendor_id == NVIDIA_VENDOR_ID and
                self.class_id in GPU_CLASSES)


def _split_id(field: str) -> tuple:
    """("GV100GL [Tesla V100 PCIe 16GB]", "1db4") from a -nn field; a -n
    field has only the id, and a missing subsystem is empty."""
    if _BARE_ID.fullmatch(field):
        return '', field.lower()
    match = _NAMED_ID.fullmatch(field)
    if match:
        return (match.group('name') or ''), match.group('id').lower()
    return field, ''


def parse_lspci(text: str) -> List[PciFunction]:
    """Every function in `lspci -Dmm -n` or `-nn` output, in order.

    Lines that are not a function with a full domain:bus:device.function
    address (e.g. output without -D) are skipped rather than guessed at.
    """
    functions = []
    for line in text.splitlines():
        quoted, options = [], []
        address = None
        for match in _TOKEN.finditer(line):
            if match.group('quoted') is not None:
                quoted.append(match.group('quoted'))
            elif address is None:
                address = match.group('bare').lower()
            else:
                options.append(match.group('bare'))
        if not address or not _ADDRESS.fullmatch(address) or len(quoted) < 3:
            continue
        class_name, class_id = _split_id(quoted[0])
        vendor_name, vendor_id = _split_id(quoted[1])
        device_name, device_id = _split_id(quoted[2])
        subsystem = quoted[3:5] + ['', ''][len(quoted[3:5]):]
        revision = next((option[2:] for option in options
                         if option.startswith('-r')), '')
        functions.append(PciFunction(
            address=address, class_id=class_id, vendor_id=vendor_id,
            device_id=device_id,
            subsystem_vendor_id=_split_id(subsystem[0])[1],
            subsystem_device_id=_split_id(subsystem[1])[1],
            revision=revision, class_name=class_name,
            vendor_name=vendor_name, device_name=device_name))
    return functions


def nvidia_gpus(functions: Iterable[PciFunction],
                virtual_functions: Collection[str] = ()) -> List[PciFunction]:
    """The NVIDIA physical GPUs among these functions.

    SR-IOV virtual functions of a GPU look exactly like GPUs to lspci;
    the caller names them (sysfs knows) and they are left out.
    """
    return [function for function in functions
            if function.is_nvidia_gpu and
            function.address not in virtual_functions]


def describe_gpus(gpus: Iterable[PciFunction]) -> str:
    """"2 NVIDIA GPUs (Tesla V100 PCIe 16GB)", for the unit's status."""
    models = Counter(gpu.model for gpu in gpus)
    total = sum(models.values())
    if not total:
        return 'no NVIDIA GPU'
    if len(models) == 1:
        detail = next(iter(models))
    else:
        detail = ', '.join('{} {}'.format(count, model)
                           for model, count in sorted(models.items()))
    return '{} NVIDIA GPU{} ({})'.format(total, '' if total == 1 else 's',
                                         detail)


def list_functions(command: Optional[List[str]] = None) -> List[PciFunction]:
    """Every PCI function on this host, from lspci."""
    output = subprocess.run(command or list(LSPCI_COMMAND), check=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True).stdout
    return parse_lspci(output)
