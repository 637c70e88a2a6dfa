"""The host's commands the charm runs, each changing only the simulated
host, by concern: packages (apt, dpkg), services (systemd), the kernel
(modules, initramfs, DKMS, mokutil), the GPU (sriov-manage, nvidia-smi,
mdevctl), the kernel log (journalctl), and commands kept inside the
sandbox."""
from sim.fakebin.host_commands import gpu, kernel, packages, sandbox
from sim.fakebin.host_commands import services

# Each host command by the name it is called by.
COMMANDS = {
    'apt-cache': packages.cmd_apt_cache,
    'apt-config': packages.cmd_apt_config,
    'apt-get': packages.cmd_apt_get,
    'dkms': kernel.cmd_dkms,
    'dpkg': packages.cmd_dpkg,
    'dpkg-query': packages.cmd_dpkg_query,
    'journalctl': kernel.cmd_journalctl,
    'lsmod': kernel.cmd_lsmod,
    'mdevctl': gpu.cmd_mdevctl,
    'modprobe': kernel.cmd_modprobe,
    'mokutil': kernel.cmd_mokutil,
    'nc': sandbox.cmd_nc,
    'nvidia-smi': gpu.cmd_nvidia_smi,
    'rmmod': kernel.cmd_rmmod,
    'service': services.cmd_service,
    'sriov-manage': gpu.cmd_sriov_manage,
    'systemctl': services.cmd_systemctl,
    'touch': sandbox.cmd_touch,
    'update-initramfs': kernel.cmd_update_initramfs,
    'virtualenv': sandbox.cmd_virtualenv,
}
HOST_COMMANDS = tuple(COMMANDS)
