"""Release registry, release selection and the per-hook charm instance.

Test double for ``charms_openstack.charm.core``.  Charm classes register
themselves here (through the metaclass) by the OpenStack release they
first support, and every hook works against one instance picked from
that registry.  The rules are kept identical to the real library because
the charm's behaviour on an upgraded cloud depends on which class wins.
"""
import functools
from typing import Any, Callable, Dict, Iterable, List, Optional

import charmhelpers.contrib.openstack.utils as os_utils

# unitdata key under which the stock release selector caches the release,
# so it is not worked out from packages again in every hook.
OPENSTACK_RELEASE_KEY = 'charmers.openstack-release-version'

# release name -> {package type: charm class}.  Module level on purpose:
# the tests (and the real library's users) reset it between runs.
_releases: Dict[str, Dict[str, type]] = {}

# The instance used for the rest of this hook, built on first use.
_singleton: Any = None

# Optional callable that tells which release this unit runs.
_release_selector_function: Optional[Callable[[], Optional[str]]] = None


def _singleton_instance() -> Any:
    """Build the hook's charm instance once, then keep handing it out.

    Shared by the metaclass property and ``provide_charm_instance`` so
    both always see the very same object.
    """
    global _singleton
    if _singleton is None:
        release = None
        if _release_selector_function is not None:
            release = _release_selector_function()
        _singleton = get_charm_instance(release=release, package_type='deb')
    return _singleton


class provide_charm_instance(object):
    """Give handlers the hook's charm instance, as decorator or ``with``.

    Lower-case because charm code uses it like a function.  It never
    swallows an exception raised by the code it wraps.
    """

    def __init__(self, f: Optional[Callable[..., Any]] = None) -> None:
        self.f = f
        if f is not None:
            functools.update_wrapper(self, f)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.f(_singleton_instance(), *args, **kwargs)

    def __enter__(self) -> Any:
        return _singleton_instance()

    def __exit__(self, *_: Any) -> bool:
        return False


def _sort_releases(releases: Iterable[str]) -> List[str]:
    """Order release names by OpenStack history, oldest first.

    Names that charmhelpers' comparator does not know make it raise
    KeyError; then, like the real library, fall back to alphabetical
    order (which is wrong past the 'zed' wrap-around, and that is what a
    charm extending the release list must be aware of).
    """
    names = list(releases)
    try:
        ranked = sorted(os_utils.CompareOpenStackReleases(n) for n in names)
    except KeyError:
        return sorted(names)
    return [str(r) for r in ranked]


def get_charm_instance(release: Optional[str] = None,
                       package_type: str = 'deb',
                       *args: Any, **kwargs: Any) -> Any:
    """Instantiate the class that handles ``release``.

    The chosen class is the one registered for the newest release that is
    not newer than ``release`` (``None`` picks the newest registered).
    Positions come from ``os_utils.OPENSTACK_RELEASES`` read at call time,
    so a charm that appends releases to that tuple is honoured.  The
    instance gets ``release`` exactly as passed, ``None`` included.
    """
    if not _releases:
        raise RuntimeError(
            "No OpenStackCharm classes have been registered")
    ordered = _sort_releases(_releases.keys())
    chosen = None
    if release is None:
        chosen = _releases[ordered[-1]][package_type]
    else:
        known = os_utils.OPENSTACK_RELEASES
        if release not in known:
            raise RuntimeError(
                "Release {} is not in os_utils.OPENSTACK_RELEASES"
                .format(release))
        wanted = known.index(release)
        if wanted < known.index(ordered[0]):
            raise RuntimeError(
                "Release {} is older than any this charm supports; the "
                "oldest supported is {}".format(release, ordered[0]))
        for candidate in reversed(ordered):
            if (known.index(candidate) <= wanted and
                    package_type in _releases[candidate]):
                chosen = _releases[candidate][package_type]
                break
    if chosen is None:
        raise RuntimeError(
            "No {} charm class handles release {}"
            .format(package_type, release))
    return chosen(release=release, *args, **kwargs)


def register_os_release_selector(
        f: Callable[[], Optional[str]]) -> Callable[[], Optional[str]]:
    """Let the charm decide how the unit's release is found.

    Only one selector may exist per hook run: two would silently fight
    over which class handles the hook, so a second one is an error.
    """
    global _release_selector_function
    if _release_selector_function is not None:
        raise RuntimeError(
            "A release selector is already registered; refusing {}"
            .format(f.__name__))
    _release_selector_function = f
    return f


class BaseOpenStackCharmMeta(type):
    """Register each concrete charm class under the release it handles.

    Only what a class declares in its own body counts, so a subclass can
    never inherit its parent's slot in the registry by accident.
    """

    def __init__(cls, name: str, mro: tuple,
                 members: Dict[str, Any]) -> None:
        super().__init__(name, mro, members)
        if members.get('abstract_class', False):
            return
        if 'release' not in members:
            raise RuntimeError(
                "Charm class '{}' must set 'release' in its own body (the "
                "first OpenStack release it handles)".format(name))
        package_type = members.get('package_type', 'deb')
        if package_type not in ('deb', 'snap'):
            raise RuntimeError(
                "Charm class '{}': package_type {!r} is neither 'deb' nor "
                "'snap'".format(name, package_type))
        release = members['release']
        if release not in os_utils.OPENSTACK_RELEASES:
            raise RuntimeError(
                "Charm class '{}': release {!r} is not in "
                "os_utils.OPENSTACK_RELEASES".format(name, release))
        by_type = _releases.get(release, {})
        if package_type in by_type:
            raise RuntimeError(
                "Release {} ({}) is claimed by both {} and {}".format(
                    release, package_type, by_type[package_type].__name__,
                    name))
        _releases.setdefault(release, {})[package_type] = cls

    @property
    def singleton(cls) -> Any:
        """The hook's charm instance, whichever class it is asked from."""
        return _singleton_instance()
