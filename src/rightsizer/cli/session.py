"""How the CLI reaches AWS, as the AWS CLI does: the session of --profile with a person's timeouts, the default region,
the regions and member-account role ARNs a command line names, checked before any AWS call.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

from rightsizer.cli.errors import UsageError
from rightsizer.settings import environment_region

if TYPE_CHECKING:
    from botocore.config import Config

    from rightsizer.adapters.aws.session import AwsSession


# An IAM role ARN, as IAM and STS's AssumeRole accept it: arn:<partition>:iam::<account>:role/<path/><name>, the
# account 12 ASCII digits, the path "/" or "/.../" (at most 512 printable ASCII characters), the name 1-64 letters,
# digits and +=,.@_- (IAM's CreateRole limits).
ROLE_ARN_FORM = "arn:aws:iam::<12-digit account>:role/<name>"
_ACCOUNT_ID = re.compile(r"[0-9]{12}")
_ROLE_NAME = re.compile(r"[A-Za-z0-9+=,.@_-]{1,64}")
_ROLE_PATH = re.compile(r"/(?:[\x21-\x7e]+/)?")
ROLE_NAME_MAX, ROLE_PATH_MAX = 64, 512


@cache
def known_partitions() -> frozenset[str]:
    """The AWS partitions botocore's bundled endpoint data knows (aws, aws-cn, aws-us-gov, aws-iso, ...)."""
    import botocore.session

    return frozenset(botocore.session.Session().get_available_partitions())


def role_arn_problem(arn: str) -> str | None:
    """What is wrong with `arn` as the ARN of an IAM role (None: nothing), in a few words."""
    parts = arn.split(":", 5)
    if len(parts) != 6 or parts[0] != "arn":
        return "not an ARN"
    _, partition, service, region, account, resource = parts
    if partition not in known_partitions():
        return f"unknown partition {partition!r} (known: {', '.join(sorted(known_partitions()))})"
    if service != "iam":
        return f"the service is {service!r}, not 'iam'"
    if region:
        return f"IAM ARNs have no region, this one has {region!r}"
    if not _ACCOUNT_ID.fullmatch(account):
        return f"the account id {account!r} is not 12 digits (0-9)"
    kind, slash, rest = resource.partition("/")
    if kind != "role" or not slash:
        return f"{resource!r} is not a role (expected role/<name> or role/<path>/<name>)"
    before, _, name = f"/{rest}".rpartition("/")
    path = f"{before}/"
    if not name:
        return "the role name is missing"
    if len(name) > ROLE_NAME_MAX:
        return f"the role name is {len(name)} characters long, IAM allows at most {ROLE_NAME_MAX}"
    if not _ROLE_NAME.fullmatch(name):
        return f"the role name {name!r} has characters IAM does not allow (only letters, digits and +=,.@_-)"
    if len(path) > ROLE_PATH_MAX:
        return f"the role path is {len(path)} characters long, IAM allows at most {ROLE_PATH_MAX}"
    if not _ROLE_PATH.fullmatch(path):
        return f"the role path {path!r} has characters IAM does not allow (only printable ASCII, no spaces)"
    return None


def checked_role_arn(arn: str) -> str:
    problem = role_arn_problem(arn)
    if problem is not None:
        raise UsageError(f"not an IAM role ARN: {arn!r} in --account-role-arn: {problem} (expected {ROLE_ARN_FORM})")
    return arn


def aws_session(args: argparse.Namespace) -> AwsSession:
    """The AWS session of --profile with the CLI's quick timeouts; a usage error for an unknown profile or a malformed
    AWS config or credentials file (named)."""
    from botocore.exceptions import ConfigParseError, ProfileNotFound

    from rightsizer.adapters.aws.session import AwsSession, describe_aws_error

    try:
        session = AwsSession.for_profile(args.profile, client_config(args))
        session.check_files()
        session.region_name  # noqa: B018 -- reading the profile raises ProfileNotFound here, not in the middle
    except (ProfileNotFound, ConfigParseError) as error:
        raise UsageError(describe_aws_error(error)) from None
    return session


def client_config(args: argparse.Namespace) -> Config:
    """botocore's config for a person waiting: --cli-connect-timeout and --cli-read-timeout, 3 attempts."""
    from rightsizer.adapters.aws.session import interactive_config

    timeouts = {"connect_timeout": args.cli_connect_timeout, "read_timeout": args.cli_read_timeout}
    return interactive_config(**{name: value for name, value in timeouts.items() if value is not None})


def default_region(session: AwsSession) -> str | None:
    """The region of AWS_REGION, AWS_DEFAULT_REGION or the profile."""
    return environment_region() or session.region_name


NO_REGION = (
    "no AWS region: pass --region, set AWS_REGION or AWS_DEFAULT_REGION, "
    "or add a region to the profile (aws configure set region us-east-1)"
)


def checked_regions(regions: Sequence[str], known: frozenset[str]) -> tuple[str, ...]:
    unknown = [region for region in regions if region not in known]
    if unknown:
        raise UsageError(f"unknown region {', '.join(unknown)} (for example: us-east-1, eu-west-1)")
    return tuple(regions)
