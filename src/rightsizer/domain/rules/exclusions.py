"""Gates for hosts that are reported but not analysed: opted out, reserved capacity, not running, an instance-store
root.
"""

from __future__ import annotations

from rightsizer.domain.facts.host import Facts
from rightsizer.domain.models import Finding
from rightsizer.domain.rules.draft import Draft


def opted_out(facts: Facts) -> Draft | None:
    tag = facts.policy.opt_out_tag
    if tag not in facts.instance.tags:
        return None
    value = facts.instance.tags[tag]
    return Draft(Finding.EXCLUDED, (f"opted out by tag {tag}" + (f"={value!r}" if value else ""),))


def reserved_capacity(facts: Facts) -> Draft | None:
    lifecycle = facts.instance.lifecycle
    if lifecycle not in ("capacity-block", "scheduled"):
        return None
    return Draft(Finding.EXCLUDED, (f"{lifecycle} instance: capacity is reserved for this type",))


def not_running(facts: Facts) -> Draft | None:
    if facts.instance.is_running:
        return None
    state = facts.instance.state
    return Draft(Finding.EXCLUDED, (f"{state}: reported, not resized (a stopped host costs no compute)",))


def instance_store_root(facts: Facts) -> Draft | None:
    if facts.instance.root_device_type == "ebs":
        return None
    return Draft(Finding.EXCLUDED, ("instance-store root volume: the host cannot be stopped, so not resized",))
