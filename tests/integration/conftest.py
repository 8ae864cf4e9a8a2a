"""Integration fixtures."""

from tests.integration.pipeline_world import world

__all__ = ["world"]
