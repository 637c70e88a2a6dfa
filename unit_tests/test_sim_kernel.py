"""The simulated kernel meets a DKMS package as a real one would: the
fake apt-get builds its module (and fails without headers), the fake
mokutil answers for DKMS's key, a reboot refuses a module signed with a
key the firmware does not trust (sim/README.md, host.kernel)."""
import contextlib
import io
import os

import pytest

from sim import host
from simulation import simulations

V100 = {'address': '0000:84:00.0', 'vendor': '10de', 'device': '1db4',
        'class': '030200', 'driver': 'nouveau'}
RELEASE = '6.8.0-45-generic'


@pytest.fixture
def simulated(tmp_path):
    with simulations(tmp_path) as make:
        yield lambda **kernel: make({'host': {
            'pci': [V100], 'kernel_modules': ['nouveau'],
            'packages': {'nova-common': '3:25.2.1-0ubuntu2'},
            'kernel': dict(kernel, release=RELEASE)}})


def run(simulation, command):
    """A command as a hook would run it: its exit code and what it
    printed (the simulator's report of the process line left out)."""
    printed = io.StringIO()
    with contextlib.redirect_stderr(printed):
        code = simulation.run_program(['/bin/sh', '-c', command + ' 1>&2'],
                                      bare=True)
    return code, printed.getvalue().split('\n', 1)[1]


def dkms_deb(simulation, **spec):
    return host.build_deb(os.path.join(simulation.host_root, 'tmp'), dict(
        {'package': 'nvidia-vgpu-ubuntu-550', 'version': '550.54.16',
         'dkms_source': True}, **spec))


def packages(simulation):
    return simulation._load()['host']['packages']


def test_a_dkms_package_without_headers_fails_inside_apt(simulated):
    simulation = simulated(headers=False)
    code, said = run(simulation, 'apt-get --assume-yes install ' +
                     dkms_deb(simulation))
    assert code == 100
    assert ('Error! Your kernel headers for kernel 6.8.0-45-generic cannot '
            'be found at /lib/modules/6.8.0-45-generic/build') in said
    assert ('E: Sub-process /usr/bin/dpkg returned an error code (1)'
            in said.splitlines())
    assert 'nvidia-vgpu-ubuntu-550' not in packages(simulation)


def test_installing_the_headers_lets_dkms_build(simulated):
    simulation = simulated(headers=False)
    assert run(simulation, 'apt-get --assume-yes install '
               'linux-headers-' + RELEASE)[0] == 0
    assert os.path.isdir(os.path.join(
        simulation.host_root, 'lib/modules', RELEASE, 'build', 'include'))
    assert run(simulation, 'apt-get --assume-yes install ' +
               dkms_deb(simulation))[0] == 0
    assert packages(simulation)['nvidia-vgpu-ubuntu-550'] == '550.54.16'


def test_a_package_that_builds_nothing_needs_no_headers(simulated):
    simulation = simulated(headers=False)
    assert run(simulation, 'apt-get --assume-yes install ' + dkms_deb(
        simulation, depends='', dkms_source=False))[0] == 0


@pytest.mark.parametrize('mok, answer, code', [
    ('created', 'is not enrolled', 1),
    ('imported', 'is already in the enrollment request', 0),
    ('enrolled', 'is already enrolled', 0),
])
def test_mokutil_answers_for_dkms_key(simulated, mok, answer, code):
    simulation = simulated(secure_boot=True, mok=mok)
    assert run(simulation, 'mokutil --test-key ' + host.MOK_CERTIFICATE) == (
        127, 'mokutil: command not found\n')
    assert run(simulation, 'apt-get --assume-yes install mokutil')[0] == 0
    assert run(simulation, 'mokutil --test-key ' + host.MOK_CERTIFICATE) == (
        code, '{} {}\n'.format(host.MOK_CERTIFICATE, answer))
    assert run(simulation, 'mokutil --sb-state') == (
        0, 'SecureBoot enabled\n')


def test_no_key_file_no_answer(simulated):
    simulation = simulated(secure_boot=True)
    run(simulation, 'apt-get --assume-yes install mokutil')
    assert run(simulation, 'mokutil --test-key ' + host.MOK_CERTIFICATE) == (
        255, 'Failed to open {}\n'.format(host.MOK_CERTIFICATE))


@pytest.mark.parametrize('mok, loads', [
    ('created', False), ('imported', True), ('enrolled', True)])
def test_a_reboot_loads_the_module_only_with_a_trusted_key(
        simulated, mok, loads):
    simulation = simulated(secure_boot=True, mok=mok)
    run(simulation, 'apt-get --assume-yes install ' + dkms_deb(simulation))
    # nouveau is kept out, as the charm does.
    blacklist = os.path.join(simulation.host_root, 'etc/modprobe.d/x.conf')
    with open(blacklist, 'w') as stream:
        stream.write('blacklist nouveau\n')
    with contextlib.redirect_stderr(io.StringIO()):
        simulation.run_step({'reboot': True})
    state = simulation._load()['host']
    assert ('nvidia' in state['modules']) is loads
    assert state['kernel']['mok'] == ('created' if mok == 'created'
                                      else 'enrolled')


