"""zaza functional tests for nova-compute-nvidia-vgpu."""
