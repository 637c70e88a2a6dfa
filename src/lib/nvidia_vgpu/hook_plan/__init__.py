"""The hook's whole decision: facts in (facts.py), plan out (decide.py),
the unit's status among it (precedence.py). Pure: no host, no Juju."""
