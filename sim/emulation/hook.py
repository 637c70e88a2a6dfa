#!/usr/bin/env python3
"""Simulated hook stub: what layer:basic's generated hooks do, minus the
dependency bootstrap (the simulator's interpreter already has them)."""
import sys

sys.path.append('lib')

from charms.layer import basic  # noqa: E402

basic.bootstrap_charm_deps()

from charmhelpers.core import hookenv  # noqa: E402

hookenv.atstart(basic.init_config_states)
hookenv.atexit(basic.clear_config_states)

from charms.reactive import main  # noqa: E402

main()
