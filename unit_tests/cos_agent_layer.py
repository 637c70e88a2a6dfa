"""The cos-agent interface layer (interfaces/cos-agent/provides.py),
loaded as a charm loads it: with CHARM_DIR naming the charm's source, for
its metadata. Shared by the tests of what it writes and of the
collector's contract."""
import importlib.util
import os
from types import ModuleType

from charmhelpers.core import hookenv

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(REPO, 'src')


def load_provides(name: str = 'cos_agent_provides') -> ModuleType:
    """The layer's module, under this name."""
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(REPO, 'interfaces', 'cos-agent', 'provides.py'))
    module = importlib.util.module_from_spec(spec)
    saved = os.environ.get('CHARM_DIR')
    os.environ['CHARM_DIR'] = SRC
    try:
        spec.loader.exec_module(module)
    finally:
        if saved is None:
            del os.environ['CHARM_DIR']
        else:
            os.environ['CHARM_DIR'] = saved
        hookenv.cache.clear()
    return module
