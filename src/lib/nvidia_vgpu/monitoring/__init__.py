"""Monitoring: what NRPE checks and the Prometheus exporter report.

Hooks run as root and read the host; Nagios and the exporter must not
(libvirt's definitions and the charm's records are root's alone). So each
hook writes the verdict as a world-readable document (report.py), and the
readers only read it, its age telling them whether the unit agent still
runs hooks.
"""
