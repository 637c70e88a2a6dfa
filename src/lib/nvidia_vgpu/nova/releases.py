"""OpenStack releases, as the installed nova-common package reveals them.

charmhelpers on PyPI only knows releases up to Yoga, and charm-nova-compute
keeps running on newer ones, so the charm carries its own table from the
first release it supports (Queens, nova 17) to the newest it knows.
"""
import re
from typing import Optional, Tuple

# The principal's package whose version names the release.
NOVA_PACKAGE = 'nova-common'

# nova's major version -> OpenStack release codename, oldest first.
NOVA_MAJOR_RELEASES: Tuple[Tuple[int, str], ...] = (
    (17, 'queens'),
    (18, 'rocky'),
    (19, 'stein'),
    (20, 'train'),
    (21, 'ussuri'),
    (22, 'victoria'),
    (23, 'wallaby'),
    (24, 'xena'),
    (25, 'yoga'),
    (26, 'zed'),
    (27, 'antelope'),
    (28, 'bobcat'),
    (29, 'caracal'),
    (30, 'dalmatian'),
    (31, 'epoxy'),
    (32, 'flamingo'),
    (33, 'gazpacho'),
    (34, 'hibiscus'),
)

RELEASES: Tuple[str, ...] = tuple(name for _, name in NOVA_MAJOR_RELEASES)
OLDEST_NOVA_MAJOR = NOVA_MAJOR_RELEASES[0][0]
NEWEST_NOVA_MAJOR = NOVA_MAJOR_RELEASES[-1][0]

# Debian version: optional "epoch:", then the upstream version.
_DEB_VERSION = re.compile(r'^(?:\d+:)?(?P<major>\d+)\.')


def nova_major(package_version: str) -> Optional[int]:
    """nova's major version from a Debian version such as 3:25.2.0-0ubuntu1."""
    match = _DEB_VERSION.match(package_version.strip())
    return int(match.group('major')) if match else None


def release_for_nova_version(package_version: str) -> Optional[str]:
    """The release whose nova.conf format applies to this nova-common.

    A nova newer than the newest known release is given the newest known
    format (options have only ever been added since Xena, never removed);
    a nova older than Queens, or an unreadable version, gives None.
    """
    major = nova_major(package_version)
    if major is None or major < OLDEST_NOVA_MAJOR:
        return None
    major = min(major, NEWEST_NOVA_MAJOR)
    return dict(NOVA_MAJOR_RELEASES)[major]


def extend_release_list(known: Tuple[str, ...]) -> Tuple[str, ...]:
    """Append the releases missing from an older, chronological list.

    charms.openstack validates and orders charm classes by charmhelpers'
    OPENSTACK_RELEASES; charmhelpers lists are chronological and stop at
    some release, so appending ours, in order, keeps the order right.
    """
    missing = tuple(name for name in RELEASES if name not in known)
    return tuple(known) + missing


_UPSTREAM = re.compile(r'^(?:\d+:)?(?P<upstream>[0-9][0-9.]*)')


def upstream_version(package_version: str) -> str:
    """"22.2.1" from "3:22.2.1-0ubuntu1~cloud0": what operators read."""
    match = _UPSTREAM.match(package_version.strip())
    return match.group('upstream').rstrip('.') if match else package_version


def upstream_tuple(package_version: str) -> Tuple[int, ...]:
    """(22, 2, 1) from a Debian nova version, for comparisons; () when
    the version cannot be read."""
    match = _UPSTREAM.match(package_version.strip())
    if not match:
        return ()
    return tuple(int(part) for part in match.group('upstream').split('.')
                 if part)
