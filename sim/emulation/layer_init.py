"""Simulated charms.layer package (layer:basic's lib/charms/layer)."""
