"""The code stays readable as it grows: no function in src/ longer than
a screen, and the charm package only wires collaborators (the decisions
live in the hook's plan, the work in apply/ and relations/)."""
import ast
import glob
import os

SRC = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), 'src')
CHARM_PACKAGE = os.path.join(SRC, 'lib', 'charm')
CHARM_MODULE = os.path.join(CHARM_PACKAGE, 'openstack',
                            'nova_compute_nvidia_vgpu.py')
MAX_FUNCTION_LINES = 50
MAX_CHARM_PACKAGE_LINES = 500


def _tree(path):
    with open(path) as stream:
        return ast.parse(stream.read(), path)


def _long_functions(path, limit):
    return ['{}:{} {}() has {} lines'.format(
        os.path.relpath(path, SRC), node.lineno, node.name,
        node.body[-1].end_lineno - node.lineno + 1)
        for node in ast.walk(_tree(path))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body[-1].end_lineno - node.lineno + 1 > limit]


def test_no_function_in_src_is_longer_than_a_screen():
    paths = glob.glob(os.path.join(SRC, '**', '*.py'), recursive=True)
    assert len(paths) > 30
    assert [problem for path in sorted(paths)
            for problem in _long_functions(path, MAX_FUNCTION_LINES)] == []


def test_the_check_can_fail():
    assert _long_functions(CHARM_MODULE, 5) != []


def _lines(path):
    with open(path) as stream:
        return len(stream.readlines())


def test_the_charm_package_stays_small():
    """All of src/lib/charm/, every file: what grows is a collaborator,
    not the class."""
    paths = glob.glob(os.path.join(CHARM_PACKAGE, '**', '*.py'),
                      recursive=True)
    assert CHARM_MODULE in paths
    assert 100 < sum(_lines(path) for path in paths) <= \
        MAX_CHARM_PACKAGE_LINES
