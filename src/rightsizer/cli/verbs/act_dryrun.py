"""`rightsizer act --dry-run`: the AWS calls an approval would make, read from the instance workflow's definition.

Nothing here calls AWS. The approval is the one `services.approvals.approve` would write (it runs, with its checks,
over a store that keeps nothing), the execution input the one `adapters.aws.workflow` would send, and the calls are
the Task states of the state machine's definition (statemachine/resize.asl.json, or the deployed one) that an
execution with that input walks through: so the list follows the workflow as it changes, with no list kept here.

The walk cannot know what AWS will answer. It takes the path on which every check passes: a Choice on what a call
answered is followed both ways, and a way that ends in a Fail state is dropped; once a check is assumed passed, what
it compared is known (the host's type and state are then those the analysis saw), so later choices on it are decided.
A call on a way that depends on an answer (say, the NVMe check of a target type that needs one) is listed with
its condition. Retries and Catch paths (what happens when a call fails) are not walked.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.scope import ActionScope
from rightsizer.domain.workflow_contract import RESIZABLE_STATES
from rightsizer.services.approvals import (
    ActionResult,
    ApprovalRequest,
    ApprovalRules,
    ApprovalStore,
    Outcome,
    RemovalRequest,
    approve,
    needs_capacity_confirmation,
    remove_schedule,
)
from rightsizer.services.ports import Approval, ApprovalUpdate, AuditEntry, Decision, ScheduleRecord
from rightsizer.settings import Settings

DRY_RUN_ACTOR = "rightsizer-cli (dry run)"
InputOf = Callable[["Approval", str], dict[str, Any]]  # an approval and the expected state -> the execution input
DRY_RUN_EXECUTION = "(dry run: no execution started)"


class DryRunError(Exception):
    """The definition cannot be walked (no path reaches its end, or a state it names is missing)."""


# ---------------------------------------------------------------------------------------------
# values the walk does not know: what AWS answers, and the execution's context


@dataclass(frozen=True)
class Unknown:
    """A value known only when the workflow runs, shown as `text` (e.g. `<$.described.Instance.InstanceType>`)."""

    text: str


@dataclass(frozen=True)
class Missing(Unknown):
    """A path the document does not have where nothing unknown lies on the way: Step Functions fails such a state with
    States.Runtime, which no Catch takes (the request checks must prove every path an action reads present)."""


def _missing_in(value: Any) -> Missing | None:
    """The first Missing inside a state's resolved parameters, if any."""
    if isinstance(value, Missing):
        return value
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return next((found for item in items if (found := _missing_in(item)) is not None), None)


class Answer(dict[str, Any]):
    """What a call answered: the keys a passed check taught the walk, every other key Unknown."""


