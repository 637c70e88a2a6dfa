#!/usr/bin/env python3
"""Entry point of this charm's own actions (pause/resume: layer:openstack)."""
import json
import os
import sys

sys.path.append('lib')

from charms.layer import basic  # noqa: E402

basic.bootstrap_charm_deps()

import charmhelpers.core.hookenv as hookenv  # noqa: E402
import charms_openstack.bus  # noqa: E402
import charms_openstack.charm as charm  # noqa: E402

charms_openstack.bus.discover()


def list_vgpu_types(instance) -> None:
    """action-set the vGPU types this host's GPUs offer."""
    results = instance.list_vgpu_types(
        pci_address=hookenv.action_get('pci-address') or None)
    hookenv.action_set({key: value if isinstance(value, str)
                        else json.dumps(value, sort_keys=True)
                        for key, value in results.items()})


ACTIONS = {
    'list-vgpu-types': list_vgpu_types,
}


def main(argv) -> int:
    """Run the action named by argv[0]; turn any failure into action-fail."""
    name = os.path.basename(argv[0])
    action = ACTIONS.get(name)
    if action is None:
        hookenv.action_fail('Action {} is not defined'.format(name))
        return 0
    # Endpoints and config flags are set up at atstart, as in a hook.
    hookenv._run_atstart()
    try:
        with charm.provide_charm_instance() as instance:
            action(instance)
    except Exception as error:
        hookenv.action_fail(str(error))
    hookenv._run_atexit()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
