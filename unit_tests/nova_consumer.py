"""What nova-compute makes of this charm's relation data, through the
consumer's own code: charmhelpers' SubordinateConfigContext, configured as
charm-nova-compute configures it, and the template part it renders with.

Shared by the unit tests and the Nova tier (nova_tests/), which feeds the
rendered nova.conf to Nova's own libvirt driver. Both Python's
configparser and oslo.config (the parser Nova itself uses) read it back.
"""
import configparser
import contextlib
import importlib.util
import json
import os
from typing import Dict, List
from unittest import mock

import jinja2

import charmhelpers.core.hookenv as hookenv
from charmhelpers.contrib.openstack import context as os_context
from charmhelpers.contrib.openstack.context import SubordinateConfigContext

from nvidia_vgpu.nova import nova_config

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


def consume(fake_commands, published):
    """The context charm-nova-compute's nova-vgpu context would yield from
    this unit's relation data (published: the settings it set)."""
    hookenv.cache.clear()
    fake_commands.set('relation-ids', stdout=json.dumps(['nova-vgpu:7']))
    fake_commands.set('relation-list', stdout=json.dumps(
        ['nova-compute-nvidia-vgpu/0']))
    fake_commands.set('relation-get', stdout=json.dumps(
        published.get('subordinate_configuration')))
    fake_commands.set('juju-log')
    context = SubordinateConfigContext(
        interface=['nova-vgpu'], service=['nova-compute', 'nova'],
        config_file='/etc/nova/nova.conf')
    return context()


_TEMPLATE = jinja2.Template(SECTION_EPHEMERAL)


def render_text(context):
    """The nova.conf lines the context renders to."""
    return _TEMPLATE.render(**context)


def render(context):
    """The rendered sections, read back as an ini file (strictly: a
    section or key given twice is an error)."""
    parser = configparser.ConfigParser(strict=True, interpolation=None)
    parser.read_string(render_text(context))
    return {section: dict(parser[section]) for section in parser.sections()}


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


def published(sections: nova_config.Sections) -> Dict[str, str]:
    """The relation data the charm sets for these sections, serialised by
    the interface layer's own canonical_json (what relation-set gets)."""
    global _CANONICAL_JSON
    if _CANONICAL_JSON is None:
        _CANONICAL_JSON = _interface_module().canonical_json
    return {'subordinate_configuration': _CANONICAL_JSON(
        nova_config.subordinate_configuration(sections))}


_CANONICAL_JSON = None


def consume_in_process(relation_data: Dict[str, str]) -> dict:
    """consume(), with the hook tools charmhelpers calls answered in this
    process: fast enough for the fuzzer's thousands of values."""
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
    return render_text(consume_in_process(published(sections)))