def test_a_kernel_step_changes_the_host_and_runs_no_hook(simulated):
    simulation = simulated(headers=False)
    with contextlib.redirect_stderr(io.StringIO()):
        record = simulation.run_step({'kernel': {
            'release': '6.8.0-48-generic', 'headers': True,
            'secure_boot': True}})
    assert record['hooks'] == [] and record['python'] is None
    with open(os.path.join(simulation.host_root,
                           'proc/sys/kernel/osrelease')) as stream:
        assert stream.read() == '6.8.0-48-generic\n'
    assert simulation._load()['host']['kernel']['lockdown'] == 'integrity'


def dkms_state(simulation):
    return simulation._load()['host']['dkms_module']


def boot(simulation):
    """A reboot with nouveau kept out, as the charm keeps it; the
    modules loaded after it."""
    blacklist = os.path.join(simulation.host_root, 'etc/modprobe.d/x.conf')
    with open(blacklist, 'w') as stream:
        stream.write('blacklist nouveau\n')
    with contextlib.redirect_stderr(io.StringIO()):
        simulation.run_step({'reboot': True})
    return simulation._load()['host']['modules']


def module_file(simulation, release):
    return os.path.join(simulation.host_root, 'lib/modules', release,
                        'updates/dkms/nvidia.ko')


def kernel_step(simulation, **changes):
    with contextlib.redirect_stderr(io.StringIO()):
        simulation.run_step({'kernel': changes})


def test_dkms_builds_for_the_running_kernel_only(simulated):
    simulation = simulated()
    assert run(simulation, 'apt-get --assume-yes install ' +
               dkms_deb(simulation))[0] == 0
    assert dkms_state(simulation)['kernels'] == [RELEASE]
    assert os.path.isfile(module_file(simulation, RELEASE))
    assert run(simulation, 'dkms status') == (
        0, 'nvidia/550.54.16, 6.8.0-45-generic, x86_64: installed\n')


def test_a_kernel_booted_without_its_headers_has_no_module(simulated):
    simulation = simulated()
    run(simulation, 'apt-get --assume-yes install ' + dkms_deb(simulation))
    assert 'nvidia' in boot(simulation)
    kernel_step(simulation, release='6.8.0-48-generic', headers=False)
    assert 'nvidia' not in boot(simulation)
    assert not os.path.exists(module_file(simulation, '6.8.0-48-generic'))
    # The previous kernel still has its build: booting it loads the driver.
    kernel_step(simulation, release=RELEASE)
    assert 'nvidia' in boot(simulation)


def test_a_kernel_that_came_with_its_headers_has_the_module(simulated):
    simulation = simulated()
    run(simulation, 'apt-get --assume-yes install ' + dkms_deb(simulation))
    kernel_step(simulation, release='6.8.0-48-generic', headers=True)
    assert dkms_state(simulation)['kernels'] == [RELEASE, '6.8.0-48-generic']
    assert 'nvidia' in boot(simulation)


def test_installing_the_headers_has_dkms_build_for_their_kernel(simulated):
    simulation = simulated()
    run(simulation, 'apt-get --assume-yes install ' + dkms_deb(simulation))
    kernel_step(simulation, release='6.8.0-48-generic', headers=False)
    assert run(simulation, 'apt-get --assume-yes install '
               'linux-headers-6.8.0-48-generic')[0] == 0
    assert os.path.isfile(module_file(simulation, '6.8.0-48-generic'))
    # dkms autoinstall finds nothing left to do.
    assert run(simulation, 'dkms autoinstall -k 6.8.0-48-generic') == (0, '')
    assert 'nvidia' in boot(simulation)


def test_dkms_autoinstall_needs_the_kernels_headers(simulated):
    simulation = simulated()
    run(simulation, 'apt-get --assume-yes install ' + dkms_deb(simulation))
    kernel_step(simulation, release='6.8.0-48-generic', headers=False)
    code, said = run(simulation, 'dkms autoinstall -k 6.8.0-48-generic')
    assert code == 11
    assert said.startswith('Error! Your kernel headers for kernel '
                           '6.8.0-48-generic cannot be found')
    # Headers installed by a packages step (another charm's apt) build.
    with contextlib.redirect_stderr(io.StringIO()):
        simulation.run_step({'packages': {
            'linux-headers-6.8.0-48-generic': '6.8.0-48.48'}})
    assert '6.8.0-48-generic' in dkms_state(simulation)['kernels']


def test_a_new_version_is_built_afresh(simulated):
    simulation = simulated()
    run(simulation, 'apt-get --assume-yes install ' + dkms_deb(simulation))
    kernel_step(simulation, release='6.8.0-48-generic', headers=True)
    run(simulation, 'apt-get --assume-yes install ' + dkms_deb(
        simulation, version='550.90.05'))
    # The old version's builds went with it; the new one is built for
    # the running kernel.
    assert dkms_state(simulation) == {
        'package': 'nvidia-vgpu-ubuntu-550', 'version': '550.90.05',
        'kernels': ['6.8.0-48-generic']}
    assert not os.path.exists(module_file(simulation, RELEASE))


def test_a_package_dkms_does_not_build_loads_on_any_kernel(simulated):
    simulation = simulated()
    run(simulation, 'apt-get --assume-yes install ' + dkms_deb(
        simulation, depends='', dkms_source=False))
    assert dkms_state(simulation) is None
    kernel_step(simulation, release='6.8.0-48-generic', headers=False)
    assert 'nvidia' in boot(simulation)
