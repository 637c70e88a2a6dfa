"""One module per relation of metadata.yaml: what the charm reads from it
and sets on it (nova-vgpu, nrpe-external-master, cos-agent)."""
