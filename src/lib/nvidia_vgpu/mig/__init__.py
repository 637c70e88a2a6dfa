"""MIG: which GPU instances each MIG-capable GPU is cut into, so that its
MIG-backed vGPU types have GPU instances to live on."""
