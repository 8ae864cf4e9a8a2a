"""Where one click can act: which accounts and regions the deployment's instance workflow reaches."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

ACTION_ROLE_NAME = "GpuRightsizerAction"  # member-account/template.yaml's default name of the optional action role
# Why nothing offers one click in a report-only deployment (the stack's ActionsEnabled=false), in every surface's words.
REPORT_ONLY = (
    "this deployment is report-only (the stack's ActionsEnabled=false): the report and the commands work, no button "
    "starts a workflow; `rightsizer act --dry-run` shows the calls an approval would make, and updating the stack "
    "with ActionsEnabled=true turns one click on"
)


@dataclass(frozen=True)
class ActionScope:
    """The stack's own account, plus member accounts when they may deploy the action role; in the regions that run
    an instance workflow (Step Functions cannot call another region's APIs, so each region needs its own)."""

    home_account: str
    regions: frozenset[str] | None = None  # None: any region (the CLI, which acts nowhere, reports every host so)
    member_accounts: bool = False  # other accounts are reached through their action role
    action_role_name: str = ACTION_ROLE_NAME
    # False in a report-only deployment: the workflow reaches the same hosts (their advice keeps its category), but
    # nothing starts it, so nothing is one click (`refusal` says why).
    actions_enabled: bool = True

    @classmethod
    def of(
        cls,
        home_account: str,
        regions: Iterable[str] | None = None,
        *,
        member_accounts: bool = False,
        action_role_name: str = ACTION_ROLE_NAME,
        actions_enabled: bool = True,
    ) -> ActionScope:
        regions_set = None if regions is None else frozenset(regions)
        return cls(home_account, regions_set, member_accounts, action_role_name, actions_enabled)

    def covers(self, account_id: str, region: str) -> bool:
        in_region = self.regions is None or region in self.regions
        return in_region and (account_id == self.home_account or self.member_accounts)

    def refusal(self, instance_id: str, account_id: str, region: str) -> str | None:
        """Why one click cannot reach this host, in words for people; None when it can."""
        if not self.actions_enabled:
            return REPORT_ONLY
        if self.regions is not None and region not in self.regions:
            where = ", ".join(sorted(self.regions)) or "none"
            return (
                f"`{instance_id}` is in {region}, and the instance workflow runs in {where}: deploy "
                "regional/template.yaml in that region and add it to the stack's ActionRegions (docs/multi-account.md)"
            )
        if account_id != self.home_account and not self.member_accounts:
            return (
                f"`{instance_id}` is in account {account_id}, and the stack acts only in its own account "
                f"({self.home_account}): deploy member-account/template.yaml with EnableActions=true there and set "
                "the stack's MemberActions=true (docs/multi-account.md)"
            )
        return None

    @property
    def description(self) -> str:
        """Where one click is counted, in words: the totals of two surfaces agree when their scopes do."""
        accounts = f"account {self.home_account}" + (" and member accounts with the action role" * self.member_accounts)
        where = "any region" if self.regions is None else ", ".join(sorted(self.regions)) or "no region"
        if not self.actions_enabled:
            return f"report-only deployment (ActionsEnabled=false): {accounts} in {where}, nothing is one click"
        return f"one click counted in {accounts}, {where}"
