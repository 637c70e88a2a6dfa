"""The names every room shares, each with one grammar, said once here.

- a PCI address, domain:bus:device.function (0000:84:00.0);
- a GPU selector, an NVIDIA vendor:device id that may be narrowed by the
  subsystem's (10de:1db4, 10de:1db4:10de:1214);
- a vGPU type id, the driver's nvidia-<N> (nvidia-108): built from the
  number sysfs and NVIDIA's vendor-specific VFIO driver use, the number
  read back, a string tested;
- a vGPU profile name, NVIDIA's (V100-8Q, A100D-1-10C), and the last
  word of the driver's name of a type ("GRID V100-8Q") that is one;
- a MIG-backed profile name, and the GPU instance profile it needs.

Why one home: the options are checked with these grammars before
anything reaches nova.conf or nvidia-smi's command line, and what the
host reports is read with the same ones, so two copies that drifted
apart would let a name through one door that the other refuses. Like
model.py it imports nothing of the charm, and only the standard
library: host/ and the boot programs the host's own python3 runs (the
restore and MIG units, without the charm's venv) may import it too.

Whole-string grammars: use them with fullmatch() only (Python's '$'
also matches before a final newline).
"""
import re
from typing import Optional, Tuple

PCI_ADDRESS = re.compile(
    r'[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[01][0-9a-fA-F]\.[0-7]', re.ASCII)
# A GPU model instead of an address: vendor:device, optionally narrowed by
# subsystem vendor:device, e.g. 10de:1db4 or 10de:1db4:10de:1214.
SELECTOR = re.compile(r'10de:[0-9a-f]{4}(?::[0-9a-f]{4}:[0-9a-f]{4})?',
                      re.ASCII)
# What looks like a selector, of any vendor or length: told apart from a
# PCI address so that a wrong one is named as a selector in messages.
ANY_SELECTOR = re.compile(r'[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){1,3}',
                          re.ASCII)

# A GPU as the kernel's NVIDIA messages name it, domain:bus:device
# without the function: "NVRM: Xid (PCI:0000:84:00): 79, ..."
PCI_BUS_DEVICE = r'[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}'
# nvidia-smi's and NVML's bus id: an 8-digit domain, 00000000:84:00.0
BUS_ID = re.compile(r'(?:[0-9a-fA-F]{4})?(?P<address>' +
                    PCI_ADDRESS.pattern + ')', re.ASCII)

TYPE_ID = re.compile(r'nvidia-[1-9][0-9]{0,4}', re.ASCII)
# A GPU instance profile <n>g.<m>gb: n compute slices of 7, m GB of
# memory. Variants: +me (with a media engine), -me (without), +me.all
# (all media engines), +gfx (graphics, Blackwell).
GI_PROFILE = re.compile(
    r'(?P<slices>[1-7])g\.(?:[1-9][0-9]{0,2})gb'
    r'(?:\+me|-me|\+me\.all|\+gfx)?', re.ASCII)
# An mdev's UUID as sysfs, libvirt and the charm's records write it.
MDEV_UUID = re.compile(
    r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}',
    re.ASCII)
_TYPE_ID_PREFIX = 'nvidia-'

# NVIDIA's vGPU profile name, as its driver prints it after "GRID " or
# "NVIDIA ". The rules are NVIDIA's own grammar of type names
# (vgpu-device-manager, pkg/types/vgpu_type.go), bounded and no looser
# than the names published for vGPU 17 to 20 need (the tests hold them:
# unit_tests/data/nvidia_vgpu_profile_names.json):
# - the board: up to 16 capitals and digits, at least one capital; it may
#   begin with a digit (V100, A100D, GH200L, DC, 6000D);
# - time-sliced: the board, up to two words of it (RTX6000-Ada), '-', the
#   frame buffer in GB (0 is 512 MB: M60-0Q), the series (A, B, C or Q)
#   or B4, a variant of some B-series types (T4-2B4);
# - MIG-backed: the board, '-', the GPU instance's slices (1-7), '-', the
#   frame buffer in GB (A100D-1-10C, 6000D-2-84Q), the series, and at most
#   one MIG attribute: media extensions ME, NOME or MEALL, or graphics GFX
#   (A100-1-5CME, DC-1-24CGFX).
_BOARD = r'(?=[0-9]*[A-Z])[A-Z0-9]{1,16}'
_BOARD_WORDS = r'(?:-[A-Z][A-Za-z]{0,15}){0,2}'
_FRAME_BUFFER_GB = r'0|[1-9][0-9]{0,3}'
_SERIES = r'(?:[ACQ]|B4?)'
_TIME_SLICED = '{}-(?:{}){}'.format(_BOARD_WORDS, _FRAME_BUFFER_GB, _SERIES)
_MIG_BACKED = (r'-(?P<slices>[1-7])-(?P<gb>[1-9][0-9]{0,3})[ABCQ]'
               r'(?P<attribute>ME|NOME|MEALL|GFX)?')
