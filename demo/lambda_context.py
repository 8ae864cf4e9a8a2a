"""A Lambda context for invoking handlers in-process (what Powertools and Bolt read from it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class FakeLambdaContext:
    function_name: str = "gpu-rightsizer-test"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:gpu-rightsizer-test"
    aws_request_id: str = "00000000-0000-4000-8000-000000000000"
    function_version: str = "$LATEST"
    log_group_name: str = "/aws/lambda/gpu-rightsizer-test"
    log_stream_name: str = "2026/12/01/[$LATEST]test"

    def get_remaining_time_in_millis(self) -> int:
        return 300_000
