"""vGPU types as the NVIDIA driver describes them, for people and scripts.

The driver's description is one line of key=value pairs, e.g.
"num_heads=4, frl_config=60, framebuffer=8192M, max_resolution=7680x4320,
max_instance=2"; these functions turn what sysfs holds into rows and a
table without touching the host.
"""
from typing import Dict, Iterable, List, Optional, Sequence
from nvidia_vgpu import model

DESCRIPTION_FIELDS = ('framebuffer', 'max_instance', 'num_heads',
                      'max_resolution')


def parse_description(description: str) -> Dict[str, str]:
    """The key=value pairs of a driver description, in their order.

    Unknown keys are kept; text that is not key=value is ignored rather
    than guessed at, since driver versions word this differently.
    """
    fields = {}
    for part in description.replace('\n', ',').split(','):
        key, equals, value = part.strip().partition('=')
        if equals and key.strip():
            fields[key.strip()] = value.strip()
    return fields


def as_record(vgpu_type: model.VgpuType, gpu: str) -> Dict[str, object]:
    """The structured form scripts read (list-vgpu-types 'types')."""
    fields = parse_description(vgpu_type.description)
    record: Dict[str, object] = {
        'type': vgpu_type.type_id, 'address': vgpu_type.address,
        'gpu': gpu, 'name': vgpu_type.name,
        'available_instances': vgpu_type.available_instances}
    for key in DESCRIPTION_FIELDS:
        record[key] = fields.get(key)
    return record


def gpu_records(gpu: str, per_vf: List[List[model.VgpuType]],
                hosted: Sequence[str] = ()) -> List[Dict[str, object]]:
    """One record per type for an SR-IOV GPU, its VFs taken together.

    Operators map the GPU's address (the charm expands it to the VFs), so
    that is what is listed: how many more vGPUs of the type the GPU can
    host, and on how many VFs the type is offered. Every free VF shows
    one free instance until the GPU is full, so their sum is capped by
    the type's max_instance less the vGPUs of it the GPU hosts already
    (hosted: the type of each vGPU on the GPU's VFs).
    """
    merged: Dict[str, Dict[str, object]] = {}
    for vf_types in per_vf:
        for found in vf_types:
            record = merged.get(found.type_id)
            if record is None:
                record = as_record(found._replace(address=gpu), gpu)
                record['available_instances'] = 0
                record['vfs'] = 0
                merged[found.type_id] = record
            record['vfs'] += 1
            record['available_instances'] += found.available_instances or 0
    for type_id, record in merged.items():
        most = str(record.get('max_instance') or '')
        if most.isdigit():
            record['available_instances'] = min(
                record['available_instances'],
                max(0, int(most) - list(hosted).count(type_id)))
    return [merged[type_id] for type_id in sorted(merged)]


def table(records: Iterable[Dict[str, object]]) -> str:
    """One line per type: "nvidia-108, 0000:84:00.0, GRID V100-8Q, ..."

    Type and address lead each line, comma-separated, which is the form
    existing tooling (and zaza tests) look for; the profile, resource
    class and flavor property (where the records have them) come last.
    """
    lines: List[str] = []
    for record in records:
        details = ', '.join('{}={}'.format(key, record[key])
                            for key in DESCRIPTION_FIELDS
                            if record.get(key) is not None)
        available = ('?' if record['available_instances'] is None
                     else record['available_instances'])
        if 'vfs' in record:
            available = '{} on {} VFs'.format(available, record['vfs'])
        line = '{}, {}, {}, {}, available={}'.format(
            record['type'], record['address'], record['name'],
            details or 'no description', available)
        if 'resource_class' in record:
            line += ', profile={}, resource_class={}, flavor={}'.format(
                *(record[key] or 'none' for key in (
                    'profile', 'resource_class', 'flavor_property')))
        if record.get('flavor_property_two'):
            line += ', two per guest: {}'.format(
                record['flavor_property_two'])
        lines.append(line)
    return '\n'.join(lines)


def max_instance(description: str) -> Optional[int]:
    """How many vGPUs of a type one GPU can host, per its description."""
    value = parse_description(description).get('max_instance', '')
    return int(value) if value.isdigit() else None