def _shown(value: Any) -> Any:
    """`value` as JSON, an Unknown as its text."""
    if isinstance(value, Unknown):
        return value.text
    if isinstance(value, Answer):
        return {key: _shown(item) for key, item in value.items()} if value else "<answer>"
    if isinstance(value, dict):
        return {key: _shown(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shown(item) for item in value]
    return value


# ---------------------------------------------------------------------------------------------
# JSONPath, as far as Amazon States Language's reference paths go ($.a.b[0].c, [*])

_STEP = re.compile(r"\.([^.\[]+)|\[(\d+|\*)\]")


def _steps(path: str) -> list[str | int]:
    if not path.startswith("$"):
        raise DryRunError(f"not a path: {path!r}")
    steps: list[str | int] = []
    for name, index in _STEP.findall(path[1:]):
        steps.append(name if name else ("*" if index == "*" else int(index)))
    return steps


def get(data: Any, path: str) -> Any:
    """The value at `path`; Unknown where it lies inside an answer; KeyError where the input has nothing."""
    if path.startswith("$$"):
        return Unknown(f"<{path}>")
    return _walk_path(data, _steps(path), path)


def _walk_path(value: Any, steps: Sequence[str | int], path: str) -> Any:
    for at, step in enumerate(steps):
        if isinstance(value, Unknown) or (isinstance(value, Answer) and step not in value):
            return Unknown(f"<{path}>")
        if step == "*":  # each item: the rest of the path applies to every one
            if not isinstance(value, list):
                raise KeyError(path)
            return [_walk_path(item, steps[at + 1 :], path) for item in value]
        if isinstance(step, int):
            if not isinstance(value, list) or step >= len(value):
                raise KeyError(path)
            value = value[step]
        elif isinstance(value, dict) and step in value:
            value = value[step]
        else:
            raise KeyError(path)
    return value


def put(data: Any, path: str, value: Any) -> Any:
    """`data` with `value` at `path` (ResultPath's rules: `$` replaces the whole document), parents created."""
    steps = _steps(path)
    if not steps:
        return value
    node = data
    for step in steps[:-1]:
        child = node.get(step) if isinstance(node, dict) else None
        if not isinstance(child, dict):
            child = Answer() if isinstance(node, Answer) or isinstance(child, Unknown) else {}
            node[step] = child
        node = child
    node[steps[-1]] = value
    return data


# ---------------------------------------------------------------------------------------------
# intrinsic functions (States.Format, States.Array, ...): a small parser for their arguments

_TOKEN = re.compile(r"\s*(?:'((?:[^'\\]|\\.)*)'|(-?\d+(?:\.\d+)?)|(\$\$?[^,()\s]*)|(States\.\w+)\(|(\))|(,))")


def _call(text: str, data: Any) -> Any:
    value, rest = _expression(text, data)
    if rest.strip():
        raise DryRunError(f"cannot read the intrinsic function {text!r}")
    return value


def _expression(text: str, data: Any) -> tuple[Any, str]:
    match = _TOKEN.match(text)
    if match is None:
        raise DryRunError(f"cannot read the intrinsic function argument {text!r}")
    literal, number, path, function = match.group(1, 2, 3, 4)
    rest = text[match.end() :]
    if literal is not None:
        return re.sub(r"\\(.)", r"\1", literal), rest
    if number is not None:
        return (float(number) if "." in number else int(number)), rest
    if path is not None:
        return _lookup(data, path), rest
    if function is None:
        raise DryRunError(f"cannot read the intrinsic function argument {text!r}")
    args: list[Any] = []
    while True:
        closing = _TOKEN.match(rest)
        if closing is not None and closing.group(5):
            rest = rest[closing.end() :]
            break
        if args:
            if closing is None or not closing.group(6):
                raise DryRunError(f"cannot read the arguments of {function}")
            rest = rest[closing.end() :]
        value, rest = _expression(rest, data)
        args.append(value)
    return INTRINSICS.get(function, _unknown_function(function))(args), rest


def _lookup(data: Any, path: str) -> Any:
    try:
        return get(data, path)
    except KeyError:
        return Missing(f"<{path}: not in the input>")


def _format(args: list[Any]) -> Any:
    template, *values = args
    parts = str(template).split("{}")
    text = parts[0] + "".join(_text(value) + part for value, part in zip(values, parts[1:], strict=False))
    missing = _missing_in(values)
    if missing is not None:
        return missing
    return Unknown(text) if any(isinstance(value, Unknown) for value in values) else text


def _text(value: Any) -> str:
    if isinstance(value, Unknown):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def _if_known(compute: Callable[[list[Any]], Any], name: str) -> Callable[[list[Any]], Any]:
    def apply(args: list[Any]) -> Any:
        if (missing := _missing_in(args)) is not None:
            return missing
        if any(isinstance(arg, Unknown | Answer) for arg in args):
            return Unknown(f"<{name}(...)>")
        return compute(args)

    return apply


def _unknown_function(name: str) -> Callable[[list[Any]], Any]:
    return lambda args: Unknown(f"<{name}(...)>")


INTRINSICS: dict[str, Callable[[list[Any]], Any]] = {
    "States.Format": _format,
    "States.Array": list,  # its items may be Unknown: shown as such
    "States.ArrayLength": _if_known(lambda args: len(args[0]), "States.ArrayLength"),
    "States.MathAdd": _if_known(lambda args: args[0] + args[1], "States.MathAdd"),
    "States.ArrayContains": _if_known(lambda args: args[1] in args[0], "States.ArrayContains"),
}


def resolve(template: Any, data: Any) -> Any:
    """A Parameters (or ResultSelector) template filled from `data`: `Key.$` values are paths or intrinsics."""
    if isinstance(template, dict):
        resolved: dict[str, Any] = {}
        for key, value in template.items():
            if key.endswith(".$") and isinstance(value, str):
                resolved[key[:-2]] = _call(value, data) if value.startswith("States.") else _lookup(data, value)
            else:
                resolved[key] = resolve(value, data)
        return resolved
    if isinstance(template, list):
        return [resolve(item, data) for item in template]
    return template


_JSONATA = re.compile(r"^\{%\s*(.*?)\s*%\}$", re.DOTALL)
_JSONATA_INPUT = re.compile(r"^\$states\.input((?:\.[A-Za-z_][A-Za-z0-9_]*)+)$")


def resolve_jsonata(template: Any, data: Any) -> Any:
    """A JSONata state's Arguments filled from `data`: `{% $states.input.a.b %}` is the input's `$.a.b`; any other
    expression is computed when the workflow runs (shown Unknown, with the expression)."""
    if isinstance(template, dict):
        return {key: resolve_jsonata(value, data) for key, value in template.items()}
    if isinstance(template, list):
        return [resolve_jsonata(item, data) for item in template]
    if isinstance(template, str) and (expression := _JSONATA.match(template)):
        path = _JSONATA_INPUT.match(expression.group(1))
        if path:
            return _lookup(data, "$" + path.group(1))
        return Unknown(f"<computed when the workflow runs: {expression.group(1)}>")
    return template


# ---------------------------------------------------------------------------------------------
# Choice rules in three values: True, False, None (depends on what AWS answers)

Rule = Mapping[str, Any]


def _numeric(compare: Callable[[float, float], bool]) -> Callable[[Any, Any], bool]:
    def test(left: Any, right: Any) -> bool:
        numbers = isinstance(left, int | float) and isinstance(right, int | float)
        return numbers and not isinstance(left, bool) and compare(left, right)

    return test


COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "StringEquals": lambda left, right: isinstance(left, str) and left == right,
    "BooleanEquals": lambda left, right: isinstance(left, bool) and left == right,
    "NumericEquals": _numeric(lambda left, right: left == right),
    "NumericGreaterThan": _numeric(lambda left, right: left > right),
    "NumericGreaterThanEquals": _numeric(lambda left, right: left >= right),
    "NumericLessThan": _numeric(lambda left, right: left < right),
    "NumericLessThanEquals": _numeric(lambda left, right: left <= right),
}
TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "IsString": lambda value: isinstance(value, str),
    "IsNumeric": lambda value: isinstance(value, int | float) and not isinstance(value, bool),
    "IsBoolean": lambda value: isinstance(value, bool),
    "IsNull": lambda value: value is None,
}
EQUALITIES = ("StringEquals", "BooleanEquals", "NumericEquals")  # what a rule assumed true teaches


