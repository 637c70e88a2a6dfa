"""charmcraft.yaml, as charmcraft itself reads it: one build per base.

Runs where charmcraft is installed (tox -e charmcraft, which installs it
from PyPI); elsewhere it is skipped, and says so. Packing itself needs LXD
(or an Ubuntu host of each base) and the network, which this cannot show.
"""
import os
import pathlib

import pytest
import yaml

preprocess = pytest.importorskip(
    'charmcraft.preprocess',
    reason='charmcraft is not installed here; tox -e charmcraft runs these '
           'checks')
project = pytest.importorskip('charmcraft.models.project')
charm_platforms = pytest.importorskip('craft_platforms.charm')
reactive_plugin = pytest.importorskip('charmcraft.parts.plugins._reactive')
parts = pytest.importorskip('charmcraft.parts')
# As charmcraft does at start-up: its own plugins (reactive among them).
parts.setup_parts()

REPO = pathlib.Path(__file__).resolve().parent.parent
# Ubuntu base -> the series metadata.yaml names for it.
BASES = {'ubuntu@18.04': 'bionic', 'ubuntu@20.04': 'focal',
         'ubuntu@22.04': 'jammy', 'ubuntu@24.04': 'noble'}


def project_data():
    """charmcraft.yaml with metadata/config/actions merged in, as
    `charmcraft pack` prepares it before validating."""
    with open(str(REPO / 'charmcraft.yaml')) as stream:
        data = yaml.safe_load(stream)
    preprocess.add_default_parts(data)
    preprocess.add_metadata(REPO, data)
    preprocess.add_config(REPO, data)
    preprocess.add_actions(REPO, data)
    return data


def test_charmcraft_accepts_the_project():
    model = project.CharmcraftProject.unmarshal(project_data())
    assert model.name == 'nova-compute-nvidia-vgpu'
    assert model.type == 'charm'


def test_one_build_per_base_each_on_its_own_base():
    plan = charm_platforms.get_charm_build_plan(project_data())
    builds = sorted((str(info.build_base), str(info.build_on),
                     str(info.build_for), info.platform) for info in plan)
    # charmcraft names each file after its platform: the names the docs
    # deploy, nova-compute-nvidia-vgpu_ubuntu-22.04-amd64.charm.
    assert builds == [
        (base, 'amd64', 'amd64', base.replace('@', '-') + '-amd64')
        for base in sorted(BASES)]


def test_bases_are_the_series_metadata_names():
    with open(str(REPO / 'src' / 'metadata.yaml')) as stream:
        series = yaml.safe_load(stream)['series']
    platforms = yaml.safe_load(
        (REPO / 'charmcraft.yaml').read_text())['platforms']
    assert [BASES[platform['build-for'][0].split(':')[0]]
            for platform in platforms.values()] == series


def test_the_part_is_the_reactive_build_of_src():
    part = project_data()['parts']['charm']
    properties = reactive_plugin.ReactivePluginProperties.unmarshal(part)
    assert properties.source == 'src/'
    assert '--binary-wheels-from-source' in (
        properties.reactive_charm_build_arguments)
    interfaces = [entry['CHARM_INTERFACES_DIR']
                  for entry in part['build-environment']
                  if 'CHARM_INTERFACES_DIR' in entry]
    assert interfaces == ['$CRAFT_PROJECT_DIR/interfaces/']
    assert os.path.isdir(str(REPO / 'interfaces' / 'nova-vgpu'))
