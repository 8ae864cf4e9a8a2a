"""SageMaker's UpdateEndpoint for moto, which does not implement it; endpoint configs kept whole; and a JSONata engine
for moto's Step Functions.

moto 5.2.5 has endpoints, endpoint configs and notebook instances but no UpdateEndpoint. This module adds it to moto's
SageMaker (in-process and its server alike: the response class and the backend are patched), answering in the API's
real shape (`{"EndpointArn": ...}`) and doing what SageMaker does at the end of a blue/green update: the endpoint runs
the new config, its variants' counts and weights are the new config's, and it is InService again. `roll_back_next`
makes the next update of an endpoint end as SageMaker's auto-rollback does (back on the old config, InService, with a
FailureReason), so that tests see that end too.

moto's CreateEndpointConfig keeps five of its fields (name, variants, data capture, KMS key, async inference) and drops
the rest (shadow variants, VPC, network isolation, explainer, execution role, metrics): here the request is kept as
sent and DescribeEndpointConfig answers it back, as SageMaker does, so a copy of a config can be checked field by field.

moto's Step Functions parses JSONata states (QueryLanguage JSONata) but ships no evaluator (its upstream runs
dashjoin's jsonata-java in a JVM): `install` plugs in jsonata-python, that implementation's Python port, so the
workflow's JSONata states run in moto as written. Like `moto_commitments`, this is demo code standing in for what the
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


def _evaluate_jsonata(expression: str) -> Any:
    """moto's JSONata hook: the whole expression (moto prepends the `$states` bindings), evaluated with no input."""
    import jsonata

    return jsonata.Jsonata(expression).evaluate(None)


def _keep_whole_configs(response_class: Any) -> None:
    """CreateEndpointConfig keeps its request as sent; DescribeEndpointConfig answers it back (with its ARN and
    creation time), as SageMaker does."""
    from moto.core.responses import ActionResult

    create, describe = response_class.create_endpoint_config, response_class.describe_endpoint_config

    def create_whole(self: Any) -> ActionResult:
        answer = create(self)
        config = self.sagemaker_backend.endpoint_configs[self._get_param("EndpointConfigName")]
        config.whole_request = {k: v for k, v in self._get_params().items() if k not in ("Tags", "EndpointConfigName")}
        return answer

    def describe_whole(self: Any) -> ActionResult:
        config = self.sagemaker_backend.endpoint_configs.get(self._get_param("EndpointConfigName"))
        whole = getattr(config, "whole_request", None)
        if whole is None:
            return describe(self)
        return ActionResult(
            {
                "EndpointConfigName": config.endpoint_config_name,
                "EndpointConfigArn": config.endpoint_config_arn,
                "CreationTime": config.creation_time,
                **whole,
            }
        )

    response_class.create_endpoint_config = create_whole
    response_class.describe_endpoint_config = describe_whole


def install() -> None:
    """Add UpdateEndpoint to moto's SageMaker, keep endpoint configs whole, and give moto's Step Functions a JSONata
    engine (idempotent)."""
    from moto.core.responses import ActionResult
    from moto.sagemaker.models import SageMakerModelBackend
    from moto.sagemaker.responses import SageMakerResponse
    from moto.stepfunctions.parser.asl.jsonata import jsonata as moto_jsonata

    moto_jsonata._eval_jsonata = _evaluate_jsonata
    if getattr(SageMakerResponse, "update_endpoint", None) is not None:
        return
    _keep_whole_configs(SageMakerResponse)

    def backend_update(self: Any, endpoint_name: str, endpoint_config_name: str, deployment: Any = None) -> str:
        return _update_endpoint(self, endpoint_name, endpoint_config_name, deployment)

    def response_update(self: Any) -> ActionResult:
        arn = self.sagemaker_backend.update_endpoint(
            self._get_param("EndpointName"), self._get_param("EndpointConfigName"), self._get_param("DeploymentConfig")
        )
        return ActionResult({"EndpointArn": arn})

    SageMakerModelBackend.update_endpoint = backend_update  # type: ignore[attr-defined]
    SageMakerResponse.update_endpoint = response_update  # type: ignore[attr-defined]