PROFILE = re.compile(
    '{}(?:{}|{})'.format(_BOARD, _TIME_SLICED, _MIG_BACKED), re.ASCII)
MIG_BACKED = re.compile('(?P<board>{}){}'.format(_BOARD, _MIG_BACKED),
                        re.ASCII)
TIME_SLICED = re.compile('{}{}-(?P<gb>{}){}'.format(
    _BOARD, _BOARD_WORDS, _FRAME_BUFFER_GB, _SERIES), re.ASCII)
# A MIG-backed name's attribute -> the GPU instance profile's variant:
# <slices>g.<GB>gb with +me, -me, +me.all or +gfx.
GI_VARIANTS = {None: '', 'ME': '+me', 'NOME': '-me', 'MEALL': '+me.all',
               'GFX': '+gfx'}
# Boards whose MIG-backed types all run on GPU instances of one variant,
# though their names (before vGPU 20's ...GFX twins) do not say so: the
# RTX PRO 6000 Blackwell's DC-1-24Q takes a 1g.24gb+gfx instance
# (NVIDIA's vgpu-device-manager, pkg/vgpu/config.go; docs/facts/
# blackwell-mig.md).
BOARD_GI_VARIANT = {'DC': '+gfx'}


def type_id(number: int) -> str:
    """The type id of the driver's type number: 108 -> 'nvidia-108'
    (sysfs's creatable_vgpu_types and current_vgpu_type give numbers)."""
    return '{}{}'.format(_TYPE_ID_PREFIX, number)


def type_number(vgpu_type: str) -> Optional[int]:
    """The number a type id ends in: 'nvidia-108' -> 108; None where the
    text after its last '-' is no number (a profile name, V100-8Q)."""
    number = vgpu_type.rsplit('-', 1)[-1]
    return int(number) if number.isdigit() else None


def is_type_id(text: str) -> bool:
    """Whether the whole text is a type id as the driver writes them."""
    return TYPE_ID.fullmatch(text) is not None


def type_order(vgpu_type: str) -> Tuple[int, str]:
    """A sort key: nvidia-9 before nvidia-10, numeric order reading
    naturally; names without a number first, by name."""
    return (type_number(vgpu_type) or 0, vgpu_type)


def is_profile(text: str) -> bool:
    """Whether the whole text is a vGPU profile name (not a type id)."""
    return PROFILE.fullmatch(text) is not None


def profile_of(driver_name: str) -> Optional[str]:
    """The profile name in a type's name as the driver prints it: its last
    word ("GRID V100-8Q", "NVIDIA L40S-2Q", and on Blackwell boards
    "NVIDIA RTX Pro 6000 Blackwell DC-4-96Q"); None if that is no
    profile name."""
    last = driver_name.split(' ')[-1]
    return last if is_profile(last) else None


def frame_buffer_gb(profile: str) -> Optional[int]:
    """A time-sliced profile name's frame buffer in GB (L40S-2Q: 2,
    RTX6000-Ada-4Q: 4, M60-0Q: 0 for 512 MB); None for any other
    name."""
    match = TIME_SLICED.fullmatch(profile)
    return int(match.group('gb')) if match else None


def gi_profile_of(type_name: Optional[str]) -> Optional[str]:
    """The GPU instance profile a MIG-backed vGPU type needs, from its
    profile name or the driver's name of it ("NVIDIA H100XM-1-10C":
    1g.10gb); None for a time-sliced type or no profile name."""
    match = MIG_BACKED.fullmatch(profile_of(type_name or '') or '')
    if not match:
        return None
    variant = GI_VARIANTS[match.group('attribute')] or \
        BOARD_GI_VARIANT.get(match.group('board'), '')
    return '{}g.{}gb{}'.format(match.group('slices'), match.group('gb'),
                               variant)
