"""Test double for the ``charms_openstack`` library (charms.openstack).

Used by the unit tests and the hook simulator only when the real package
cannot be imported; see ``sim/stand_ins/README.md`` for the exact
surface it provides.
"""
