"""The code stays readable as it grows: no function in src/ longer than
a screen, and the charm class only gathers, plans, applies and reports
(the decisions live in nova/, health/ and status.py)."""
import ast
import glob
import os

SRC = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), 'src')
CHARM_MODULE = os.path.join(SRC, 'lib', 'charm', 'openstack',
                            'nova_compute_nvidia_vgpu.py')
MAX_FUNCTION_LINES = 50
MAX_CHARM_CLASS_LINES = 500


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


def test_the_charm_class_stays_small():
    base = next(node for node in _tree(CHARM_MODULE).body
                if isinstance(node, ast.ClassDef)
                and node.name == 'NovaComputeNvidiaVgpuCharm')
    lines = base.body[-1].end_lineno - base.lineno + 1
    assert 100 < lines <= MAX_CHARM_CLASS_LINES
