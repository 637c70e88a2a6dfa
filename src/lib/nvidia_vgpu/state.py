"""What the unit remembers between hooks (Juju's unitdata), in one place.

The keys are kept across charm upgrades: renaming one loses what an
upgraded unit knew (the installed revision, what Nova was last given).
"""
from typing import Any, Dict, Optional

import charmhelpers.core.unitdata as unitdata

from nvidia_vgpu import model

# {sha256, package, version, services} of what the charm installed.
INSTALLED_KEY = 'nvidia-vgpu.installed'
# Why the attached software could not be installed (or None).
PROBLEM_KEY = 'nvidia-vgpu.software-problem'
# {package, version} of an attached revision that waits for guests.
WAITING_SOFTWARE_KEY = 'nvidia-vgpu.software-waits'
# The host mappings Nova was last given (what a held GPU keeps).
PUBLISHED_KEY = 'nvidia-vgpu.published-mappings'
# The resource class each of those types was given.
PUBLISHED_CLASSES_KEY = 'nvidia-vgpu.published-classes'
# Why this host's nova cannot have per-profile classes now (or None), for
# list-vgpu-types, which runs without the release's charm class.
CLASS_REFUSAL_KEY = 'nvidia-vgpu.resource-class-refusal'
# dpkg's answers, with the stamp of the database they came from.
DPKG_VERSIONS_KEY = 'nvidia-vgpu.dpkg-versions'
# {target}: a series upgrade was prepared without stopping the vGPU
# Manager (guests used vGPUs); target as the hook named it, or None.
SERIES_UPGRADE_HELD_KEY = 'nvidia-vgpu.series-upgrade-held'


def installed_software() -> Optional[model.Installed]:
    return model.Installed.from_dict(unitdata.kv().get(INSTALLED_KEY))


def set_installed_software(installed: model.Installed) -> None:
    unitdata.kv().set(INSTALLED_KEY, installed.to_dict())


def software_problem() -> Optional[str]:
    return unitdata.kv().get(PROBLEM_KEY)


def set_software_problem(problem: Optional[str]) -> None:
    if problem:
        unitdata.kv().set(PROBLEM_KEY, problem)
    else:
        unitdata.kv().unset(PROBLEM_KEY)


def waiting_software() -> Optional[Dict[str, str]]:
    """{package, version} of the revision that waits for guests."""
    return unitdata.kv().get(WAITING_SOFTWARE_KEY)


def set_waiting_software(deb: Optional[model.DebInfo]) -> None:
    if deb is None:
        unitdata.kv().unset(WAITING_SOFTWARE_KEY)
    else:
        unitdata.kv().set(WAITING_SOFTWARE_KEY, {'package': deb.package,
                                                 'version': deb.version})


def published_mappings() -> Optional[model.Mappings]:
    return unitdata.kv().get(PUBLISHED_KEY)


def published_classes() -> Optional[Dict[str, str]]:
    return unitdata.kv().get(PUBLISHED_CLASSES_KEY)


def record_published(host_mappings: model.Mappings,
                     classes: Dict[str, str]) -> None:
    unitdata.kv().set(PUBLISHED_KEY, host_mappings)
    unitdata.kv().set(PUBLISHED_CLASSES_KEY, classes)


def class_refusal() -> Optional[str]:
    return unitdata.kv().get(CLASS_REFUSAL_KEY)


def set_class_refusal(refusal: Optional[str]) -> None:
    unitdata.kv().set(CLASS_REFUSAL_KEY, refusal)


def dpkg_versions() -> Any:
    return unitdata.kv().get(DPKG_VERSIONS_KEY)


def set_dpkg_versions(remembered: Any) -> None:
    unitdata.kv().set(DPKG_VERSIONS_KEY, remembered)


def series_upgrade_held() -> Optional[Dict[str, Optional[str]]]:
    """{target} while a series upgrade waits for guests, else None."""
    return unitdata.kv().get(SERIES_UPGRADE_HELD_KEY)


def set_series_upgrade_held(held: bool, target: Optional[str] = None
                            ) -> None:
    if held:
        unitdata.kv().set(SERIES_UPGRADE_HELD_KEY, {'target': target})
    else:
        unitdata.kv().unset(SERIES_UPGRADE_HELD_KEY)
