"""nova-compute, the principal, acting on what this charm publishes.

charm-nova-compute pauses, resumes, restarts and monitors every service
a subordinate lists in `services` (charmhelpers' get_subordinate_services).
Its code is not on PyPI, so it runs here from a copy of its repository
(`nova_compute`, the `nova-compute-charm` tox env), and what it does with
a subordinate's services is recorded as data (`record`) for CI, where
charmhelpers' real get_subordinate_services reads the relation data each
scenario step leaves.

`hook_tools` plays Juju's hook tools and the host's service and package
commands for the principal unit, from a JSON world file.
"""
