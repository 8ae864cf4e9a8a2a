"""The storage codec reads what older versions wrote."""

from __future__ import annotations

from demo.fleet import noisy

from rightsizer.adapters.codec import from_jsonable, to_jsonable
from rightsizer.domain.models.usage import DeviceUsage, UsageSummary
from tests.expert_fleet import mib
from tests.factories import device, usage
from tests.unit.shapes import Slice
from tests.unit.shapes import summary as shapes_summary
from tests.unit.test_mig_slices import partitioned


def test_a_stored_device_usage_with_a_field_since_removed_still_decodes() -> None:
    # Versions that collected nvidia_smi_utilization_memory stored its p95 with every GPU.
    stored = {
        "index": "0",
        "utilization": None,
        "utilization_peak": 12.0,
        "memory_used_peak_mib": 5000.0,
        "memory_total_mib": 23028.0,
        "memory_activity_p95": 19.0,
    }

    decoded = from_jsonable(DeviceUsage, stored)

    assert decoded == DeviceUsage(
        index="0", utilization=None, utilization_peak=12.0, memory_used_peak_mib=5000.0, memory_total_mib=23028.0
    )


def test_a_stored_usage_summary_from_an_older_version_decodes_to_the_same_summary() -> None:
    summary = usage([device("0", 40.0, 5000.0, 23028.0), device("1", 10.0, 1000.0, 23028.0)])
    stored = to_jsonable(summary)
    for gpu in stored["devices"]:
        gpu["memory_activity_p95"] = 7.5

    assert from_jsonable(UsageSummary, stored) == summary


def test_a_summary_with_mig_slices_survives_the_store() -> None:
    # The pipeline stores each host's summary between collect and analyze: a MIG GPU's slices go with it.
    work = partitioned(Slice(0, "2", "3g.20gb", noisy(9, 1), mib(3 * 1024.0, 20)))
    summary = shapes_summary(work)
    assert summary.devices[0].slices

    assert from_jsonable(UsageSummary, to_jsonable(summary)) == summary
