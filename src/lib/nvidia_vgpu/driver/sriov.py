"""SR-IOV GPUs (Ampere and later): their vGPUs live on virtual functions,
which NVIDIA's sriov-manage creates and which are gone after each reboot.
"""
SRIOV_MANAGE = '/usr/lib/nvidia/sriov-manage'
BOOT_UNIT = 'nvidia-vgpu-sriov.service'
# Ordered after the vGPU Manager (its driver must be up) and before
# nova-compute (which must find the VFs and their vGPU types).
BOOT_UNIT_TEXT = (
    '# Installed by the nova-compute-nvidia-vgpu charm; removed with it.\n'
    '[Unit]\n'
    'Description=Enable SR-IOV virtual functions of NVIDIA GPUs for vGPUs\n'
    'After=nvidia-vgpu-mgr.service\n'
    'Wants=nvidia-vgpu-mgr.service\n'
    'Before=nova-compute.service libvirtd.service\n'
    '\n'
    '[Service]\n'
    'Type=oneshot\n'
    'RemainAfterExit=yes\n'
    'ExecStart={} -e ALL\n'
    '\n'
    '[Install]\n'
    'WantedBy=multi-user.target\n').format(SRIOV_MANAGE)
