"""preview-config: the plan with other option values, before they are set.

The same decide() the hooks run, twice on one reading of the host: with
the options as they are, and with the values to preview in their place.
Pure: what it returns is all it does, so operators can run it on one
unit of each hardware group before `juju config`.
"""
import json
from typing import Any, Dict, List, Mapping, NamedTuple, Optional

from nvidia_vgpu.hook_plan import decide, facts as hook_facts
from nvidia_vgpu.mig import layout as mig_layout, plan as mig_plan
from nvidia_vgpu.nova import mappings, resource_classes

# The options it previews: the action's parameters have their names.
OPTIONS = (mappings.OPTION, mig_layout.OPTION, resource_classes.OPTION)


class Preview(NamedTuple):
    """What the unit would do and show with the previewed values."""

    refused: Optional[str]           # why the values would be refused
    results: Dict[str, str]          # the action's results


def with_values(config: Mapping[str, Any],
                values: Mapping[str, Any]) -> Dict[str, Any]:
    """The options, with the previewed values in place of theirs."""
    return dict(config, **{option: values[option] for option in OPTIONS
                           if values.get(option) is not None})


def reading(config: Mapping[str, Any], values: Mapping[str, Any],
            unit: hook_facts.UnitState) -> decide.Reading:
    """What the host is read for: enough for both plans."""
    now = decide.reading(config, unit)
    then = decide.reading(with_values(config, values), unit)
    return decide.Reading(now.names or then.names, now.mig or then.mig)


def preview(facts: hook_facts.HookFacts, config: Mapping[str, Any],
            values: Mapping[str, Any],
            unit: hook_facts.UnitState) -> Preview:
    """The plan now and with the values; what would change."""
    now = decide.decide(facts, config, unit)
    then = decide.decide(facts, with_values(config, values), unit)
    refused = refusal(then)
    if refused:
        return Preview(refused, {})
    return Preview(None, {
        'nova-config': json.dumps(then.nova.sections, sort_keys=True),
        'changes': json.dumps(decide.changed_gpus(now, then),
                              sort_keys=True),
        'waits': json.dumps(waits(then), sort_keys=True),
        'status': shown(then)})


def refusal(plan: decide.HookPlan) -> Optional[str]:
    """Why the options would be refused (the unit's blocked status), or
    None: mig-layout unreadable or impossible on a GPU here, or the
    mappings or the resource class refused on this host."""
    if plan.layout_problem:
        return plan.layout_problem
    if plan.mig.refused:
        return mig_plan.blocked_message(plan.mig)
    problem = plan.nova.problem
    if problem and problem[0] == 'blocked':
        return problem[1]
    return None


def waits(plan: decide.HookPlan) -> List[Dict[str, Any]]:
    """What the change would wait for: per GPU (or type, for a class),
    the guests, and which change."""
    found = [{'gpu': held.gpu, 'guests': list(held.guests),
              'change': mappings.OPTION} for held in plan.nova.held]
    found += [{'type': held.vgpu_type, 'guests': list(held.guests),
               'change': resource_classes.OPTION}
              for held in plan.nova.class_held]
    found += [{'gpu': gpu, 'guests': list(guests),
               'change': mig_layout.OPTION}
              for gpu, guests in sorted(plan.mig.held.items())]
    return found


def shown(plan: decide.HookPlan) -> str:
    """The status the unit would show ("state: message"), as far as the
    plan decides it (charms.openstack's own paused and services checks
    come on top, as in every hook)."""
    return '{}: {}'.format(*decide.shown(plan.status))
