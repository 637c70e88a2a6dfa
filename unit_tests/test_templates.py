"""What the charm writes on the host is a file an operator reads under
src/templates/, filled in at run time with string.Template: each one is
rendered whole (no placeholder left, every value in place), and each file
there is one the charm writes."""
import configparser
import os

import pytest

from nvidia_vgpu.driver import mig_boot, restore, sriov
from nvidia_vgpu.host import kernel, templates
from nvidia_vgpu.monitoring import cos_agent, nrpe

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATES = os.path.join(REPO, 'src', 'templates')
LIB = '/var/lib/juju/agents/unit-nova-compute-nvidia-vgpu-0/charm/lib'
PYTHON = '/var/lib/juju/agents/unit-nova-compute-nvidia-vgpu-0/.venv/bin/' \
    'python3'
DIGEST = '0123456789abcdef'
CHECK = nrpe.NrpeCheck('nvidia_vgpu_health', 'NVIDIA vGPU host health',
                       '/usr/local/lib/nagios/plugins/check_nvidia_vgpu x')


def rendered():
    """Every template as the charm fills it in, by its file's name, with
    the values it must then hold."""
    values = (LIB,)
    found = {unit: (text, values)
             for unit, text in mig_boot.unit_texts(LIB).items()}
    found[restore.UNIT] = (restore.unit_text(LIB), values)
    found[sriov.BOOT_UNIT] = (templates.render(sriov.BOOT_UNIT),
                              ('ExecStart=/usr/lib/nvidia/sriov-manage -e '
                               'ALL\n',))
    found[os.path.basename(kernel.NOUVEAU_BLACKLIST)] = (
        templates.render(os.path.basename(kernel.NOUVEAU_BLACKLIST)),
        ('blacklist nouveau\n',))
    found[cos_agent.UNIT] = (
        cos_agent.unit_text(PYTHON, LIB, 10320, DIGEST),
        (PYTHON, LIB, '--port 10320', '--address 127.0.0.1', DIGEST))
    found[nrpe.COMMAND_TEMPLATE] = (
        nrpe.command_text(CHECK, 'vgpu'),
        ('[check_nvidia_vgpu_health]=' + CHECK.command,
         '# servicegroups: vgpu\n'))
    found[nrpe.SERVICE_TEMPLATE] = (
        nrpe.service_text(CHECK, 'juju-host-3', 'vgpu'),
        ('juju-host-3[nvidia_vgpu_health] NVIDIA vGPU host health',
         'check_nrpe!check_nvidia_vgpu_health', ' vgpu\n'))
    return found


RENDERED = sorted(rendered().items())
UNITS = [(name, text) for name, (text, _) in RENDERED
         if name.endswith('.service')]


def test_every_template_is_a_file_the_charm_writes():
    assert sorted(os.listdir(TEMPLATES)) == [name for name, _ in RENDERED]


@pytest.mark.parametrize('name', sorted(os.listdir(TEMPLATES)))
def test_a_template_is_plain_text_an_operator_reads(name):
    with open(os.path.join(TEMPLATES, name), 'rb') as stream:
        data = stream.read()
    text = data.decode('ascii')
    assert text.endswith('\n') and '\r' not in text and '\t' not in text
    assert templates.path(name) == os.path.join(TEMPLATES, name)


@pytest.mark.parametrize('name,text,values', [
    (name, text, values) for name, (text, values) in RENDERED])
def test_a_template_renders_whole(name, text, values):
    # None of these files has a $ of its own: one left is a placeholder.
    assert '$' not in text
    assert [value for value in values if value not in text] == []


@pytest.mark.parametrize('name,text', UNITS)
def test_a_unit_is_a_whole_systemd_unit(name, text):
    unit = configparser.ConfigParser(interpolation=None)
    unit.optionxform = str
    unit.read_string(text)
    assert unit.sections() == ['Unit', 'Service', 'Install']
    assert unit['Unit']['Description']
    assert unit['Service']['ExecStart'].split()[0].startswith('/')
    assert unit['Install']['WantedBy'] == 'multi-user.target'


def test_the_restore_unit_runs_after_the_vfs_it_types():
    text = restore.unit_text(LIB)
    assert 'After=nvidia-vgpu-mgr.service {}\n'.format(
        sriov.BOOT_UNIT) in text
    assert 'Environment=PYTHONPATH={}\n'.format(LIB) in text


def test_a_missing_value_is_an_error_not_a_half_written_file():
    with pytest.raises(KeyError):
        templates.render(restore.UNIT)


def test_templates_sit_beside_lib_as_in_the_built_charm():
    lib = os.path.join(REPO, 'src', 'lib')
    assert os.path.dirname(lib) == os.path.dirname(templates.TEMPLATES_DIR)
    assert templates.TEMPLATES_DIR == TEMPLATES
