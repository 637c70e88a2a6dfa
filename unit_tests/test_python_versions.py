"""The charm runs on the Python of every series it claims.

metadata.yaml lists bionic (Python 3.6), focal (3.8), jammy (3.10) and
noble (3.12). Everything that runs in a hook process must work on all
four: a minimum-version linter reads it, and each series' interpreter
(from pyenv) compiles and imports it with the packages src/wheelhouse.txt
gives that Python.
"""
import json
import os
import subprocess
import sys

import pytest

from sim import pythons

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOOK_SIDE = ['src', 'interfaces', 'sim/emulation', 'sim/runtime',
             'sim/stand_ins']
SERIES = sorted(pythons.SERIES_PYTHON, key=pythons.SERIES_PYTHON.get)


def test_series_pythons_are_the_ones_ubuntu_ships():
    assert pythons.SERIES_PYTHON == {'bionic': '3.6', 'focal': '3.8',
                                     'jammy': '3.10', 'noble': '3.12'}


def test_hook_side_code_needs_nothing_newer_than_python_3_6():
    done = subprocess.run(
        [sys.executable, '-c', 'import sys, vermin; sys.exit(vermin.main())',
         '--no-tips', '--violations',
         '--eval-annotations', '--backport', 'typing', '-t=3.6-',
         '--exclude-regex', '__pycache__'] + HOOK_SIDE,
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        universal_newlines=True)
    assert done.returncode == 0, done.stdout


@pytest.mark.parametrize('series', SERIES)
def test_every_hook_side_module_compiles_and_imports(series):
    python = pythons.hook_environment(series)
    done = subprocess.run(
        [python, os.path.join(REPO, 'unit_tests', 'series_import_check.py')],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        universal_newlines=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report['python'] == pythons.SERIES_PYTHON[series]
    assert report['failures'] == []
    assert report['compiled'] >= 30
    assert {'charm.openstack.nova_compute_nvidia_vgpu',
            'reactive.nova_compute_nvidia_vgpu_handlers',
            'relations.nova_vgpu.provides', 'nvidia_vgpu.nova.mappings',
            'charms_openstack.charm', 'sitecustomize'} <= set(
                report['imported'])


# What each series' venv must hold, from the wheelhouse (docs/development
# .md, "What each series runs"): the framework on every series, and a
# setuptools that still has pkg_resources (charms.reactive imports it).
PROBE = r'''
import json, sys, warnings
warnings.simplefilter('error', UserWarning)
import charmhelpers.osplatform
charmhelpers.osplatform.get_platform = lambda: 'ubuntu'
import charms.reactive, charmhelpers.core.hookenv
import charmhelpers.contrib.openstack.utils, yaml, netifaces, dns.version
import pkg_resources
def version(name):
    # Metadata spells charms.reactive as charms_reactive; old
    # pkg_resources and 3.8's importlib.metadata do not normalise.
    for spelling in (name, name.replace('.', '_')):
        try:
            return pkg_resources.get_distribution(spelling).version
        except pkg_resources.DistributionNotFound:
            pass
    raise LookupError(name)
versions = {name: version(name) for name in
            ('charms.reactive', 'charmhelpers', 'PyYAML', 'dnspython',
             'netifaces', 'setuptools')}
json.dump(versions, sys.stdout)
'''
# The release series docs/development.md promises per series (major.minor,
# or the exact version where the wheelhouse pins one).
EXPECTED = {
    'bionic': {'dnspython': '2.2', 'PyYAML': '6.0', 'setuptools': '<42'},
    'focal': {'dnspython': '2.6', 'PyYAML': '6.0', 'setuptools': '<62.2'},
    'jammy': {'dnspython': '2.8', 'PyYAML': '6.0', 'setuptools': '<62.2'},
    'noble': {'dnspython': '2.8', 'PyYAML': '6.0', 'setuptools': '<80.9'},
}


def _release(version):
    return tuple(int(part) for part in version.split('.')[:2])


@pytest.mark.parametrize('series', SERIES)
def test_the_wheelhouse_set_imports_charms_reactive(series):
    python = pythons.hook_environment(series)
    done = subprocess.run([python, '-c', PROBE], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    versions = json.loads(done.stdout)
    assert versions['charms.reactive'] == '1.5.3'
    assert versions['charmhelpers'] == '1.2.1'
    assert versions['netifaces'] == '0.11.0'
    expected = EXPECTED[series]
    for name in ('dnspython', 'PyYAML'):
        assert _release(versions[name]) == _release(expected[name]), name
    assert _release(versions['setuptools']) < _release(
        expected['setuptools'].lstrip('<'))


def test_a_missing_interpreter_is_named(tmp_path, monkeypatch):
    (tmp_path / 'versions').mkdir()
    monkeypatch.setenv('PYENV_ROOT', str(tmp_path))
    monkeypatch.setenv('PATH', str(tmp_path))
    with pytest.raises(pythons.MissingPython) as raised:
        pythons.find_interpreter('3.6')
    assert 'Python 3.6' in str(raised.value)
    assert '\n' not in str(raised.value)


def test_the_newest_patch_release_is_used(tmp_path, monkeypatch):
    """pyenv may hold several patch releases; none is hard-coded."""
    real = pythons.find_interpreter('3.10')
    for patch in ('3.10.2', '3.10.11', '3.10.9'):
        directory = tmp_path / 'versions' / patch / 'bin'
        directory.mkdir(parents=True)
        (directory / 'python3.10').symlink_to(real)
    monkeypatch.setenv('PYENV_ROOT', str(tmp_path))
    assert pythons.find_interpreter('3.10') == str(
        tmp_path / 'versions' / '3.10.11' / 'bin' / 'python3.10')
