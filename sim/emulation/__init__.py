"""What `charm build` would bring from layer:basic, layer:openstack and the
published interface layers (tls-certificates, juju-info).

These files are copied into the simulated charm directory when the
simulator runs the layer in src/ (not with --charm-dir, where the real
layers are in the built charm). They re-create, in this project's own
code, the run-time behaviour documented in
../shared/reference/reactive-anatomy.md sections a and b, limited to what
this charm relies on. Keep them in step with that page.
"""
