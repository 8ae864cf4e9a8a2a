"""The pipeline's start in AWS: the run's targets in the stack's S3 bucket, its execution in Step Functions."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from rightsizer.services.pipeline import Target


class S3PlanBucket:
    """Implements services.pipeline.PlanBucket: the targets as one JSON array, which the Distributed Map's ItemReader
    reads."""

    def __init__(self, client: Any, bucket: str) -> None:
        self._s3 = client
        self.bucket = bucket

    def put_targets(self, key: str, targets: Sequence[Target]) -> None:
        body = json.dumps([asdict(target) for target in targets]).encode()
        self._s3.put_object(Bucket=self.bucket, Key=key, Body=body)


class StepFunctionsPipeline:
    """Implements services.pipeline.PipelineExecutions: StartExecution, whose name makes a day's start happen once."""

    def __init__(self, client: Any, state_machine_arn: str) -> None:
        self._sfn = client
        self._arn = state_machine_arn

    def start(self, name: str, execution_input: Mapping[str, Any]) -> str | None:
        try:
            started = self._sfn.start_execution(
                stateMachineArn=self._arn, name=name, input=json.dumps(dict(execution_input))
            )
        except self._sfn.exceptions.ExecutionAlreadyExists:
            return None
        return str(started["executionArn"])
