"""The Python each supported Ubuntu series runs hooks under, and cached
environments of it.

A unit's hooks run under its host's python3, in a venv layer:basic builds
from the charm's wheelhouse: bionic has Python 3.6, focal 3.8, jammy 3.10,
noble 3.12. The simulator runs each scenario's hooks under its series'
Python with the wheelhouse's packages resolved for that Python, and the
unit tests run once under each (tox -e unit-<series>).

Interpreters come from pyenv (`pyenv root`, then its versions/), or from
PATH (pythonX.Y); the newest patch release found is used. Environments are
built once and kept, like tox's, under .tox/series/ (SIM_SERIES_ENVS
overrides): rebuilt only when the interpreter or the requirements change.
"""
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from typing import Dict, List, Optional, Sequence, Tuple

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERIES_PYTHON: Dict[str, str] = {
    'bionic': '3.6',
    'focal': '3.8',
    'jammy': '3.10',
    'noble': '3.12',
}
DEFAULT_SERIES = 'jammy'
WHEELHOUSE = os.path.join(REPO_ROOT, 'src', 'wheelhouse.txt')
TEST_REQUIREMENTS = os.path.join(REPO_ROOT, 'test-requirements.txt')
LAYER_REQUIREMENTS = os.path.join(REPO_ROOT, 'sim', 'layer-requirements.txt')
# The newest pip each interpreter runs: the one ensurepip bundles may be
# too old to read today's wheels' tags (3.6 bundles pip 18.1).
PIP = 'pip<22;python_version<"3.7"\npip<25;python_version>="3.7"\n'


class MissingPython(Exception):
    """No interpreter for a series here; the message is one line."""


class EnvironmentFailed(Exception):
    """pip could not build an environment; the message is one line."""


