"""The relation command the waiting status names, per Juju version."""
import pytest

from nvidia_vgpu import juju_commands

ENDPOINTS = ('nova-compute-nvidia-vgpu:nova-vgpu', 'nova-compute:nova-vgpu')


@pytest.mark.parametrize('juju_version, verb', [
    ('2.9.49', 'relate'),
    ('2.8.13', 'relate'),
    ('3.1.8', 'integrate'),
    ('3.6-beta2', 'integrate'),
    ('4.0.0', 'integrate'),
    (None, 'integrate'),      # not told: today's form
    ('', 'integrate'),
    ('garbage', 'integrate'),
])
def test_the_command_is_the_running_juju_s(juju_version, verb):
    assert juju_commands.relate_command(juju_version, *ENDPOINTS) == (
        'juju {} nova-compute-nvidia-vgpu:nova-vgpu '
        'nova-compute:nova-vgpu'.format(verb))
