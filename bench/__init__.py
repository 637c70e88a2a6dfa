"""Benchmarks of the charm on simulated compute hosts (python -m bench)."""
