"""Domain data: instances, instance-type specs, usage summaries and recommendations.

Pure Python: no I/O, no boto3, no environment. Everything here is a frozen dataclass so that a
value, once collected or computed, cannot drift while it travels through the pipeline.

By concern, in import-linter's layers (`models`, pyproject.toml): the advice (`advice`: `Recommendation`, its
`Evidence`, `Confidence`, `DecisionKind`) and the usage (`usage`: `UsageSummary`, `DeviceUsage`, ...), neither of which
imports the other, over the host (`hosts`: `Instance`, `InstanceTypeSpec`, `AcceleratorSpec`) and money (`money`).
"""

# Re-exported (`X as X`): the kinds live with their registries, and code imports them from here too.
from rightsizer.domain.action_kinds import ActionKind as ActionKind
from rightsizer.domain.findings import Finding as Finding
