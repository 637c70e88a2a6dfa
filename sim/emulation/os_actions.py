#!/usr/bin/env python3
"""Simulated layer:openstack actions/os_actions.py: pause, resume and
restart-services, dispatched on the name the script was run as."""
import os
import sys

sys.path.append('lib')

from charms.layer import basic  # noqa: E402

basic.bootstrap_charm_deps()

import charmhelpers.core.hookenv as hookenv  # noqa: E402
import charms_openstack.bus  # noqa: E402
import charms_openstack.charm as charm  # noqa: E402

charms_openstack.bus.discover()


def pause(instance) -> None:
    instance.pause()
    # Not deferred: the action must leave the status it reports.
    instance._assess_status()


def resume(instance) -> None:
    instance.resume()
    instance._assess_status()


def restart_services(instance) -> None:
    instance.restart_services()


ACTIONS = {'pause': pause, 'resume': resume,
           'restart-services': restart_services}


def main(argv) -> int:
    hookenv._run_atstart()
    name = os.path.basename(argv[0])
    if name not in ACTIONS:
        return 'Action {} undefined'.format(name)
    try:
        with charm.provide_charm_instance() as instance:
            ACTIONS[name](instance)
    except Exception as error:
        hookenv.action_fail(str(error))
    hookenv._run_atexit()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