def _operator(rule: Rule) -> tuple[str, Any]:
    (name,) = [key for key in rule if key not in ("Variable", "Next", "Comment")]
    return name, rule[name]


def evaluate(rule: Rule, data: Any) -> bool | None:
    if "And" in rule:
        values = [evaluate(item, data) for item in rule["And"]]
        return False if False in values else (None if None in values else True)
    if "Or" in rule:
        values = [evaluate(item, data) for item in rule["Or"]]
        return True if True in values else (None if None in values else False)
    if "Not" in rule:
        value = evaluate(rule["Not"], data)
        return None if value is None else not value
    name, operand = _operator(rule)
    try:
        left = get(data, rule["Variable"])
    except KeyError:
        return name == "IsPresent" and not operand
    if isinstance(left, Unknown | Answer):
        return None
    if name == "IsPresent":
        return bool(operand)
    if name in TYPE_TESTS:
        return TYPE_TESTS[name](left) is bool(operand)
    base = name.removesuffix("Path")
    right = _lookup(data, operand) if name.endswith("Path") else operand
    if isinstance(right, Unknown | Answer):
        return None
    return COMPARISONS[base](left, right)


def assume(rule: Rule, truth: bool, data: Any) -> Any:
    """`data` with what `rule` being `truth` teaches: an equality assumed true sets its variable."""
    if "Not" in rule:
        return assume(rule["Not"], not truth, data)
    if ("And" in rule and truth) or ("Or" in rule and not truth):
        for item in rule.get("And") or rule["Or"]:
            data = assume(item, truth, data)
        return data
    if "And" in rule or "Or" in rule or not truth:
        return data
    name, operand = _operator(rule)
    base = name.removesuffix("Path")
    if base not in EQUALITIES:
        return data
    value = _lookup(data, operand) if name.endswith("Path") else operand
    variable = rule["Variable"]
    if isinstance(value, Unknown) and name.endswith("Path"):
        known = _lookup(data, variable)
        return data if isinstance(known, Unknown) else put(data, operand, known)
    return data if isinstance(value, Unknown) else put(data, variable, value)


