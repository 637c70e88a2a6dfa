"""mig-layout: parse and validate what the operator wrote.

The value says which GPU instances (GIs) each MIG-capable GPU is cut
into, in mig-parted's form: a GPU (a full PCI address, or a selector
such as 10de:2330 as in vgpu-device-mappings) maps to {GI profile:
count}, e.g. {'10de:2330': {'1g.10gb': 4, '3g.40gb': 1}}. Profiles and
counts end up on nvidia-smi's command line at every boot, so each is
checked whole against a fixed grammar (option_text reads the value).

Checked here, without the GPU: the grammar, counts of 1 to 7, and that
a GPU's GIs take at most its 7 compute slices. Checked against the
GPU's own profiles (nvidia-smi mig -lgip, by name: their ids differ by
board) and, where it lists them, their placements in its memory slices
(mig -lgipp) once the driver runs: fit().
"""
import re
from typing import Dict, List, Mapping, Optional, Sequence

import yaml

from nvidia_vgpu import model, names, option_text
from nvidia_vgpu.mig import instances as gpu_instances

OPTION = 'mig-layout'
EXAMPLE = "{'10de:2330': {'1g.10gb': 4, '3g.40gb': 1}}"
# A MIG GPU has 7 compute slices; a GI profile <n>g.<m>gb takes n of
# them (names.GI_PROFILE).
SLICES = 7
COUNT = re.compile(r'[1-7]', re.ASCII)

Layout = Dict[str, Dict[str, int]]


class LayoutError(ValueError):
    """The option cannot be used; the message says why and what to do."""

    def __init__(self, problem: str) -> None:
        super().__init__('Invalid {}: {}'.format(OPTION, problem))


def slices(profile: str) -> int:
    """Compute slices a GI of this profile takes."""
    return int(profile.split('g.', 1)[0])


def parse(text: Optional[str]) -> Layout:
    """The validated layout, GPUs and profiles in a canonical order.
    Empty text means no layout. Raises LayoutError naming the offending
    key or value and how to fix it."""
    # A mapping of lists (of devices), or of mappings (of profiles).
    root = option_text.compose(text, EXAMPLE, LayoutError, depth=2)
    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode):
        raise LayoutError('expected a mapping of GPU to GPU instance '
                          'profiles and counts, e.g. ' + EXAMPLE)
    budget = option_text.Budget(LayoutError)
    result: Layout = {}
    for key_node, value_node in root.value:
        budget.spend()
        gpu = _gpu(option_text.scalar(key_node, 'a GPU', LayoutError))
        if gpu in result:
            raise LayoutError('{} is given twice; give all its GPU '
                              'instances once'.format(gpu))
        result[gpu] = _instances(gpu, value_node, budget)
    return dict(sorted(result.items()))


def _gpu(written: str) -> str:
    option_text.printable_ascii(
        written, 'the GPU {}'.format(option_text.shown(written)),
        'GPUs and GPU instance profiles', LayoutError)
    gpu = written.lower()
    if not (names.PCI_ADDRESS.fullmatch(gpu)
            or names.SELECTOR.fullmatch(gpu)):
        raise LayoutError(
            '{} is not a full PCI address domain:bus:device.function, e.g. '
            '0000:41:00.0, nor a GPU selector such as 10de:2330'.format(
                option_text.shown(written)))
    return gpu


def _instances(gpu: str, node: yaml.Node,
               budget: option_text.Budget) -> Dict[str, int]:
    if not isinstance(node, yaml.MappingNode) or not node.value:
        raise LayoutError(
            'the value of {} must map GPU instance profiles to counts, '
            "e.g. {{'1g.10gb': 4, '3g.40gb': 1}}".format(gpu))
    instances: Dict[str, int] = {}
    for profile_node, count_node in node.value:
        budget.spend()
        profile = option_text.scalar(profile_node, 'each GPU instance '
                                     'profile of ' + gpu, LayoutError)
        option_text.printable_ascii(
            profile, 'the GPU instance profile {} of {}'.format(
                option_text.shown(profile), gpu),
            'GPUs and GPU instance profiles', LayoutError)
        if not names.GI_PROFILE.fullmatch(profile):
            raise LayoutError(
                '{} of {} is not a GPU instance profile such as 1g.10gb, '
                '3g.40gb or 1g.10gb+me (nvidia-smi mig -lgip lists the '
                'GPU\'s)'.format(option_text.shown(profile), gpu))
        if profile in instances:
            raise LayoutError('{} is given twice under {}'.format(
                profile, gpu))
        count = option_text.scalar(count_node, 'the count of {} on {}'
                                   .format(profile, gpu), LayoutError)
        if not COUNT.fullmatch(count):
            raise LayoutError(
                'the count of {} on {} is {}; it must be a number from 1 '
                'to {}'.format(profile, gpu, option_text.shown(count),
                               SLICES))
        instances[profile] = int(count)
    taken = sum(slices(profile) * count
                for profile, count in instances.items())
    if taken > SLICES:
        raise LayoutError(
            'the GPU instances of {} take {} compute slices; a GPU has {}'
            .format(gpu, taken, SLICES))
    return dict(sorted(instances.items(),
                       key=lambda item: (-slices(item[0]), item[0])))


def fit(gpu: str, wanted: Mapping[str, int],
        offered: Sequence[model.GiProfile]) -> Optional[str]:
    """Why these GIs cannot be made on this GPU, naming what fits; None
    when each profile is one the GPU has, in a count it can hold, and,
    where the GPU lists placements, all of them can be placed at once
    (the charm then makes each at its own start). Checked on the GPU
    emptied, before anything on it is destroyed."""
    by_name = {profile.name: profile for profile in offered}
    for name, count in wanted.items():
        profile = by_name.get(name)
        if profile is None:
            return ('GPU {} has no GPU instance profile {}; it has {}'
                    .format(gpu, name, _listed(offered)))
        if count > profile.total:
            return ('GPU {} holds at most {} GPU instance{} of {}, not {}'
                    .format(gpu, profile.total,
                            '' if profile.total == 1 else 's', name, count))
    every = [name for name, count in wanted.items() for _ in range(count)]
    if (not gpu_instances.placeable(offered, every) or
            gpu_instances.place(every, offered) is not None):
        return None
    return ('GPU {} cannot hold {}: they overlap in its memory slices '
            'at every placement it lists (nvidia-smi mig -lgipp); of these '
            'it holds {}'.format(gpu, shown(wanted), ' or '.join(
                shown(combination) for combination in
                gpu_instances.largest_that_fit(wanted, offered)[:3])))


def shown(instances: Mapping[str, int]) -> str:
    """GIs in the option's own form, largest first: {'3g.40gb': 1}."""
    return '{{{}}}'.format(', '.join(
        "'{}': {}".format(name, count) for name, count in sorted(
            instances.items(), key=lambda item: (-slices(item[0]),
                                                 item[0]))))


def _listed(offered: Sequence[model.GiProfile]) -> str:
    names: List[str] = ['{} (up to {})'.format(profile.name, profile.total)
                        for profile in offered]
    return ', '.join(names) if names else 'none'
