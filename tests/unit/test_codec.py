"""The storage codec reads what older versions wrote."""

from __future__ import annotations

from rightsizer.adapters.codec import from_jsonable, to_jsonable
from rightsizer.domain.models import DeviceUsage, UsageSummary
from tests.factories import device, usage


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
