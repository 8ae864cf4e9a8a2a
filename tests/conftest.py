"""Shared fixtures. Every test runs with fake AWS credentials and no real endpoint."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.environment import use_fake_aws


@pytest.fixture(autouse=True)
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials, a default region, and nothing that could reach a real AWS endpoint."""
    use_fake_aws(monkeypatch)


@pytest.fixture
def moto_aws() -> Iterator[None]:
    from moto import mock_aws

    with mock_aws():
        yield
