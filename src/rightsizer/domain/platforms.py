"""How EC2 bills a host's hours: its operating system and licence (and tenancy), as the Price List prices them.

A Windows g4dn.xlarge costs $0.710 an hour in us-east-1, not the Linux $0.526; RHEL, SUSE, Ubuntu Pro and
SQL Server add their own licence fees, which grow with the instance's size. A host is priced, and so is every
target it could move to, at its own platform's rates: a resize saves the licence difference too. A platform
the price data does not know (a BYOL licence, a Dedicated Host) is never priced as Linux: it has no price.

EC2 names the platform on the instance twice: `PlatformDetails` (words) and `UsageOperation` (the billing code,
which is also the Price List's `operation` attribute). The code is read first; the words are the fallback (older
API answers and emulators only say `Platform: windows`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Platform(StrEnum):
    """A billed operating system and licence; the values are the price snapshot's keys."""

    LINUX = "linux"
    WINDOWS = "windows"
    RHEL = "rhel"
    RHEL_HA = "rhel_ha"
    SUSE = "suse"
    UBUNTU_PRO = "ubuntu_pro"
    WINDOWS_SQL_WEB = "windows_sql_web"
    WINDOWS_SQL_STANDARD = "windows_sql_standard"
    WINDOWS_SQL_ENTERPRISE = "windows_sql_enterprise"
    LINUX_SQL_WEB = "linux_sql_web"
    LINUX_SQL_STANDARD = "linux_sql_standard"
    LINUX_SQL_ENTERPRISE = "linux_sql_enterprise"


@dataclass(frozen=True, slots=True)
class PlatformInfo:
    """What EC2 and the Price List call a platform."""

    label: str  # EC2's PlatformDetails
    operation: str  # EC2's UsageOperation = the Price List's `operation`
    operating_system: str  # the Price List's operatingSystem
    pre_installed_sw: str = "NA"  # ...preInstalledSw


PLATFORMS: dict[Platform, PlatformInfo] = {
    Platform.LINUX: PlatformInfo("Linux/UNIX", "RunInstances", "Linux"),
    Platform.WINDOWS: PlatformInfo("Windows", "RunInstances:0002", "Windows"),
    Platform.RHEL: PlatformInfo("Red Hat Enterprise Linux", "RunInstances:0010", "RHEL"),
    Platform.RHEL_HA: PlatformInfo(
        "Red Hat Enterprise Linux with HA", "RunInstances:1010", "Red Hat Enterprise Linux with HA"
    ),
    Platform.SUSE: PlatformInfo("SUSE Linux", "RunInstances:000g", "SUSE"),
    Platform.UBUNTU_PRO: PlatformInfo("Ubuntu Pro", "RunInstances:0g00", "Ubuntu Pro"),
    Platform.WINDOWS_SQL_WEB: PlatformInfo("Windows with SQL Server Web", "RunInstances:0202", "Windows", "SQL Web"),
    Platform.WINDOWS_SQL_STANDARD: PlatformInfo(
        "Windows with SQL Server Standard", "RunInstances:0006", "Windows", "SQL Std"
    ),
    Platform.WINDOWS_SQL_ENTERPRISE: PlatformInfo(
        "Windows with SQL Server Enterprise", "RunInstances:0102", "Windows", "SQL Ent"
    ),
    Platform.LINUX_SQL_WEB: PlatformInfo("Linux with SQL Server Web", "RunInstances:0200", "Linux", "SQL Web"),
    Platform.LINUX_SQL_STANDARD: PlatformInfo(
        "Linux with SQL Server Standard", "RunInstances:0004", "Linux", "SQL Std"
    ),
    Platform.LINUX_SQL_ENTERPRISE: PlatformInfo(
        "Linux with SQL Server Enterprise", "RunInstances:0100", "Linux", "SQL Ent"
    ),
}
_BY_OPERATION = {info.operation: platform for platform, info in PLATFORMS.items()}
_BY_LABEL = {info.label.lower(): platform for platform, info in PLATFORMS.items()}
_BY_LABEL["windows"] = Platform.WINDOWS  # DescribeInstances' `Platform`, the only field some answers carry
_BY_LABEL["linux"] = Platform.LINUX


@dataclass(frozen=True, slots=True)
class Billing:
    """How one host's hours are billed: a platform the price data knows (or None) on a tenancy."""

    platform: Platform | None
    label: str  # what EC2 calls it (for reasons): "Windows", "Windows BYOL", ...
    tenancy: str = "default"  # EC2's Placement.Tenancy: default | dedicated | host

    @property
    def key(self) -> str | None:
        """The price book's key for these rates; None where no instance-hour price exists (unknown licence, or a
        Dedicated Host, which is billed per host)."""
        if self.platform is None or self.tenancy == "host":
            return None
        return self.platform.value if self.tenancy == "default" else f"{self.platform.value}@dedicated"

    @property
    def windows(self) -> bool:
        """A Windows host, whatever its licence: the CloudWatch agent's nvidia_gpu section does not run there."""
        if self.platform is not None:
            return PLATFORMS[self.platform].operating_system == "Windows"
        return self.label.lower().startswith("windows")

    @property
    def description(self) -> str:
        if self.tenancy == "host":
            return f"{self.label} on a Dedicated Host"
        return self.label if self.tenancy == "default" else f"{self.label}, dedicated tenancy"


LINUX = Billing(Platform.LINUX, "Linux/UNIX")


def billing(platform_details: str, usage_operation: str = "", tenancy: str = "default") -> Billing:
    """The billing of a host from what DescribeInstances says of it."""
    found = _BY_OPERATION.get(usage_operation) or _BY_LABEL.get(platform_details.strip().lower())
    label = PLATFORMS[found].label if found else (platform_details or usage_operation or "unknown platform")
    return Billing(found, label, tenancy or "default")
