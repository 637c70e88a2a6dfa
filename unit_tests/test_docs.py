"""The docs render: every relative link and anchor resolves."""
import html
import os
import re
import shutil
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The operator's pages: the front page, then the guide and its pages.
OPERATOR_PAGES = ['README.md', 'docs/index.md', 'docs/fleet.md',
                  'docs/reference.md']
# The developer's pages.
DEVELOPER_PAGES = ['docs/development.md', 'docs/testing.md',
                   'docs/benchmarks.md', 'sim/README.md', 'tests/README.md',
                   'sim/stand_ins/README.md',
                   'interfaces/nova-vgpu/README.md',
                   'interfaces/cos-agent/README.md']
PAGES = OPERATOR_PAGES + DEVELOPER_PAGES
LINK = re.compile(r'\[[^\]]+\]\(([^)\s]+)\)')


def slug(heading):
    """GitHub's anchor for a heading: lower case, every character but
    letters, digits, spaces, hyphens and underscores dropped, each space
    a hyphen. Nothing is stripped first: a heading ending in a dropped
    character after a space ends its anchor with a hyphen."""
    text = re.sub(r'`([^`]*)`', r'\1', heading.strip()).lower()
    return re.sub(r'[^\w -]', '', text, flags=re.ASCII).replace(' ', '-')


def anchors(path):
    """The anchors GitHub gives a page's headings (code blocks left out;
    a repeated anchor takes -1, -2, ...)."""
    with open(path) as stream:
        text = stream.read()
    prose = re.sub(r'^```.*?^```', '', text, flags=re.MULTILINE | re.DOTALL)
    found, seen = set(), {}
    for heading in re.findall(r'^#+ (.+)$', prose, re.MULTILINE):
        anchor = slug(heading)
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        found.add(anchor if not count else '{}-{}'.format(anchor, count))
    return found


@pytest.mark.parametrize('heading,anchor', [
    ('Kernel module build (DKMS) and Secure Boot',
     'kernel-module-build-dkms-and-secure-boot'),
    ('Secure Boot: the key DKMS signs with ',
     'secure-boot-the-key-dkms-signs-with'),
    ('Unit is ready: ...', 'unit-is-ready-'),
    ('`vgpu-health` fails', 'vgpu-health-fails'),
    ('1. The cloud around the compute hosts',
     '1-the-cloud-around-the-compute-hosts'),
])
def test_anchors_are_githubs(heading, anchor):
    assert slug(heading) == anchor


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


def _read(page):
    with open(os.path.join(REPO, page)) as stream:
        return stream.read()


def test_readme_links_the_operator_guide():
    assert '(docs/index.md)' in _read('README.md')


def test_every_page_under_docs_is_linked_from_the_readme():
    readme = _read('README.md')
    pages = sorted(name for name in os.listdir(os.path.join(REPO, 'docs'))
                   if name.endswith('.md'))
    assert 'fleet.md' in pages and 'reference.md' in pages
    for name in pages:
        assert '(docs/{})'.format(name) in readme, name


def test_the_readme_is_the_operators_front_page():
    """What it is, how to deploy and configure it, its statuses and
    actions, the way into the guide, and the two set-up commands .ci/run
    relies on; development material lives under docs/."""
    readme = _read('README.md')
    headings = re.findall(r'^## (.+)$', readme, re.MULTILINE)
    assert headings == ['Documentation', 'Deploy', 'Configure',
                        'Unit status', 'Actions', 'Development']
    assert './dev sim ' in readme and './dev test ' in readme
    with open(os.path.join(REPO, '.ci', 'run')) as stream:
        ci = stream.read()
    assert './dev sim' in ci and './dev test' in ci
    for moved in ('The Nova tier', 'What the tests can and cannot claim',
                  'Latest run', 'Profile names', 'Running guests come first'):
        assert moved not in readme, moved
    assert len(readme.splitlines()) < 200


def test_no_page_says_a_host_without_a_gpu_gets_nothing():
    """layer:basic installs its packages on every host: a page may say
    the charm installs nothing of NVIDIA's there, never nothing at all."""
    for page in OPERATOR_PAGES:
        text = ' '.join(_read(page).split())
        assert not re.search(r'install(s|ed) nothing(?! of NVIDIA)',
                             text), page


# The picture in docs/index.md: SVG generated from a Graphviz source.
DOT = os.path.join(REPO, 'docs', 'vgpu-host.dot')
SVG = os.path.join(REPO, 'docs', 'vgpu-host.svg')
REGENERATE = 'dot -Tsvg docs/vgpu-host.dot -o docs/vgpu-host.svg'
DOT_NODE = re.compile(r'^\s*(\w+) \[label="((?:[^"\\]|\\.)*)"', re.MULTILINE)


def dot_nodes():
    with open(DOT) as stream:
        return {name: label.replace('\\"', '"').split('\\n')
                for name, label in DOT_NODE.findall(stream.read())}


def svg_nodes():
    with open(SVG) as stream:
        svg = stream.read()
    nodes = {}
    for block in re.findall(r'<g id="node\d+" class="node">(.*?)</g>', svg,
                            re.DOTALL):
        title = html.unescape(re.search(r'<title>(.*?)</title>',
                                        block).group(1))
        nodes[title] = [html.unescape(text) for text in
                        re.findall(r'<text[^>]*>(.*?)</text>', block)]
    return nodes


def test_the_picture_is_generated_from_its_source():
    """Every node of the .dot is in the SVG with the same text, and no
    other: editing the source without regenerating fails here."""
    assert dot_nodes() == svg_nodes()
    assert len(dot_nodes()) >= 10


def test_the_guide_shows_the_picture_and_how_to_regenerate_it():
    with open(os.path.join(REPO, 'docs', 'index.md')) as stream:
        guide = stream.read()
    assert '](vgpu-host.svg)' in guide
    assert REGENERATE in guide
    with open(DOT) as stream:
        assert REGENERATE in stream.read()


@pytest.mark.skipif(shutil.which('dot') is None,
                    reason='Graphviz (dot) is not installed here')
def test_regenerating_the_picture_gives_the_same_drawing(tmp_path):
    """Where Graphviz is installed: the committed SVG is what dot draws
    (compared by node texts; coordinates vary between versions)."""
    out = tmp_path / 'out.svg'
    subprocess.run(['dot', '-Tsvg', DOT, '-o', str(out)], check=True)
    with open(out) as stream:
        drawn = stream.read()
    with open(SVG) as stream:
        committed = stream.read()

    def texts(svg):
        return sorted(html.unescape(t) for t in
                      re.findall(r'<text[^>]*>(.*?)</text>', svg))
    assert texts(drawn) == texts(committed)