def rule_text(rule: Rule) -> str:
    """A Choice rule in words, for the condition of a call."""
    if "And" in rule:
        return " and ".join(rule_text(item) for item in rule["And"])
    if "Or" in rule:
        return "(" + " or ".join(rule_text(item) for item in rule["Or"]) + ")"
    if "Not" in rule:
        return f"not ({rule_text(rule['Not'])})"
    name, operand = _operator(rule)
    variable = rule["Variable"]
    if name == "IsPresent":
        return f"{variable} is {'present' if operand else 'absent'}"
    if name in TYPE_TESTS:
        return f"{variable} {name[2:].lower()} is {json.dumps(operand)}"
    shown = operand if name.endswith("Path") else json.dumps(operand)
    symbols = {"Equals": "=", "GreaterThan": ">", "GreaterThanEquals": ">=", "LessThan": "<", "LessThanEquals": "<="}
    base = name.removesuffix("Path").removeprefix("String").removeprefix("Numeric").removeprefix("Boolean")
    return f"{variable} {symbols.get(base, base)} {shown}"


# ---------------------------------------------------------------------------------------------
# the walk


@dataclass(frozen=True)
class Call:
    """One AWS call of the workflow: its state, the API, its parameters as they would be sent, who makes it."""

    step: str
    api: str  # "ec2:StopInstances"
    parameters: Mapping[str, Any]
    role: str  # the role it runs as (task Credentials), or the workflow's own role
    effect: str  # reads, changes (the resource), records (the bot's table, EventBridge)
    condition: str = ""  # "" or the answer the call depends on
    comment: str = ""

    def json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "api": self.api,
            "effect": self.effect,
            "role": self.role,
            "condition": self.condition or None,
            "parameters": _shown(self.parameters),
        }


WORKFLOW_ROLE = "the workflow's role"
RECORDS = frozenset({"dynamodb", "events", "states"})  # the bot's own bookkeeping: its table, its events
READS = ("Describe", "List", "Get")


def api_of(resource: str) -> str:
    """arn:aws:states:::aws-sdk:ec2:stopInstances -> ec2:StopInstances; arn:aws:states:::dynamodb:putItem ->
    dynamodb:PutItem (an optimised integration), without `.sync` or `.waitForTaskToken`."""
    tail = resource.split(":::", 1)[-1].removeprefix("aws-sdk:").split(".", 1)[0]
    service, _, operation = tail.partition(":")
    return f"{service}:{operation[:1].upper()}{operation[1:]}"


