"""Where one click can act: which accounts and regions the deployment's instance workflow reaches."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

ACTION_ROLE_NAME = "GpuRightsizerAction"  # member-account/template.yaml's default name of the optional action role


@dataclass(frozen=True)
class ActionScope:
    """The stack's own account, plus member accounts when they may deploy the action role; in the regions that run
    an instance workflow (Step Functions cannot call another region's APIs, so each region needs its own)."""

    home_account: str
    regions: frozenset[str] | None = None  # None: any region (the CLI, which acts nowhere, reports every host so)
    member_accounts: bool = False  # other accounts are reached through their action role
    action_role_name: str = ACTION_ROLE_NAME

    @classmethod
    def of(
        cls,
        home_account: str,
        regions: Iterable[str] | None = None,
        *,
        member_accounts: bool = False,
        action_role_name: str = ACTION_ROLE_NAME,
    ) -> ActionScope:
        return cls(home_account, None if regions is None else frozenset(regions), member_accounts, action_role_name)

    def covers(self, account_id: str, region: str) -> bool:
        in_region = self.regions is None or region in self.regions
        return in_region and (account_id == self.home_account or self.member_accounts)

    def refusal(self, instance_id: str, account_id: str, region: str) -> str | None:
        """Why one click cannot reach this host, in words for people; None when it can."""
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
