"""A deployed GPU Rightsizer stack, found as the AWS CLI would: `--stack NAME` in `--region` (or the default region).
Its settings are rebuilt from the stack's parameters and outputs through `settings.SETTINGS` (the table
template.yaml's environment is generated from), so the CLI judges scope, tags and the window as the deployed
functions do. `show`, `report`, `act --dry-run` and `doctor` read a deployment through `open_deployment`.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rightsizer.cli.errors import CommandFailed, UsageError
from rightsizer.cli.session import NO_REGION, aws_session, client_config, default_region
from rightsizer.settings import SETTINGS, ConfigError, SetBy, Settings

if TYPE_CHECKING:
    from rightsizer.adapters.aws.session import AwsSession
    from rightsizer.adapters.aws.store import DynamoStore


@contextmanager
def aws_errors(region: str | None) -> Iterator[None]:
    """AWS failures as one line and exit 1 (credentials, network, throttling, access, an answer that is not AWS's)."""
    from rightsizer.adapters.aws.session import AWS_FAILURES, describe_aws_error

    try:
        yield
    except AWS_FAILURES as error:
        raise CommandFailed(describe_aws_error(error, region)) from None


# The outputs template.yaml names otherwise than the variable they set: the SlackSecret's Ref is its ARN.
_OUTPUT_OF = {"SLACK_SECRET_NAME": "SlackSecretArn"}


def output_key(name: str) -> str:
    """The stack output that gives variable `name` its value: TABLE_NAME -> TableName, as template.yaml names most."""
    return _OUTPUT_OF.get(name) or "".join(part.capitalize() for part in name.split("_"))


@dataclass(frozen=True)
class Stack:
    """A GPU Rightsizer stack as CloudFormation describes it."""

    name: str
    region: str
    account_id: str
    parameters: Mapping[str, str]
    outputs: Mapping[str, str]

    def environment(self) -> dict[str, str]:
        """The functions' environment as template.yaml sets it: each parameter's variable, each STACK variable from
        its output (TABLE_NAME from TableName), the account and region."""
        env = {
            setting.name: self.parameters[setting.parameter]
            for setting in SETTINGS
            if setting.source is SetBy.PARAMETER and setting.parameter in self.parameters
        }
        env.update(
            (setting.name, self.outputs[output_key(setting.name)])
            for setting in SETTINGS
            if setting.source is SetBy.STACK and output_key(setting.name) in self.outputs
        )
        return {**env, "HOME_ACCOUNT_ID": self.account_id, "AWS_REGION": self.region}

    def settings(self) -> Settings:
        try:
            return Settings.from_env(self.environment())
        except ConfigError as error:
            raise UsageError(f"stack {self.name!r}: {error}") from None


def read_stack(session: AwsSession, name: str, region: str) -> Stack:
    """DescribeStacks: a usage error for a stack that does not exist or is no GPU Rightsizer stack."""
    from botocore.exceptions import ClientError

    client = session.client("cloudformation", region)
    try:
        with aws_errors(region):
            try:
                (described,) = client.describe_stacks(StackName=name)["Stacks"]
            except ClientError as error:
                if "does not exist" in str(error.response.get("Error", {}).get("Message", "")):
                    raise UsageError(
                        f"no stack {name!r} in {region}: check --stack and --region "
                        "(`aws cloudformation list-stacks` lists them)"
                    ) from None
                raise
    except ValueError:
        raise CommandFailed(f"DescribeStacks answered no single stack for {name!r} in {region}") from None
    outputs = {item["OutputKey"]: str(item.get("OutputValue", "")) for item in described.get("Outputs", [])}
    if not outputs.get("TableName"):
        raise UsageError(
            f"stack {name!r} in {region} has no TableName output: is it a GPU Rightsizer stack (template.yaml), "
            "and has it finished creating?"
        )
    parameters = {item["ParameterKey"]: str(item.get("ParameterValue", "")) for item in described.get("Parameters", [])}
    account = str(described.get("StackId", "")).split(":")[4:5] or [""]
    return Stack(str(described.get("StackName", name)), region, account[0], parameters, outputs)


@dataclass(frozen=True)
class Deployment:
    """What the stack verbs read: the session, the stack, its settings and its table."""

    session: AwsSession
    stack: Stack
    settings: Settings
    store: DynamoStore

    @property
    def where(self) -> str:
        return f"the {self.stack.name} stack ({self.stack.region})"


def open_deployment(args: argparse.Namespace) -> Deployment:
    from rightsizer.adapters.aws.store import DynamoStore

    regions = list(dict.fromkeys(args.region or []))
    if len(regions) > 1:
        raise UsageError("--stack takes one --region: the stack's")
    if getattr(args, "all_regions", False):
        raise UsageError("--all-regions analyses live; --stack reads a deployment: give one of them")
    session = aws_session(args)
    region = regions[0] if regions else default_region(session)
    if not region:
        raise UsageError(NO_REGION)
    stack = read_stack(session, args.stack, region)
    settings = stack.settings()
    # The table with the CLI's timeouts and attempts (a person is waiting), not the Lambdas' patient ones.
    dynamodb = session.boto3_session.resource("dynamodb", region_name=settings.home_region, config=client_config(args))
    return Deployment(session, stack, settings, DynamoStore(dynamodb.Table(settings.table_name)))