def effect_of(api: str) -> str:
    service, _, operation = api.partition(":")
    if service in RECORDS:
        return "records"
    return "reads" if operation.startswith(READS) else "changes"


@dataclass(frozen=True)
class _Walk:
    """One way through the states: where it is, the document, the calls so far, and the open conditions (a choice
    taken on an answer, in force until the way meets a state the other ways of that choice also reach)."""

    at: str
    data: Any
    calls: tuple[Call, ...] = ()
    seen: frozenset[str] = frozenset()
    conditions: tuple[tuple[str, frozenset[str]], ...] = ()  # (words, states the other ways reach)


@dataclass
class Machine:
    """A state machine definition (Amazon States Language, as JSON)."""

    definition: Mapping[str, Any]
    _reach: dict[str, frozenset[str]] = field(default_factory=dict)
    _failed: set[str] = field(default_factory=set)  # the Fail states the ways of the last walk ended in

    @property
    def states(self) -> Mapping[str, Any]:
        states: Mapping[str, Any] = self.definition["States"]
        return states

    def state(self, name: str) -> Mapping[str, Any]:
        if name not in self.states:
            raise DryRunError(f"the definition names a state it does not have: {name}")
        state: Mapping[str, Any] = self.states[name]
        return state

    def reachable(self, name: str) -> frozenset[str]:
        """Every state a way from `name` may reach (Choices both ways, Catch included), `name` too."""
        if name not in self._reach:
            seen: set[str] = set()
            stack = [name]
            while stack:
                current = stack.pop()
                if current in seen or current not in self.states:
                    continue
                seen.add(current)
                stack.extend(_successors(self.states[current]))
            self._reach[name] = frozenset(seen)
        return self._reach[name]

    def calls(self, execution_input: Mapping[str, Any]) -> list[Call]:
        """The calls of the first way from StartAt to an end that is no Fail, every check assumed passed."""
        start = _Walk(str(self.definition["StartAt"]), copy.deepcopy(dict(execution_input)))
        self._failed.clear()
        for done in self._ways(start):
            return list(done.calls)
        ends = ", ".join(sorted(self._failed)) or "none"
        raise DryRunError(f"no way through the definition ends in success for this input (Fail states reached: {ends})")

    def _ways(self, walk: _Walk) -> Iterator[_Walk]:
        while True:
            if walk.at in walk.seen:  # a loop (a poll): the way that leaves it is walked from its Choice
                return
            state = self.state(walk.at)
            walk = replace(walk, seen=walk.seen | {walk.at}, conditions=_still_open(walk))
            kind = state["Type"]
            if kind == "Fail":
                self._failed.add(walk.at)
                return
            if kind == "Choice":
                for way in self._choices(state, walk):
                    yield from self._ways(way)
                return
            walk = STEPS.get(kind, _pass_through)(self, walk, state)
            if state.get("End") or kind == "Succeed":
                yield walk
                return
            walk = replace(walk, at=str(state["Next"]))

    def _choices(self, state: Mapping[str, Any], walk: _Walk) -> Iterator[_Walk]:
        data = walk.data
        others: list[str] = [choice["Next"] for choice in state["Choices"]] + [state.get("Default", "")]
        for index, choice in enumerate(state["Choices"]):
            value = evaluate(choice, data)
            if value is False:
                continue
            if value is True:
                yield replace(walk, at=choice["Next"], data=data)
                return
            taken = assume(choice, True, copy.deepcopy(data))
            rest = frozenset().union(*(self.reachable(name) for name in others[index + 1 :] if name))
            condition = (f"only when {rule_text(choice)}", rest)
            yield replace(walk, at=choice["Next"], data=taken, conditions=(*walk.conditions, condition))
            data = assume(choice, False, copy.deepcopy(data))  # the next ways: this check passed
        if "Default" in state:
            yield replace(walk, at=state["Default"], data=data)


