#!/usr/bin/env python3
"""Make a built charm's wheelhouse installable on the next Ubuntu base too.

    python3 packaging/wheelhouse_for_base_upgrades.py WHEELHOUSE

charmcraft runs it (charmcraft.yaml, override-build) after `charm build
--binary-wheels-from-source`, with the build base's python3. layer:basic
rebuilds the unit's venv from the wheelhouse in post-series-upgrade,
under the NEW base's Python and with no package index; the compiled
wheels are for the old Python only, so that rebuild fails (docs/
testing.md, "Base upgrades"). This adds, beside them:

- the source of every wheel compiled for this Python (the unit can build
  it: layer:basic installs build-essential and python3-dev), and
  Cython's pure wheel, which some of those sources build with;
- on a Python 3.10 build (jammy), a setuptools for Python 3.12 (noble),
  as the jammy pin (<62.2.0) cannot run there. Its file is tagged py312,
  so pip on jammy's 3.10 never takes it and jammy units keep theirs.

Files come from PyPI's JSON API (PYPI_URL, default https://pypi.org),
checked against the sha256 PyPI gives. Standard library only: it runs
under every base's Python, 3.6 included.
"""
import hashlib
import json
import os
import re
import sys
import urllib.parse
import urllib.request

PYPI_URL = os.environ.get('PYPI_URL', 'https://pypi.org')
# A wheel file's name: distribution-version(-build)?-python-abi-platform.
WHEEL = re.compile(r'^(?P<name>[^-]+)-(?P<version>[^-]+)-.*-(?P<abi>[^-]+)'
                   r'-(?P<platform>[^-]+)\.whl$')
NOBLE_SETUPTOOLS = ('setuptools', '80.8.0')


def compiled_wheels(names):
    """(name, version) of the wheels built for this Python only: neither
    pure nor of the stable ABI (abi3, which newer Pythons load)."""
    found = []
    for filename in sorted(names):
        match = WHEEL.match(filename)
        if match and match.group('platform') != 'any' and \
                match.group('abi') != 'abi3':
            found.append((match.group('name'), match.group('version')))
    return found


def release_files(name, version):
    """PyPI's files of one release: [{filename, url, packagetype,
    digests}]."""
    url = '{}/pypi/{}/json'.format(PYPI_URL, name)
    with urllib.request.urlopen(url) as answer:
        files = json.loads(answer.read().decode('utf-8'))['releases'].get(
            version, [])
    # A mirror may give them relative to the page.
    return [dict(entry, url=urllib.parse.urljoin(url, entry['url']))
            for entry in files]


def fetch(entry, directory, filename=None):
    """Download one file into directory, checking its sha256."""
    with urllib.request.urlopen(entry['url']) as answer:
        data = answer.read()
    if hashlib.sha256(data).hexdigest() != entry['digests']['sha256']:
        raise SystemExit('{}: sha256 differs from PyPI\'s'.format(
            entry['filename']))
    path = os.path.join(directory, filename or entry['filename'])
    with open(path, 'wb') as stream:
        stream.write(data)
    return path


def pick(files, wanted, what):
    """The first file `wanted` accepts; `what` names it if none does."""
    for entry in files:
        if wanted(entry):
            return entry
    raise SystemExit('PyPI has no {}'.format(what))


def main(argv, python=sys.version_info[:2]):
    """Add to the wheelhouse argv[1]; python: the build's (major, minor)."""
    wheelhouse = argv[1]
    present = os.listdir(wheelhouse)
    for name, version in compiled_wheels(present):
        files = release_files(name, version)
        fetch(pick(files, lambda e: e['packagetype'] == 'sdist',
                   'source of {} {}'.format(name, version)), wheelhouse)
        if name.lower() == 'cython':
            fetch(pick(files, lambda e: e['filename'].endswith(
                '-none-any.whl'), 'pure wheel of Cython ' + version),
                wheelhouse)
    if tuple(python) == (3, 10):
        files = release_files(*NOBLE_SETUPTOOLS)
        entry = pick(files, lambda e: e['filename'].endswith(
            '-py3-none-any.whl'), 'wheel of setuptools {}'.format(
                NOBLE_SETUPTOOLS[1]))
        fetch(entry, wheelhouse, entry['filename'].replace(
            '-py3-none-any.whl', '-py312-none-any.whl'))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
