"""PCI functions as lspci reports them, and which of them are NVIDIA GPUs.

The charm reads `lspci -Dmmnn`: machine-readable, with numeric ids next to
the names from lspci's database, so decisions rest on the ids (never on
localised or outdated names) and the names are kept only for messages.
"""
import re
import subprocess
from typing import Collection, Iterable, List, Optional
from nvidia_vgpu import model
from nvidia_vgpu.names import PCI_ADDRESS

LSPCI_COMMAND = ('lspci', '-Dmmnn')

_TOKEN = re.compile(r'"(?P<quoted>[^"]*)"|(?P<bare>\S+)')
_NAMED_ID = re.compile(r'(?:(?P<name>.*?) ?)?\[(?P<id>[0-9a-fA-F]{4})\]')
_BARE_ID = re.compile(r'[0-9a-fA-F]{4}')


def _split_id(field: str) -> tuple:
    """("GV100GL [Tesla V100 PCIe 16GB]", "1db4") from a -nn field; a -n
    field has only the id, and a missing subsystem is empty."""
    if _BARE_ID.fullmatch(field):
        return '', field.lower()
    match = _NAMED_ID.fullmatch(field)
    if match:
        return (match.group('name') or ''), match.group('id').lower()
    return field, ''


def parse_lspci(text: str) -> List[model.PciFunction]:
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
        if (not address or not PCI_ADDRESS.fullmatch(address)
                or len(quoted) < 3):
            continue
        class_name, class_id = _split_id(quoted[0])
        vendor_name, vendor_id = _split_id(quoted[1])
        device_name, device_id = _split_id(quoted[2])
        subsystem = quoted[3:5] + ['', ''][len(quoted[3:5]):]
        revision = next((option[2:] for option in options
                         if option.startswith('-r')), '')
        functions.append(model.PciFunction(
            address=address, class_id=class_id, vendor_id=vendor_id,
            device_id=device_id,
            subsystem_vendor_id=_split_id(subsystem[0])[1],
            subsystem_device_id=_split_id(subsystem[1])[1],
            revision=revision, class_name=class_name,
            vendor_name=vendor_name, device_name=device_name))
    return functions


def nvidia_gpus(functions: Iterable[model.PciFunction],
                virtual_functions: Collection[str] = ()
                ) -> List[model.PciFunction]:
    """The NVIDIA physical GPUs among these functions.

    SR-IOV virtual functions of a GPU look exactly like GPUs to lspci;
    the caller names them (sysfs knows) and they are left out.
    """
    return [function for function in functions
            if function.is_nvidia_gpu and
            function.address not in virtual_functions]


def list_functions(command: Optional[List[str]] = None
                   ) -> List[model.PciFunction]:
    """Every PCI function on this host, from lspci."""
    output = subprocess.run(command or list(LSPCI_COMMAND), check=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True).stdout
    return parse_lspci(output)
