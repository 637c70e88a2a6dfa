"""What a hook decides from: the host as read once, what the unit
remembers, and what Juju says of the relations.

Records only. The apply side (nvidia_vgpu/apply/context.py) reads them;
decide.py turns them and the options into the hook's plan; a test writes
them by hand.
"""
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

from nvidia_vgpu import model


class UnitState(NamedTuple):
    """What the unit remembers between hooks (unitdata, flags, records)."""

    installed: Optional[model.Installed] = None
    software_problem: Optional[str] = None
    # {package, version} of an attached revision that waits for guests
    waiting_software: Optional[Dict[str, str]] = None
    published_mappings: Optional[model.Mappings] = None
    published_classes: Optional[Dict[str, str]] = None
    # {target} while a series upgrade waits for guests
    series_upgrade_held: Optional[Dict[str, Optional[str]]] = None
    # GPU -> the GPU instances the MIG boot units make (their record)
    mig_record: Mapping[str, List[str]] = {}
    paused: bool = False


class Relations(NamedTuple):
    """What Juju says of the relations this hook."""

    # what this unit has set on each nova-vgpu relation, decoded (None:
    # not related)
    nova_vgpu: Optional[Tuple[Mapping[str, Any], ...]] = None
    cos_agent: bool = False      # grafana-agent / the collector related
    nrpe: bool = False           # the nrpe subordinate related
    juju_version: Optional[str] = None


class Detail(NamedTuple):
    """What the health report and monitoring add to the hook's reading:
    systemd's word for the vGPU Manager's services and the charm's boot
    units, the GPUs' hardware faults, and how this unit is named to
    Nagios and to an operator."""

    services: Mapping[str, str] = {}
    boot_units: Mapping[str, str] = {}
    unit: str = ''             # "<nagios host context>:<unit>", or the unit
    health_command: str = ''   # how an operator runs vgpu-health here
    # this boot's GPU hardware faults (None: no GPU, or no driver to ask)
    gpu_faults: Optional[model.GpuFaultFacts] = None


class HookFacts(NamedTuple):
    """The host and Juju as the hook found them."""

    host: model.HostSnapshot
    relations: Relations = Relations()
    update_status: bool = False  # the periodic hook
    # read where something reports the host's health (monitoring related,
    # or the vgpu-health action); None elsewhere
    detail: Optional[Detail] = None
