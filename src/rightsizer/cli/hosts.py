"""Finding one host for `show` and `act --dry-run`: by instance or resource id, else by its Name tag, in a live
analysis or in what a deployment stored; close names (or the regions not analysed) when nothing matches.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable, Sequence

from rightsizer.cli.deployment import Deployment, aws_errors
from rightsizer.cli.errors import CommandFailed
from rightsizer.domain.models.advice import Recommendation
from rightsizer.services.formatting import printable


def find_host(
    recommendations: Sequence[Recommendation],
    query: str,
    where: str,
    elsewhere: Callable[[str], list[str]] | None = None,
) -> Recommendation:
    """The one recommendation whose host has this id (any case) or Name tag; CommandFailed naming close names, or the
    regions not analysed where `elsewhere` finds the host."""
    by_id = [rec for rec in recommendations if rec.instance_id.lower() == query.lower()]
    named = [rec for rec in recommendations if rec.instance_name == query] or [
        rec for rec in recommendations if rec.instance_name.lower() == query.lower() and rec.instance_name
    ]
    found = by_id or named
    if len(found) == 1:
        return found[0]
    if found:
        ids = ", ".join(rec.instance_id for rec in found[:10])
        raise CommandFailed(f"{len(found)} hosts are named {query!r} in {where}: {ids}; give an instance id")
    raise CommandFailed(f"no recommendation for {query!r} in {where}{_close(recommendations, query, elsewhere)}")


def _close(
    recommendations: Sequence[Recommendation], query: str, elsewhere: Callable[[str], list[str]] | None = None
) -> str:
    names = {name for rec in recommendations for name in (rec.instance_id, rec.instance_name) if name}
    close = difflib.get_close_matches(query, sorted(names), n=5, cutoff=0.6)
    if close:
        return f"; did you mean {', '.join(printable(name) for name in close)}?"
    regions = elsewhere(query) if elsewhere is not None else []
    if regions:
        return (
            f"; it runs in {', '.join(regions)}, which was not analysed: add --region {regions[0]}, or use "
            "--all-regions"
        )
    return (
        "; it may not be a GPU host, or it runs in an account or region that is not analysed (--all-regions analyses "
        "every region with GPU hosts; --account-role-arn another account)"
    )


def stored_host(deployment: Deployment, query: str) -> Recommendation:
    """The latest advice the bot stored for the host, read by key as `/gpu show` does (instance or resource id);
    a Name tag, or nothing found by key, reads the latest recommendations and matches names."""
    store = deployment.store
    with aws_errors(deployment.stack.region):
        for key in dict.fromkeys((query, query.lower())):
            rec = store.latest_for_instance(key)
            if rec is not None:
                return rec
        latest = store.latest_recommendations()
    if not latest:
        raise CommandFailed(no_report(deployment))
    return find_host(latest, query, deployment.where)


def no_report(deployment: Deployment) -> str:
    pipeline = deployment.stack.outputs.get("PipelineStateMachineArn", "<PipelineStateMachineArn>")
    return (
        f"{deployment.where} has no report yet: its daily pipeline has not ranked a run (it runs on its schedule; "
        f"`aws stepfunctions start-execution --state-machine-arn {pipeline}` starts one now)"
    )


def analysed(args: argparse.Namespace) -> str:
    """Where a live analysis looked, for a message that found nothing."""
    if args.all_regions:
        return "every region with accelerated hosts"
    return ", ".join(dict.fromkeys(args.region)) if args.region else "the default region"
