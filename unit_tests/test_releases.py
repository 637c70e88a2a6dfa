"""The charm's own release table: nova-common version -> nova.conf format."""
import pytest

from nvidia_vgpu.nova import releases


@pytest.mark.parametrize('version, release', [
    ('2:17.0.13-0ubuntu5', 'queens'),
    ('3:21.2.4-0ubuntu2.13', 'ussuri'),
    ('3:22.2.1-0ubuntu1', 'victoria'),
    ('3:25.2.1-0ubuntu2', 'yoga'),
    ('3:29.0.1-0ubuntu1', 'caracal'),
    ('3:30.0.0-0ubuntu1~cloud0', 'dalmatian'),
    ('3:31.1.0-0ubuntu1', 'epoxy'),
    ('34.0.0-0ubuntu1', 'hibiscus'),
])
def test_release_from_ubuntu_nova_common_versions(version, release):
    assert releases.release_for_nova_version(version) == release


def test_newer_nova_than_known_gets_newest_format():
    assert releases.release_for_nova_version('3:41.0.0-0ubuntu1') == \
        releases.RELEASES[-1]


@pytest.mark.parametrize('version', ['2:16.1.0-0ubuntu1', 'garbage', ''])
def test_unsupported_or_unreadable_versions_give_none(version):
    assert releases.release_for_nova_version(version) is None


def test_table_is_one_release_per_nova_major_in_order():
    majors = [major for major, _ in releases.NOVA_MAJOR_RELEASES]
    assert majors == list(range(17, 35))
    assert len(set(releases.RELEASES)) == len(releases.RELEASES)


def test_extending_pypi_charmhelpers_list_keeps_chronology():
    pypi = ('diablo', 'essex', 'queens', 'rocky', 'stein', 'train',
            'ussuri', 'victoria', 'wallaby', 'xena', 'yoga')
    extended = releases.extend_release_list(pypi)
    assert extended[:len(pypi)] == pypi
    assert extended[len(pypi):] == releases.RELEASES[
        releases.RELEASES.index('zed'):]


def test_extending_a_complete_list_changes_nothing():
    assert releases.extend_release_list(releases.RELEASES) == \
        releases.RELEASES
