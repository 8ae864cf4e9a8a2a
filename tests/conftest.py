"""Shared fixtures. Every test runs with fake AWS credentials and no real endpoint."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.environment import use_fake_aws


@pytest.fixture(autouse=True)
def aws_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fake credentials, a default region, and nothing that could reach a real AWS endpoint. A Lambda
    container's wiring (settings, clients) is built once per container: here, once per test."""
    from rightsizer import bootstrap

    use_fake_aws(monkeypatch)
    bootstrap.lambda_wiring.cache_clear()
    yield
    bootstrap.lambda_wiring.cache_clear()


@pytest.fixture
def moto_aws() -> Iterator[None]:
    from moto import mock_aws

    with mock_aws():
        yield
