"""packaging/wheelhouse_for_base_upgrades.py, which charmcraft runs after
charm build, against a PyPI played from files (PyPI's JSON answers and
the files, file:// URLs): what it adds to a wheelhouse, and what not.
What the result does in layer:basic's post-series-upgrade on the next
base's Python was replayed with the real build (docs/testing.md, "Base
upgrades")."""
import hashlib
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), 'packaging'))
import wheelhouse_for_base_upgrades as packaging  # noqa: E402

JAMMY_WHEELHOUSE = [
    'MarkupSafe-2.1.5-cp310-cp310-linux_x86_64.whl',
    'pyyaml-6.0.4-cp310-cp310-linux_x86_64.whl',
    'Cython-0.29.37-cp310-cp310-linux_x86_64.whl',
    'psutil-7.2.2-cp36-abi3-linux_x86_64.whl',
    'setuptools-62.1.0-py3-none-any.whl',
    'charmhelpers-1.2.1-py2.py3-none-any.whl',
]
RELEASES = {
    ('MarkupSafe', '2.1.5'): ['MarkupSafe-2.1.5.tar.gz',
                              'MarkupSafe-2.1.5-cp312-cp312-win32.whl'],
    ('pyyaml', '6.0.4'): ['pyyaml-6.0.4.tar.gz'],
    ('Cython', '0.29.37'): ['Cython-0.29.37.tar.gz',
                            'Cython-0.29.37-py2.py3-none-any.whl'],
    ('setuptools', '80.8.0'): ['setuptools-80.8.0.tar.gz',
                               'setuptools-80.8.0-py3-none-any.whl'],
}


@pytest.fixture
def pypi(tmp_path, monkeypatch):
    """PyPI's JSON API and files under tmp_path, as file:// URLs, the
    files given relative to the page (as a mirror may)."""
    root = tmp_path / 'pypi'
    for (name, version), files in RELEASES.items():
        page = root / 'pypi' / name
        page.mkdir(parents=True, exist_ok=True)
        entries = []
        for filename in files:
            data = ('contents of ' + filename).encode()
            (root / 'files').mkdir(exist_ok=True)
            (root / 'files' / filename).write_bytes(data)
            entries.append({
                'filename': filename, 'url': '../../files/' + filename,
                'packagetype': 'sdist' if filename.endswith('.tar.gz')
                else 'bdist_wheel',
                'digests': {'sha256': hashlib.sha256(data).hexdigest()}})
        (page / 'json').write_text(json.dumps(
            {'releases': {version: entries}}))
    monkeypatch.setattr(packaging, 'PYPI_URL', root.as_uri())
    return root


def wheelhouse_of(tmp_path, names):
    wheelhouse = tmp_path / 'wheelhouse'
    wheelhouse.mkdir()
    for name in names:
        (wheelhouse / name).write_bytes(b'built')
    return wheelhouse


def test_only_wheels_compiled_for_this_python_need_their_source():
    assert packaging.compiled_wheels(JAMMY_WHEELHOUSE) == [
        ('Cython', '0.29.37'), ('MarkupSafe', '2.1.5'), ('pyyaml', '6.0.4')]


def test_a_jammy_wheelhouse_gets_sources_cython_and_a_noble_setuptools(
        tmp_path, pypi):
    wheelhouse = wheelhouse_of(tmp_path, JAMMY_WHEELHOUSE)
    packaging.main(['x', str(wheelhouse)], python=(3, 10))
    added = sorted(set(os.listdir(wheelhouse)) - set(JAMMY_WHEELHOUSE))
    assert added == [
        'Cython-0.29.37-py2.py3-none-any.whl', 'Cython-0.29.37.tar.gz',
        'MarkupSafe-2.1.5.tar.gz', 'pyyaml-6.0.4.tar.gz',
        # py312: pip on jammy's 3.10 never takes it; noble's 3.12 does.
        'setuptools-80.8.0-py312-none-any.whl']
    assert (wheelhouse / 'MarkupSafe-2.1.5.tar.gz').read_bytes() == \
        b'contents of MarkupSafe-2.1.5.tar.gz'


def test_other_bases_get_no_setuptools(tmp_path, pypi):
    focal = [name.replace('cp310', 'cp38') for name in JAMMY_WHEELHOUSE]
    wheelhouse = wheelhouse_of(tmp_path, focal)
    packaging.main(['x', str(wheelhouse)], python=(3, 8))
    assert not [name for name in os.listdir(wheelhouse)
                if name.startswith('setuptools-80')]


def test_a_file_that_is_not_what_pypi_says_stops_the_build(tmp_path, pypi):
    (pypi / 'files' / 'pyyaml-6.0.4.tar.gz').write_bytes(b'tampered')
    wheelhouse = wheelhouse_of(tmp_path, JAMMY_WHEELHOUSE)
    with pytest.raises(SystemExit, match='sha256'):
        packaging.main(['x', str(wheelhouse)], python=(3, 10))
