"""Fixtures are real data (issue 36): every GPU in the scenarios, and
every selector the docs and config.yaml pair with a type name, carries
the board's own vGPU type names.

The pairs, device id -> the board's type-name prefix, are NVIDIA's and
the PCI ID database's, as gathered in ../shared/reference/
lifecycle-facts.md section 3 (NVIDIA AI Enterprise vGPU Types Reference;
NVIDIA vgpu-device-manager examples/config-example.yaml; the upstream
pci.ids). "H100 PCIe" offering H100XM-* types was a fixture written from
memory; this test fails on it.
"""
import glob
import os
import re

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOARDS = {
    '20f1': 'A100',     # A100 PCIe 40 GB
    '20b0': 'A100X',    # A100 SXM4 40 GB
    '20b5': 'A100D',    # A100 PCIe 80 GB
    '20b2': 'A100DX',   # A100 SXM4 80 GB
    '20b7': 'A30',
    '2331': 'H100',     # H100 PCIe 80 GB
    '2330': 'H100XM',   # H100 SXM5 80 GB
    '2321': 'H100L',    # H100 NVL 94 GB
    '2339': 'H100XL',   # H100 SXM5 94 GB
    '233b': 'H200',     # H200 NVL
    '2335': 'H200X',    # H200 SXM 141 GB
    '2901': 'B200X',
    '2bb5': 'DC',       # RTX PRO 6000 Blackwell Server Edition
}
# 'NVIDIA H100XM-1-10C', 'GRID A100D-4C' -> the board part of the name
BOARD_OF_NAME = re.compile(r'(?:NVIDIA |GRID )?([A-Za-z0-9]+)-')
# '{'H100XM-1-10C': ['10de:2330'], ...}' as the docs and options write it
PAIR = re.compile(r"'([A-Z0-9][A-Za-z0-9]*)-[0-9A-Za-z-]+':\s*\[\s*'10de:"
                  r"([0-9a-f]{4})'")


def _scenarios():
    return sorted(glob.glob(os.path.join(REPO, 'scenarios', '**',
                                         '*.yaml'), recursive=True))


def _type_names(tree):
    """Every vGPU type name a GPU fixture offers (mdev types, VF types,
    MIG-backed types)."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            if key == 'name' and isinstance(value, str) and \
                    BOARD_OF_NAME.match(value):
                yield value
            else:
                yield from _type_names(value)
    elif isinstance(tree, list):
        for item in tree:
            yield from _type_names(item)


@pytest.mark.parametrize('path', _scenarios(),
                         ids=lambda path: os.path.relpath(path, REPO))
def test_each_gpu_offers_its_own_boards_types(path):
    with open(path) as stream:
        text = stream.read()
    scenario = yaml.safe_load(text)
    wrong = _mispaired(text)
    for gpu in (scenario.get('host') or {}).get('pci', []):
        board = BOARDS.get(gpu.get('device'))
        if gpu.get('vendor') != '10de' or board is None:
            continue
        for name in _type_names(gpu):
            if BOARD_OF_NAME.match(name).group(1) != board:
                wrong.append('{} offers {}'.format(gpu['device'], name))
    assert wrong == []


@pytest.mark.parametrize('page', ['docs/index.md', 'docs/reference.md',
                                  'README.md', 'src/config.yaml',
                                  'tests/README.md'])
def test_each_selector_is_paired_with_its_boards_names(page):
    with open(os.path.join(REPO, page)) as stream:
        assert _mispaired(stream.read()) == []


def _mispaired(text):
    """Type names given to another board's selector in this text."""
    return ['{} paired with 10de:{}'.format(name, device)
            for name, device in PAIR.findall(text)
            if device in BOARDS and BOARDS[device] != name]


def test_the_check_finds_a_board_mixed_up():
    assert PAIR.findall("{'H100XM-1-10C': ['10de:2331']}") == [
        ('H100XM', '2331')]
    assert BOARDS['2331'] != 'H100XM'