def _pyenv_root() -> Optional[str]:
    root = os.environ.get('PYENV_ROOT')
    if not root and shutil.which('pyenv'):
        try:
            root = subprocess.run(
                ['pyenv', 'root'], stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, universal_newlines=True,
                check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            root = None
    if not root:
        root = os.path.expanduser('~/.pyenv')
    return root if os.path.isdir(os.path.join(root, 'versions')) else None


def _version_of(program: str) -> Optional[str]:
    """X.Y.Z of an interpreter, asked of the program itself."""
    try:
        done = subprocess.run(
            [program, '-c', 'import sys; print("%d.%d.%d" % '
             'sys.version_info[:3])'], stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, universal_newlines=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def find_interpreter(version: str) -> str:
    """The path of the newest CPython X.Y.* here (version 'X.Y')."""
    candidates: List[Tuple[Tuple[int, ...], str]] = []
    root = _pyenv_root()
    if root:
        pattern = re.compile(r'^{}\.(\d+)$'.format(re.escape(version)))
        for name in os.listdir(os.path.join(root, 'versions')):
            match = pattern.match(name)
            program = os.path.join(root, 'versions', name, 'bin',
                                   'python' + version)
            if match and os.access(program, os.X_OK):
                candidates.append(((int(match.group(1)),), program))
    for program in sorted(candidates, reverse=True):
        if (_version_of(program[1]) or '').startswith(version + '.'):
            return program[1]
    on_path = shutil.which('python' + version)
    if on_path and (_version_of(on_path) or '').startswith(version + '.'):
        return on_path
    raise MissingPython(
        'Python {} is not on this machine (neither pyenv versions nor '
        'python{} on PATH has it); install it, e.g. pyenv install {}'
        .format(version, version, version))


def series_python(series: str) -> str:
    """'X.Y' of a series, or ValueError naming the known ones."""
    if series not in SERIES_PYTHON:
        raise ValueError('unknown series {!r} (known: {})'.format(
            series, ', '.join(SERIES_PYTHON)))
    return SERIES_PYTHON[series]


def requirement_lines(path: str) -> List[str]:
    """The PyPI requirements of a requirements file: comments, blank
    lines and VCS URLs (charms.openstack, which is not on PyPI) left
    out."""
    lines = []
    with open(path) as stream:
        for line in stream:
            line = line.split(' #', 1)[0].strip()
            if line and not line.startswith(('#', 'git+', '-')):
                lines.append(line)
    return lines


def envs_dir() -> str:
    return os.environ.get('SIM_SERIES_ENVS') or os.path.join(
        REPO_ROOT, '.tox', 'series')


def environment(kind: str, series: str,
                requirement_files: Sequence[str]) -> str:
    """The python of a venv of the series' interpreter holding these
    requirements, built once and reused while interpreter and
    requirements stay the same. Safe to call from parallel processes."""
    interpreter = find_interpreter(series_python(series))
    lines: List[str] = []
    for path in requirement_files:
        lines += requirement_lines(path)
    # uv runs no Python 3.6 (bionic).
    uv = _uv() if kind == 'unit' and series_python(series) != '3.6' \
        else None
    key = hashlib.sha256(json.dumps(
        [os.path.realpath(interpreter), _version_of(interpreter), PIP,
         lines] + (['uv'] if uv else [])).encode()).hexdigest()
    # Keyed by what it holds: checkouts whose requirements differ (a
    # branch that changed the wheelhouse) each keep their own, and none
    # removes a venv another process is running hooks with.
    target = os.path.join(envs_dir(), '{}-{}-{}'.format(kind, series,
                                                        key[:12]))
    python = os.path.join(target, 'bin', 'python')
    stamp = os.path.join(target, '.requirements-sha256')
    os.makedirs(envs_dir(), exist_ok=True)
    with open(target + '.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _read(stamp) == key and os.access(python, os.X_OK):
            return python
        shutil.rmtree(target, ignore_errors=True)
        sys.stderr.write('sim: building {} environment for {} (Python {}) '
                         'in {}\n'.format(kind, series,
                                          series_python(series), target))
        requirements = os.path.join(target, 'requirements.txt')
        if uv:
            # The unit tests' env: the same requirements, installed by uv
            # in a fraction of pip's time (a hook env is built by pip, as
            # layer:basic builds a unit's venv; uv runs no Python 3.6).
            _run([uv, 'venv', '-q', '--python', interpreter, target],
                 target)
            _write(requirements, '\n'.join(lines) + '\n')
            _run([uv, 'pip', 'install', '-q', '--python', python, '-r',
                  requirements], target)
        else:
            _run([interpreter, '-m', 'venv', target], target)
            _write(requirements, '\n'.join(lines) + '\n')
            _write(os.path.join(target, 'pip.txt'), PIP)
            _run([python, '-m', 'pip', 'install', '-q', '-U', '-r',
                  os.path.join(target, 'pip.txt')], target)
            _run([python, '-m', 'pip', 'install', '-q', '-r',
                  requirements], target)
        with open(stamp, 'w') as stream:
            stream.write(key)
    return python


def hook_environment(series: str) -> str:
    """What a unit of this series runs hooks with: the wheelhouse's
    packages, resolved for the series' Python."""
    return environment('hooks', series, [WHEELHOUSE, LAYER_REQUIREMENTS])


def unit_test_environment(series: str) -> str:
    """The wheelhouse's packages plus the test requirements."""
    return environment('unit', series, [WHEELHOUSE, TEST_REQUIREMENTS])


def _uv() -> Optional[str]:
    """uv where this machine has it: on PATH, or the one ./dev installs
    with tox-uv."""
    found = shutil.which('uv')
    if found:
        return found
    beside_tox = os.path.join(REPO_ROOT, '.venv', 'bin', 'uv')
    return beside_tox if os.access(beside_tox, os.X_OK) else None


def _write(path: str, text: str) -> None:
    with open(path, 'w') as stream:
        stream.write(text)


def _read(path: str) -> Optional[str]:
    try:
        with open(path) as stream:
            return stream.read()
    except OSError:
        return None


def _run(argv: List[str], target: str) -> None:
    done = subprocess.run(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        universal_newlines=True,
        env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK='1'))
    if done.returncode:
        shutil.rmtree(target, ignore_errors=True)
        lines = [line.strip() for line in done.stdout.splitlines()
                 if line.strip()]
        errors = [line for line in lines if line.startswith('ERROR')]
        raise EnvironmentFailed('{} failed building {}: {}'.format(
            ' '.join(os.path.basename(word) for word in argv[:3]), target,
            (errors or lines or ['exit {}'.format(done.returncode)])[-1]))


def main(argv: Optional[List[str]] = None) -> int:
    """python -m sim.pythons list | unit SERIES [PYTEST ARGS]"""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if args[:1] == ['list']:
            for series, version in SERIES_PYTHON.items():
                try:
                    found = find_interpreter(version)
                except MissingPython:
                    found = 'missing'
                print('{} {} {}'.format(series, version, found))
            return 0
        if args[:1] == ['unit'] and len(args) >= 2:
            python = unit_test_environment(args[1])
            pytest_args = args[2:]
            if pytest_args[:1] == ['--']:
                pytest_args = pytest_args[1:]
            return subprocess.call([python, '-m', 'pytest'] + pytest_args,
                                   cwd=REPO_ROOT)
    except (MissingPython, EnvironmentFailed, ValueError) as error:
        sys.stderr.write('sim.pythons: {}\n'.format(error))
        return 2
    sys.stderr.write('usage: python -m sim.pythons list | unit SERIES '
                     '[PYTEST ARGS]\n')
    return 2


if __name__ == '__main__':
    sys.exit(main())
