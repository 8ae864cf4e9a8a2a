"""SageMaker's UpdateEndpoint for moto, which does not implement it.

moto 5.2.5 has endpoints, endpoint configs and notebook instances but no UpdateEndpoint. This module adds it to moto's
SageMaker (in-process and its server alike: the response class and the backend are patched), answering in the API's
real shape (`{"EndpointArn": ...}`) and doing what SageMaker does at the end of a blue/green update: the endpoint runs
the new config, its variants' counts and weights are the new config's, and it is InService again. `roll_back_next`
makes the next update of an endpoint end as SageMaker's auto-rollback does (back on the old config, InService, with a
FailureReason), so that tests see that end too. Like `moto_commitments`, it is demo code standing in for what the
emulator lacks; nothing in `src/` knows about it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

_ROLL_BACK: set[tuple[str, str]] = set()  # (region, endpoint name): the next update rolls back
_UPDATES: list[dict[str, Any]] = []  # every UpdateEndpoint request, as sent


def roll_back_next(region: str, endpoint_name: str) -> None:
    """The next UpdateEndpoint of this endpoint ends rolled back, as when the deployment's alarm fires."""
    _ROLL_BACK.add((region, endpoint_name))


def updates() -> list[dict[str, Any]]:
    """The UpdateEndpoint requests moto received (EndpointName, EndpointConfigName, DeploymentConfig)."""
    return list(_UPDATES)


def reset() -> None:
    _ROLL_BACK.clear()
    _UPDATES.clear()


def _update_endpoint(backend: Any, name: str, config_name: str, deployment: dict[str, Any] | None) -> str:
    from moto.sagemaker.exceptions import ValidationError

    endpoint = backend.endpoints.get(name)
    if endpoint is None:
        raise ValidationError(message=f'Could not find endpoint "{name}".')
    config = backend.endpoint_configs.get(config_name)
    if config is None:
        raise ValidationError(message=f'Could not find endpoint configuration "{config_name}".')
    _UPDATES.append({"EndpointName": name, "EndpointConfigName": config_name, "DeploymentConfig": deployment})
    endpoint.last_modified_time = datetime.now(UTC)
    if (backend.region_name, name) in _ROLL_BACK:
        _ROLL_BACK.discard((backend.region_name, name))
        endpoint.failure_reason = "Deployment was rolled back: CloudWatch alarm triggered during the canary"
        return str(endpoint.arn)
    endpoint.endpoint_config_name = config_name
    endpoint.production_variants = endpoint._process_production_variants(config.production_variants)
    endpoint.endpoint_status = "InService"
    endpoint.failure_reason = None
    return str(endpoint.arn)


def install() -> None:
    """Add UpdateEndpoint to moto's SageMaker (idempotent)."""
    from moto.core.responses import ActionResult
    from moto.sagemaker.models import SageMakerModelBackend
    from moto.sagemaker.responses import SageMakerResponse

    if getattr(SageMakerResponse, "update_endpoint", None) is not None:
        return

    def backend_update(self: Any, endpoint_name: str, endpoint_config_name: str, deployment: Any = None) -> str:
        return _update_endpoint(self, endpoint_name, endpoint_config_name, deployment)

    def response_update(self: Any) -> ActionResult:
        arn = self.sagemaker_backend.update_endpoint(
            self._get_param("EndpointName"), self._get_param("EndpointConfigName"), self._get_param("DeploymentConfig")
        )
        return ActionResult({"EndpointArn": arn})

    SageMakerModelBackend.update_endpoint = backend_update  # type: ignore[attr-defined]
    SageMakerResponse.update_endpoint = response_update  # type: ignore[attr-defined]
