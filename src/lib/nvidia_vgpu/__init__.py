"""Host-side logic of the nova-compute-nvidia-vgpu charm.

Policy modules (releases, ...) are pure functions: data in, data out.
Modules named for what they touch (dpkg, hostfs, ...) do the I/O.
Nothing here imports charms.reactive or charms_openstack, so every piece
can be tested without a Juju model.
"""
