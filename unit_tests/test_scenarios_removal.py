"""Removing the unit (scenarios/removal/): nothing of the charm that acts
on the host stays, and a GPU it put in MIG mode goes back to normal
mode where no guest uses it."""
from simulation import scenario

REMOVAL = 'removal/a100-mig-back-to-normal.yaml'
GPU = '00000000:41:00.0'


def step(output, name):
    found, = [s for s in output['steps'] if s['step'] == name]
    return found


def test_no_unit_plugin_or_check_of_the_charm_stays():
    output = scenario(REMOVAL)
    # Installed while the unit lived ...
    installed = [argv for s in output['steps'][:8] for argv in s['commands']]
    assert ['systemctl', 'enable', 'nvidia-vgpu-mig-mode.service'] in \
        installed
    assert ['systemctl', 'reload', 'nagios-nrpe-server'] in installed
    # ... and gone once it is.
    left = [path for path in output['files']
            if path.startswith(('/etc/systemd/system/', '/etc/nagios/',
                                '/usr/local/lib/nagios/'))]
    assert left == []
    for unit in ('nvidia-vgpu-sriov', 'nvidia-vgpu-restore-mdevs',
                 'nvidia-vgpu-mig-mode', 'nvidia-vgpu-mig-instances'):
        assert output['host']['services'][unit]['enabled'] is False


def test_the_gpu_it_cut_goes_back_to_normal_mode():
    output = scenario(REMOVAL)
    stop = step(output, 'stop')
    destroy = ['nvidia-smi', 'mig', '-i', GPU, '-dgi', '-gi', '1,2,3,4,5']
    normal = ['nvidia-smi', '-i', GPU, '-mig', '0']
    assert destroy in stop['commands'] and normal in stop['commands']
    assert stop['commands'].index(destroy) < stop['commands'].index(normal)
    assert output['host']['mig']['0000:41:00.0']['gpu_instances'] == []
    assert stop['exit_code'] == 0 and step(output, 'remove')['exit_code'] == 0
