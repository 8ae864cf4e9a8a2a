"""--account-role-arn: a malformed role ARN is a usage error (exit 2, one line naming the problem), before any AWS
call; every well-formed IAM role ARN of a partition botocore knows passes."""

from __future__ import annotations

from io import StringIO

import pytest

from rightsizer.cli import main as cli_main
from rightsizer.cli.errors import EXIT_USAGE
from rightsizer.cli.session import known_partitions, role_arn_problem

GOOD = (
    "arn:aws:iam::444455556666:role/GpuRightsizerCollector",
    "arn:aws-cn:iam::444455556666:role/GpuRightsizerCollector",
    "arn:aws-us-gov:iam::444455556666:role/ops/gpu/GpuRightsizerCollector",
    "arn:aws-iso:iam::000000000000:role/a",
    "arn:aws-iso-b:iam::123456789012:role/service-role/Name+=,.@_-1",
    "arn:aws:iam::123456789012:role/" + "n" * 64,
    "arn:aws:iam::123456789012:role/" + "p" * 510 + "/name",  # a path of 512 characters
)
BAD = {
    "no ARN": ("GpuRightsizerCollector", "not an ARN"),
    "too few fields": ("arn:aws:iam::444455556666", "not an ARN"),
    "one-digit account": ("arn:aws:iam::1:role/Collector", "the account id '1' is not 12 digits"),
    "eleven digits": ("arn:aws:iam::44445555666:role/Collector", "the account id '44445555666' is not 12 digits"),
    "thirteen digits": ("arn:aws:iam::4444555566667:role/Collector", "is not 12 digits"),
    "superscripts": ("arn:aws:iam::²³²³²³²³²³²³:role/Collector", "the account id '²³²³²³²³²³²³' is not 12 digits"),
    "fullwidth digits": ("arn:aws:iam::１２３４５６７８９０１２:role/Collector", "is not 12 digits"),
    "trailing newline": ("arn:aws:iam::444455556666\n:role/Collector", "is not 12 digits"),
    "empty account": ("arn:aws:iam:::role/Collector", "the account id '' is not 12 digits"),
    "unknown partition": ("arn:awz:iam::444455556666:role/Collector", "unknown partition 'awz' (known: aws, aws-cn"),
    "not iam": ("arn:aws:sts::444455556666:role/Collector", "the service is 'sts', not 'iam'"),
    "a region": ("arn:aws:iam:us-east-1:444455556666:role/Collector", "IAM ARNs have no region"),
    "a user": ("arn:aws:iam::444455556666:user/alice", "'user/alice' is not a role"),
    "no slash": ("arn:aws:iam::444455556666:role", "'role' is not a role"),
    "no name": ("arn:aws:iam::444455556666:role/", "the role name is missing"),
    "path without name": ("arn:aws:iam::444455556666:role/ops/", "the role name is missing"),
    "a space": ("arn:aws:iam::444455556666:role/Gpu Collector", "the role name 'Gpu Collector' has characters"),
    "a non-ASCII name": ("arn:aws:iam::444455556666:role/Rôle", "has characters IAM does not allow"),
    "long name": ("arn:aws:iam::444455556666:role/" + "n" * 65, "65 characters long, IAM allows at most 64"),
    "empty path segment": ("arn:aws:iam::444455556666:role//Collector", "the role path '//' has characters"),
    "space in path": ("arn:aws:iam::444455556666:role/my ops/Collector", "the role path '/my ops/' has characters"),
    "long path": (
        "arn:aws:iam::444455556666:role/" + "p" * 511 + "/name",
        "513 characters long, IAM allows at most 512",
    ),
}


@pytest.mark.parametrize("arn", GOOD)
def test_well_formed_role_arns_pass(arn: str) -> None:
    assert role_arn_problem(arn) is None


@pytest.mark.parametrize(("arn", "problem"), BAD.values(), ids=list(BAD))
def test_a_malformed_role_arn_exits_2_with_one_line_naming_the_problem(arn: str, problem: str) -> None:
    out, err = StringIO(), StringIO()

    code = cli_main.main(
        ["analyze", "--region", "us-east-1", "--account-role-arn", arn, "--no-progress"], stdout=out, stderr=err
    )

    assert code == EXIT_USAGE == 2
    assert out.getvalue() == ""
    (line,) = err.getvalue().splitlines()
    assert line.startswith(f"rightsizer: error: not an IAM role ARN: {arn!r} in --account-role-arn: ")
    assert problem in line, line
    assert "(expected arn:aws:iam::<12-digit account>:role/<name>)" in line


def test_every_role_arn_is_checked_not_only_the_first() -> None:
    err = StringIO()

    code = cli_main.main(
        [
            "analyze",
            "--account-role-arn",
            "arn:aws:iam::444455556666:role/Collector",
            "--account-role-arn",
            "arn:aws:iam::1:role/Collector",
        ],
        stdout=StringIO(),
        stderr=err,
    )

    assert code == 2 and "'arn:aws:iam::1:role/Collector'" in err.getvalue()


def test_the_partitions_are_botocores() -> None:
    assert {"aws", "aws-cn", "aws-us-gov", "aws-iso", "aws-iso-b"} <= known_partitions()


@pytest.mark.parametrize("account", ["1", "44445555666", "²³²³²³²³²³²³", "１２３４５６７８９０１２"])
def test_the_deployed_account_role_arns_are_held_to_twelve_ascii_digits_too(account: str) -> None:
    # ACCOUNT_ROLE_ARNS (the stack's AccountRoleArns) is read by the pipeline, not the CLI: str.isdigit() let
    # superscripts and 11 digits through there.
    from rightsizer.services.pipeline import role_account
    from rightsizer.settings import ConfigError

    with pytest.raises(ConfigError, match="not an IAM role ARN"):
        role_account(f"arn:aws:iam::{account}:role/GpuRightsizerCollector")
    assert role_account("arn:aws:iam::444455556666:role/GpuRightsizerCollector") == "444455556666"
