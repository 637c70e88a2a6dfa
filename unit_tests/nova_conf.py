"""The consumer side of nova-vgpu, built for tests: what nova-compute
would write into nova.conf from what this charm publishes.

charmhelpers' real SubordinateConfigContext reads the relation data (the
hook tools it calls are the boundary, answered in-process here), a
renderer writes its sections the way charm-nova-compute's templates do (a
'[name]' header line, then 'key = value' lines, no escaping), and both
Python's configparser and oslo.config (the parser Nova itself uses) read
the text back.
"""
import configparser
import contextlib
import importlib.util
import os
from typing import Dict, List
from unittest import mock

import jinja2

from charmhelpers.contrib.openstack import context as os_context
from charmhelpers.core import hookenv

from nvidia_vgpu import nova_config

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELATION_ID = 'nova-vgpu:7'
UNIT = 'nova-compute-nvidia-vgpu/0'

# charm-nova-compute's templates/parts/section-ephemeral, as described in
# ../shared/reference/nova-vgpu-config.md section 3: raw, no escaping.
SECTION_EPHEMERAL = (
    '{% for section in sections -%}\n'
    '{% if section != "DEFAULT" -%}\n'
    '[{{ section }}]\n'
    '{% for key, value in sections[section] -%}\n'
    '{{ key }} = {{ value }}\n'
    '{% endfor %}\n'
    '{% endif %}\n'
    '{%- endfor %}\n')
_TEMPLATE = jinja2.Template(SECTION_EPHEMERAL)


def _interface_module():
    """The interface layer, loaded as in a charm (its decorators read the
    charm's metadata.yaml)."""
    path = os.path.join(REPO, 'interfaces', 'nova-vgpu', 'provides.py')
    spec = importlib.util.spec_from_file_location('nova_vgpu_provides',
                                                  path)
    module = importlib.util.module_from_spec(spec)
    with mock.patch.dict(os.environ, {'CHARM_DIR': os.path.join(REPO,
                                                                'src')}):
        spec.loader.exec_module(module)
    hookenv.cache.clear()
    return module


# The interface layer's own serialiser: what relation-set is given.
canonical_json = _interface_module().canonical_json


def published(sections: nova_config.Sections) -> Dict[str, str]:
    """The relation data the charm sets for these sections."""
    return {'subordinate_configuration': canonical_json(
        nova_config.subordinate_configuration(sections))}


def consume(relation_data: Dict[str, str]) -> dict:
    """The context charm-nova-compute's nova-vgpu context would yield."""
    def relation_get(attribute=None, unit=None, rid=None):
        assert (unit, rid) == (UNIT, RELATION_ID)
        return relation_data.get(attribute)

    with contextlib.ExitStack() as stack:
        for name, fake in (
                ('relation_ids', lambda interface: [RELATION_ID]),
                ('related_units', lambda rid: [UNIT]),
                ('relation_get', relation_get),
                ('log', lambda *args, **kwargs: None)):
            stack.enter_context(mock.patch.object(os_context, name, fake))
        return os_context.SubordinateConfigContext(
            interface=['nova-vgpu'], service=['nova-compute', 'nova'],
            config_file='/etc/nova/nova.conf')()


def render(context: dict) -> str:
    """nova.conf's lines for the context's sections."""
    return _TEMPLATE.render(**context)


def read_configparser(text: str) -> Dict[str, Dict[str, str]]:
    """Python's reading: repeated keys keep their last value."""
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str
    parser.read_string(text)
    return {section: dict(parser[section]) for section in parser.sections()}


def read_oslo(text: str) -> Dict[str, Dict[str, List[str]]]:
    """oslo.config's reading, as Nova's own: every value of every key."""
    from oslo_config import cfg, iniparser
    sections: Dict[str, Dict[str, List[str]]] = {}
    parser = cfg.ConfigParser('nova.conf', sections)
    iniparser.BaseParser.parse(parser, text.splitlines(True))
    return {name: {key: list(values) for key, values in keys.items()}
            for name, keys in sections.items()}


def as_meant(sections: nova_config.Sections
             ) -> Dict[str, Dict[str, List[str]]]:
    """The charm's sections as oslo.config would hold them."""
    meant: Dict[str, Dict[str, List[str]]] = {}
    for name, pairs in sections.items():
        for key, value in pairs:
            meant.setdefault(name, {}).setdefault(key, []).append(value)
    return meant


def nova_conf_from(sections: nova_config.Sections) -> str:
    """All the way: publish, consume, render."""
    return render(consume(published(sections)))
