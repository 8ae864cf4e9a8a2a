"""The demo's stack as CloudFormation describes it, in moto.

`sam deploy` creates the stack's resources through CloudFormation. moto's CloudFormation cannot build that stack: it
has no Secrets Manager, EventBridge Scheduler or Lambda URL resources, and no SAM transform. So the demo creates each
resource through its own service's API from template.yaml's definitions (demo/serverless.py), then records the stack
here as CloudFormation would describe it once deployed: its parameters and outputs (DescribeStacks) and every resource's
logical and physical id (ListStackResources, DescribeStackResources), written into moto's store as seed.py writes
metrics. What reads the stack (`rightsizer report|show|act|doctor --stack`) then reads it over the API, as from AWS.
Nothing in src/ knows about this module.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace

import boto3

# moto needs one resource to create a stack; this type it records and creates nothing for (its NULL_MODELS).
_PLACEHOLDER = {"Placeholder": {"Type": "AWS::CloudFormation::WaitConditionHandle"}}


@dataclass(frozen=True)
class StackResource:
    """One resource of the stack, as ListStackResources names it."""

    logical_id: str
    resource_type: str  # after the SAM transform: AWS::Lambda::Function, AWS::Scheduler::Schedule, ...
    physical_id: str  # what CloudFormation's Ref returns: a function's name, a state machine's ARN, ...


def register(
    name: str,
    region: str,
    parameters: Mapping[str, str],
    outputs: Mapping[str, str],
    resources: Sequence[StackResource],
) -> str:
    """Create stack `name` with these parameters and outputs, listing `resources` (already created); its id."""
    from moto.cloudformation.models import cloudformation_backends

    body = {
        "Parameters": {key: {"Type": "String"} for key in parameters},
        "Resources": _PLACEHOLDER,
        "Outputs": {key: {"Value": value} for key, value in outputs.items()},
    }
    with warnings.catch_warnings():  # moto warns that it creates nothing for the placeholder: as intended
        warnings.simplefilter("ignore", UserWarning)
        stack_id = str(
            boto3.client("cloudformation", region_name=region).create_stack(
                StackName=name,
                TemplateBody=json.dumps(body),
                Parameters=[{"ParameterKey": key, "ParameterValue": value} for key, value in parameters.items()],
            )["StackId"]
        )
    account = stack_id.split(":")[4]
    recorded = cloudformation_backends[account][region].get_stack(stack_id).resource_map
    # moto lists the resources its map holds (the template's, each as created): the demo's instead.
    recorded._resource_json_map = {item.logical_id: {"Type": item.resource_type} for item in resources}
    recorded._parsed_resources.update(
        {
            item.logical_id: SimpleNamespace(
                logical_resource_id=item.logical_id,
                physical_resource_id=item.physical_id,
                cf_resource_type=item.resource_type,
            )
            for item in resources
        }
    )
    return stack_id
