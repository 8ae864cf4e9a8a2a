"""Integration fixtures."""

from tests.integration.pipeline_world import world
from tests.integration.resize_world import _mocked, aws, retry_waits, task_credentials

__all__ = ["_mocked", "aws", "retry_waits", "task_credentials", "world"]
