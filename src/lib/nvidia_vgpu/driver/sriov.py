"""SR-IOV GPUs (Ampere and later): their vGPUs live on virtual functions,
which NVIDIA's sriov-manage creates and which are gone after each reboot.
"""
from nvidia_vgpu import model

# The boot unit, installed as templates/nvidia-vgpu-sriov.service says:
# NVIDIA's sriov-manage -e ALL, after the vGPU Manager (its driver must
# be up) and before nova-compute (which must find the VFs and their vGPU
# types).
BOOT_UNIT = 'nvidia-vgpu-sriov.service'


def work(host: model.HostSnapshot, installed: bool) -> model.SriovWork:
    """What the host must do for its SR-IOV GPUs: have the boot unit
    (once the vGPU Manager is installed), and run it now where the
    driver runs and a GPU has no VFs yet (the install before a boot, or
    a boot whose unit failed)."""
    sriov_gpus = [gpu for gpu in host.gpus if gpu.sriov]
    if not sriov_gpus or not installed:
        return model.SriovWork()
    missing = host.driver is not None and any(
        not gpu.virtual_functions for gpu in sriov_gpus)
    return model.SriovWork(
        boot_unit=True,
        enable_now=[gpu.address for gpu in sriov_gpus] if missing else [])
