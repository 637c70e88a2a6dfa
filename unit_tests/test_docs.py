"""The docs render: every relative link and anchor resolves."""
import os
import re

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = ['README.md', 'docs/index.md', 'sim/README.md', 'tests/README.md',
         'unit_tests/stand_ins/README.md', 'interfaces/nova-vgpu/README.md']
LINK = re.compile(r'\[[^\]]+\]\(([^)\s]+)\)')


def anchors(path):
    with open(path) as stream:
        text = stream.read()
    return {re.sub(r'[^a-z0-9 -]', '', heading.lower()).strip()
            .replace(' ', '-')
            for heading in re.findall(r'^#+ (.+)$', text, re.MULTILINE)}


@pytest.mark.parametrize('page', PAGES)
def test_relative_links_and_anchors_resolve(page):
    path = os.path.join(REPO, page)
    with open(path) as stream:
        text = stream.read()
    assert text.count('```') % 2 == 0, 'unclosed code block'
    for target in LINK.findall(text):
        if re.match(r'^[a-z]+:', target):
            continue
        file_part, _, anchor = target.partition('#')
        linked = (os.path.normpath(os.path.join(os.path.dirname(path),
                                                file_part))
                  if file_part else path)
        assert os.path.exists(linked), target
        if anchor:
            assert anchor in anchors(linked), target


def test_readme_links_the_operator_guide():
    with open(os.path.join(REPO, 'README.md')) as stream:
        assert '(docs/index.md)' in stream.read()
