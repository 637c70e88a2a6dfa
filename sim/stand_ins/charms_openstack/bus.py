"""Test double for ``charms_openstack.bus``.

layer:openstack calls ``discover()`` early in every hook so that the
charm's class module under ``lib/charm/openstack`` gets imported and its
classes register their releases before any handler asks for the charm.
"""
import importlib
import os
from typing import Optional

import charmhelpers.core.hookenv as hookenv


def discover(search_path: Optional[str] = None) -> None:
    """Import every Python file below ``search_path``.

    Modules are named from the parent directory of ``search_path``
    (``charm.openstack.<...>`` for the default
    ``$CHARM_DIR/lib/charm/openstack``), so the charm's own imports of
    ``charm.openstack.x`` find the very same module objects.  Files other
    than ``*.py`` (README, templates, licences) are left alone.
    """
    if not search_path:
        search_path = os.path.join(
            hookenv.charm_dir(), 'lib', 'charm', 'openstack')
    root = os.path.dirname(search_path)
    for dirpath, _dirnames, filenames in os.walk(search_path):
        for filename in filenames:
            if filename.endswith('.py'):
                importlib.import_module(
                    _module_name(root, os.path.join(dirpath, filename)))


def _module_name(root: str, path: str) -> str:
    """Dotted module name of ``path``, with ``root``'s basename on top."""
    relative = os.path.relpath(path, root)[:-len('.py')]
    parts = [os.path.basename(root)] + relative.split(os.sep)
    if parts[-1] == '__init__':
        parts.pop()
    return '.'.join(parts)
