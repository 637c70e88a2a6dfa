"""The files the charm writes on the host (systemd units, NRPE and
modprobe configuration), kept as an operator reads them: one file each in
the charm's templates/ (src/templates/ here), beside its lib/.

The values known only at run time (the charm's lib/, the venv's Python,
the port) are string.Template placeholders, ${lib_dir} and the like: the
standard library's, which the host's python3 has as well as the charm's
venv. A $ of the file's own would be written $$ (none has one).
"""
import os
import string
from typing import Mapping, Optional

# lib/nvidia_vgpu/host/ -> the charm's directory: src/ here; once built,
# the charm's root, where templates/ sits beside lib/.
CHARM_DIR = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))
TEMPLATES_DIR = os.path.join(CHARM_DIR, 'templates')


def path(name: str) -> str:
    """Where a template is, by the name of the file it becomes."""
    return os.path.join(TEMPLATES_DIR, name)


def render(name: str, values: Optional[Mapping[str, object]] = None
           ) -> str:
    """A template's text with its placeholders filled in from values.

    A placeholder without a value is a KeyError rather than a file
    written half-filled on the host; a template without placeholders
    comes back as it is.
    """
    with open(path(name), encoding='utf-8') as stream:
        return string.Template(stream.read()).substitute(values or {})
