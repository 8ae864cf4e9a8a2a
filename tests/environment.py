"""The environment every test runs in: fake credentials, a default region, no real endpoint."""

from __future__ import annotations

import pytest

UNSET = ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN")
FAKE_AWS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "POWERTOOLS_METRICS_NAMESPACE": "GpuRightsizerTest",
    "POWERTOOLS_SERVICE_NAME": "gpu-rightsizer",
    "POWERTOOLS_TRACE_DISABLED": "true",
}


def use_fake_aws(patch: pytest.MonkeyPatch, **extra: str) -> None:
    """Apply the test environment (plus `extra`) through `patch`, which undoes it afterwards."""
    for name in UNSET:
        patch.delenv(name, raising=False)
    for name, value in {**FAKE_AWS, **extra}.items():
        patch.setenv(name, value)