def _still_open(walk: _Walk) -> tuple[tuple[str, frozenset[str]], ...]:
    """A condition ends where the way meets a state the choice's other ways reach too."""
    return tuple(condition for condition in walk.conditions if walk.at not in condition[1])


def _successors(state: Mapping[str, Any]) -> list[str]:
    names = [choice["Next"] for choice in state.get("Choices", [])]
    names += [state[key] for key in ("Next", "Default") if key in state]
    names += [catch["Next"] for catch in state.get("Catch", [])]
    return names


def _result(state: Mapping[str, Any], data: Any, value: Any) -> Any:
    """ResultPath's rules: `$` (the default) replaces the document, null keeps it, a path sets one field."""
    path = state.get("ResultPath", "$")
    if path is None:
        return data
    data = put(data, path, value)
    if "OutputPath" in state:
        data = _lookup(data, state["OutputPath"])
    return data


def _task(machine: Machine, walk: _Walk, state: Mapping[str, Any]) -> _Walk:
    data = walk.data
    api = api_of(str(state["Resource"]))
    in_jsonata = state.get("QueryLanguage") == "JSONata"
    filled = resolve_jsonata if in_jsonata else resolve
    credentials = filled(state.get("Credentials", {}), data)
    role = credentials.get("RoleArn", WORKFLOW_ROLE)
    parameters = _present(walk.at, filled(state.get("Arguments" if in_jsonata else "Parameters", {}), data))
    _present(walk.at, credentials)
    call = Call(
        step=walk.at,
        api=api,
        parameters=parameters,
        role=_text(role),
        effect=effect_of(api),
        condition="; ".join(words for words, _ in walk.conditions),
        comment=str(state.get("Comment", "")),
    )
    # A JSONata state's Output merges the answer into the data: the keys it adds are not known until the workflow runs
    # (an Answer: what the input had stays known, any other key is Unknown).
    after = Answer(data) if in_jsonata and isinstance(data, dict) else _result(state, data, Answer())
    return replace(walk, data=after, calls=(*walk.calls, call))


def _present(at: str, resolved: Any) -> Any:
    """`resolved` where it reads no path the document lacks; else the state would fail as Step Functions fails it."""
    missing = _missing_in(resolved)
    if missing is not None:
        raise DryRunError(f"{at} would fail with States.Runtime (no Catch takes it): {missing.text}")
    return resolved


def _pass(machine: Machine, walk: _Walk, state: Mapping[str, Any]) -> _Walk:
    if "Result" in state:
        value = copy.deepcopy(state["Result"])
    elif "Parameters" in state:
        value = _present(walk.at, resolve(state["Parameters"], walk.data))
    else:
        value = copy.deepcopy(walk.data)
    return replace(walk, data=_result(state, walk.data, value))


def _map(machine: Machine, walk: _Walk, state: Mapping[str, Any]) -> _Walk:
    """A Map's item states run per item: their calls are listed once, for each item."""
    inner = Machine(state.get("ItemProcessor") or state.get("Iterator") or {"States": {}, "StartAt": ""})
    calls = [
        Call(name, api, item.get("Parameters", {}), WORKFLOW_ROLE, effect_of(api), f"for each item of {walk.at}")
        for name, item in inner.states.items()
        if item["Type"] == "Task"
        for api in [api_of(str(item["Resource"]))]
    ]
    return replace(walk, data=_result(state, walk.data, Unknown(f"<{walk.at}'s results>")), calls=(*walk.calls, *calls))


def _pass_through(machine: Machine, walk: _Walk, state: Mapping[str, Any]) -> _Walk:
    return walk  # Wait, Succeed: nothing called, nothing changed


STEPS: dict[str, Callable[[Machine, _Walk, Mapping[str, Any]], _Walk]] = {
    "Task": _task,
    "Pass": _pass,
    "Map": _map,
}


