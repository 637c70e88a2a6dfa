"""Hook simulator: plays one compute host and its Juju agent.

Contract: ../shared/spec/simulator.md (scenario YAML in, JSON out).
"""
