"""What stopping a host risks besides downtime (its instance store, a scarce type's restart): said by every rule
whose advice stops the host (idle, held unused, a schedule) and by a resize, which stops it too.
"""

from __future__ import annotations

from rightsizer.domain.facts.measured import Measured
from rightsizer.domain.models.hosts import InstanceTypeSpec
from rightsizer.domain.rules.draft import Draft


def with_stop_risks(m: Measured, draft: Draft) -> Draft:
    """What stopping this host costs besides downtime, in the reasons and, briefly, in its risks. A type no longer
    offered is `no_longer_offered`'s to say (for every finding); a scarce type's restart is confirmed apart, where no
    capacity reservation holds it (services.approvals.needs_capacity_confirmation)."""
    draft = instance_store_risk(m.spec, draft)
    if m.scarce:
        draft = draft.noting(
            f"{m.spec.family} capacity is scarce: once stopped, a start can fail with InsufficientInstanceCapacity "
            "(a Capacity Reservation or Capacity Block keeps it available)"
        )
    return draft


def instance_store_risk(spec: InstanceTypeSpec, draft: Draft) -> Draft:
    if not spec.instance_storage_gb:
        return draft
    return draft.risking(
        f"its {spec.instance_storage_gb:,} GB of instance store (local NVMe) is wiped on every stop: keep data on EBS "
        "or S3",
        f"its {spec.instance_storage_gb:,} GB instance store (local NVMe) is wiped when it stops",
    )


def may_not_restart(m: Measured) -> bool:
    return m.scarce or m.facts.catalog.is_offered(m.spec.instance_type) is False