def substituted(text: str, substitutions: Mapping[str, str]) -> str:
    """A definition file with its DefinitionSubstitutions (`${TableName}`) filled in, as CloudFormation does."""
    for name, value in substitutions.items():
        text = text.replace("${" + name + "}", value)
    return text


# ---------------------------------------------------------------------------------------------
# the approval: `approvals.approve` over a store that keeps nothing, and a workflow that starts nothing


@dataclass
class DryRunStore:
    """ApprovalStore for one recommendation (None: a schedule's removal): reads from `reads` (the stack's table) when
    given, writes nothing (the approval it is asked to write is kept in memory only)."""

    rec: Recommendation | None
    reads: ApprovalStore | None = None
    audits: list[AuditEntry] = field(default_factory=list)
    approvals: dict[str, Approval] = field(default_factory=dict)

    def recommendation(self, recommendation_id: str) -> Recommendation | None:
        return self.rec if self.rec is not None and recommendation_id == self.rec.recommendation_id else None

    def is_current(self, rec: Recommendation) -> bool:
        return self.reads.is_current(rec) if self.reads is not None else True

    def schedule(self, account_id: str, region: str, instance_id: str) -> ScheduleRecord | None:
        return self.reads.schedule(account_id, region, instance_id) if self.reads is not None else None

    def latest_for_instance(self, instance_id: str) -> Recommendation | None:
        return self.rec if self.rec is not None and instance_id == self.rec.instance_id else None

    def decisions_about(self, rec: Recommendation, now: datetime) -> list[Decision]:
        return self.reads.decisions_about(rec, now) if self.reads is not None else []

    def put_decision(self, decision: Decision) -> None:
        return None

    def create_approval(self, approval: Approval) -> bool:
        # A dry run ignores an earlier approval of the same advice: it shows what this one would run.
        self.approvals[approval.recommendation_id] = approval
        return True

    def approval(self, recommendation_id: str) -> Approval | None:
        return self.approvals.get(recommendation_id)

    def update_approval(self, recommendation_id: str, **changes: Any) -> ApprovalUpdate:
        current = self.approvals[recommendation_id]
        given = {key: value for key, value in changes.items() if value is not None and key != "attempt"}
        self.approvals[recommendation_id] = replace(current, **given)
        return ApprovalUpdate(self.approvals[recommendation_id], moved=True)

    def retry_approval(self, recommendation_id: str, attempt: int, approver: str, at: datetime) -> Approval | None:
        return None

    def audit(self, entry: AuditEntry) -> None:
        self.audits.append(entry)


@dataclass
class RecordingWorkflow:
    """ResizeWorkflow that records the execution input `input_of` builds instead of starting an execution."""

    input_of: InputOf
    expected_state: str
    started: list[tuple[Approval, dict[str, Any]]] = field(default_factory=list)

    def start(self, approval: Approval, expected_state: str | None = None) -> str:
        self.started.append((approval, self.input_of(approval, expected_state or self.expected_state)))
        return DRY_RUN_EXECUTION


@dataclass(frozen=True)
class DryRun:
    """What one approval would do: its approval and execution input, and the workflow's calls in order."""

    approval: Approval
    execution_input: Mapping[str, Any]
    calls: tuple[Call, ...]
    definition: str  # where the definition came from
    risks: tuple[str, ...] = ()  # what Slack's confirmation asks the approver to accept (approvals.action_risks)


@dataclass(frozen=True)
class Refused:
    """The approval itself would be refused (before any workflow): the outcome and why, in people's words."""

    outcome: Outcome
    detail: str


Started = tuple[Approval, dict[str, Any]] | Refused  # the approval and its execution input, or why not


def expected_state(rec: Recommendation) -> str:
    """The state the workflow expects the host in (adapters/aws/workflow: the recommendation's, else running)."""
    return rec.state if rec.state in RESIZABLE_STATES else "running"


