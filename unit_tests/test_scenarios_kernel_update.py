"""A kernel update that came without its headers: the host boots a
kernel DKMS built no NVIDIA module for. The charm installs the headers
and has DKMS build the module at its next install-time hook (the start
after that boot), then asks for the reboot that loads it; where apt has
no headers for that kernel it is blocked naming the kernel, apt's
reason and the fix (scenarios/kernel/update-without-headers*.yaml)."""
from simulation import changing, scenario

APT = ['apt-get', '--assume-yes', '--option=Dpkg::Options::=--force-confold']
NEW = '6.8.0-45-generic'
HEADERS = 'linux-headers-' + NEW
DKMS = ['dkms', 'autoinstall', '-k', NEW]
REBOOT = ('Reboot required: installed NVIDIA software nvidia-vgpu-ubuntu-550 '
          '550.54.16, the NVIDIA driver is not loaded yet')
# The software is in and the driver runs: on this host, whose application
# maps no vGPU type yet, what is left is the mapping (the GPU host gives
# Nova nothing, and says so: docs/index.md#this-gpu-host-gives-nova-no-vgpu).
DONE = ('blocked', 'This GPU host gives Nova no vGPU: vgpu-device-mappings '
        'names no type for them. Its GPUs: 0000:84:00.0 (10de:1db4, Tesla '
        'V100 PCIe 16GB); map them in vgpu-device-mappings (list-vgpu-types '
        'shows the types each offers)')
UNBUILT = (
    'NVIDIA kernel module of nvidia-vgpu-ubuntu-550 550.54.16 not built for '
    'the running kernel 6.8.0-45-generic, so the driver cannot load: '
    'apt-get install linux-headers-6.8.0-45-generic failed (E: Unable to '
    'locate package linux-headers-6.8.0-45-generic): add an apt source '
    'that has it and install it (DKMS builds the module as it installs; '
    'dkms autoinstall -k 6.8.0-45-generic by hand); then reboot, or boot a '
    'kernel it was built for (retried at the next config-changed, '
    'upgrade-charm or start)')


def builds(commands):
    """apt and DKMS, among a step's host-changing commands (a reboot's
    also start the charm's boot units)."""
    return [argv for argv in changing(commands)
            if argv[0] in ('apt-get', 'dkms')]


def statuses(output, first=0):
    return [(s['status']['workload'], s['status']['message'])
            for s in output['steps'][first:]]


def test_the_start_after_the_update_builds_the_module_then_asks_a_reboot():
    output = scenario('kernel/update-without-headers.yaml')
    kernel, update, booted, waiting, rebooted, last = output['steps'][3:]
    assert kernel['hooks'] == [] and kernel['commands'] == []
    assert update['status']['message'] == DONE[1]
    # The first boot of 6.8.0-45 has no module to load; start mends it.
    assert builds(booted['commands']) == [APT + ['install', HEADERS], DKMS]
    assert statuses(output, 5) == [('blocked', REBOOT)] * 2 + [
        DONE] * 2
    # Nothing is loaded by hand, nothing retried in update-status; the
    # next boot loads the module DKMS built.
    assert changing(waiting['commands']) == []
    assert not [argv for s in output['steps'] for argv in s['commands']
                if argv[0] in ('modprobe', 'insmod')]
    assert output['host']['modules'] == ['nvidia', 'nvidia_vgpu_vfio']
    assert output['host']['reboots'] == 3


def test_the_vgpu_manager_is_not_installed_again():
    output = scenario('kernel/update-without-headers.yaml')
    installs = [argv for s in output['steps'] for argv in s['commands']
                if argv[0] == 'apt-get' and argv[-1].endswith('.deb')]
    assert len(installs) == 1


def test_headers_apt_lacks_block_naming_the_kernel_and_the_fix():
    output = scenario('kernel/update-without-headers-unavailable.yaml')
    booted, update, config = output['steps'][4:7]
    for step in (booted, update, config):
        assert step['status'] == {'workload': 'blocked', 'message': UNBUILT}
    # Retried at config-changed (and start), not in update-status; DKMS
    # has nothing to build against, so it does not run.
    assert builds(booted['commands']) == [APT + ['install', HEADERS]]
    assert changing(update['commands']) == []
    assert builds(config['commands']) == [APT + ['install', HEADERS]]
    assert not [argv for s in output['steps'] for argv in s['commands']
                if argv[0] == 'dkms']


def test_booting_the_kernel_the_module_was_built_for_mends_it():
    output = scenario('kernel/update-without-headers-unavailable.yaml')
    kernel, rebooted, update = output['steps'][7:]
    assert kernel['status']['message'] == UNBUILT
    assert statuses(output, 8) == [DONE] * 2
    assert builds(rebooted['commands'] + update['commands']) == []
    assert output['host']['modules'] == ['nvidia', 'nvidia_vgpu_vfio']
