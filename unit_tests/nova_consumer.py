"""What nova-compute makes of this charm's relation data, through the
consumer's own code: charmhelpers' SubordinateConfigContext, configured as
charm-nova-compute configures it, and the template part it renders with.

Shared by the unit tests and the Nova tier (nova_tests/), which feeds the
rendered nova.conf to Nova's own libvirt driver.
"""
import configparser
import json

import jinja2

import charmhelpers.core.hookenv as hookenv
from charmhelpers.contrib.openstack.context import SubordinateConfigContext

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


def render_text(context):
    """The nova.conf lines the context renders to."""
    return jinja2.Template(SECTION_EPHEMERAL).render(**context)


def render(context):
    """The rendered sections, read back as an ini file (strictly: a
    section or key given twice is an error)."""
    parser = configparser.ConfigParser(strict=True, interpolation=None)
    parser.read_string(render_text(context))
    return {section: dict(parser[section]) for section in parser.sections()}