def approve_dry(
    rec: Recommendation,
    settings: Settings,
    input_of: InputOf,
    now: datetime,
    reads: ApprovalStore | None = None,
) -> Started:
    """The approval `approvals.approve` writes for `rec` and the input its workflow would get; or why it refuses.
    Actions are counted on (a report-only deployment is where a dry run is wanted), and a scarce type's restart risk
    counted confirmed, as the second button Slack shows then does."""
    workflow = RecordingWorkflow(input_of, expected_state(rec))
    request = ApprovalRequest(
        rec.recommendation_id, DRY_RUN_ACTOR, now, capacity_risk_confirmed=needs_capacity_confirmation(rec)
    )
    rules = ApprovalRules(
        lambda actor: True,
        scope=actions_on(settings.report_scope),
        time_zone=lambda advice: settings.time_zone_of(advice.team),
        managed_tag_key=settings.managed_tag_key,
    )
    result = approve(DryRunStore(rec, reads), lambda: workflow, request, rules)
    return _started(result, workflow)


def remove_dry(
    record: ScheduleRecord,
    input_of: InputOf,
    now: datetime,
    reads: ApprovalStore,
) -> Started:
    """The approval `approvals.remove_schedule` writes for a host's stop/start pair, and its workflow's input."""
    workflow = RecordingWorkflow(input_of, "running")
    result = remove_schedule(
        DryRunStore(None, reads),
        lambda: workflow,
        RemovalRequest(f"{record.account_id}#{record.region}#{record.instance_id}", DRY_RUN_ACTOR, now),
        ApprovalRules(lambda actor: True),
    )
    return _started(result, workflow)


def actions_on(scope: ActionScope | None) -> ActionScope | None:
    """The scope with one click on: a report-only deployment's dry run shows what turning actions on would run."""
    return None if scope is None else replace(scope, actions_enabled=True)


def _started(result: ActionResult, workflow: RecordingWorkflow) -> Started:
    if result.outcome is not Outcome.STARTED or not workflow.started:
        return Refused(result.outcome, _refusal_words(result))
    return workflow.started[-1]


def _refusal_words(result: ActionResult) -> str:
    if result.detail:
        return result.detail.replace("`", "")
    if result.decision is not None:
        until = f" until {result.decision.until:%Y-%m-%d %H:%M} UTC" if result.decision.until else ""
        return f"{result.decision.kind.value} by {result.decision.actor}{until}: the advice is hidden"
    words = {
        Outcome.NOT_ACTIONABLE: "this advice offers no one-click action",
        Outcome.STALE: "a newer analysis replaced this advice",
        Outcome.NOT_FOUND: "no such recommendation",
    }
    return words.get(result.outcome, result.outcome.value.replace("_", " "))


def dry_run(
    approval: Approval,
    execution_input: Mapping[str, Any],
    definition: Mapping[str, Any],
    source: str,
    risks: Sequence[str] = (),
) -> DryRun:
    return DryRun(approval, execution_input, tuple(Machine(definition).calls(execution_input)), source, tuple(risks))


def dry_run_json(run: DryRun) -> dict[str, Any]:
    from rightsizer.adapters.codec import to_jsonable

    return {
        "dry_run": True,
        "action": run.approval.action.value,
        "resource_id": run.approval.instance_id,
        "account_id": run.approval.account_id,
        "region": run.approval.region,
        "change": run.execution_input.get("change"),
        "risks": list(run.risks),
        "definition": run.definition,
        "approval": to_jsonable(run.approval),
        "execution_input": dict(run.execution_input),
        "calls": [call.json() for call in run.calls],
    }


def call_lines(calls: Sequence[Call]) -> Iterator[str]:
    """The calls for people: numbered, what they do, who makes them, their parameters, any condition."""
    width = max((len(call.api) for call in calls), default=0)
    for number, call in enumerate(calls, 1):
        yield f"{number:>3}. {call.api:<{width}}  {call.effect:<7}  {call.step} (as {call.role})"
        yield f"       {json.dumps(_shown(call.parameters), separators=(', ', ': '), default=str)}"
        if call.condition:
            yield f"       {call.condition}"
