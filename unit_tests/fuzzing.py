"""The fuzz tests' one budget: deterministic (derandomized, no example
database), bounded, and scaled by FUZZ_SCALE.

py3 runs the full budget. Each series' env (tox.ini, unit-*) runs the
same generators a quarter as long under that series' Python and PyYAML:
what differs there is the interpreter and the parser's version, not the
charm's rules, and .ci/run must stay within its ten minutes on two
CPUs.
"""
import os

from hypothesis import HealthCheck, settings

SCALE = float(os.environ.get('FUZZ_SCALE') or 1)


def budget(examples: int) -> settings:
    """Settings for a fuzz test of this many examples at full scale."""
    return settings(derandomize=True, database=None, deadline=None,
                    max_examples=max(10, int(examples * SCALE)),
                    suppress_health_check=list(HealthCheck))
