"""Whether a `sam build` output is what Lambda needs: `make build` runs it after each documented `sam build`.

    python -m tests.built_stack BUILD_DIR

- Each function's package holds its handler, and every module the handler reaches (its imports, lazy ones too)
  imports only the standard library, `rightsizer` (in the package) or a top-level package the layer holds.
- The layer holds exactly the distributions layer/requirements.txt pins, at those versions, under python/ (where
  Lambda's Python runtime looks), and its compiled extensions are Linux arm64 ELF files for CPython 3.12.
- Each state machine's DefinitionUri names a file that exists and is the definition in the repository.

It reads the built files only: the layer's wheels are arm64 builds that this machine could not import.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.package_bench import _normal, pins

ROOT = Path(__file__).resolve().parents[1]
AARCH64 = 183  # ELF e_machine of AArch64
_DIST_INFO = re.compile(r"^(?P<name>.+?)-(?P<version>[^-]+)\.dist-info$")


def _template(build: Path) -> dict[str, Any]:
    from samtranslator.yaml_helper import yaml_parse

    loaded: dict[str, Any] = yaml_parse((build / "template.yaml").read_text())
    return loaded


def _resources(template: dict[str, Any], kind: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, resource in template["Resources"].items():
        if isinstance(resource, dict) and resource.get("Type") == kind:
            yield name, resource.get("Properties", {})


def _module_file(package: Path, module: str) -> Path | None:
    base = package.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(path: Path, module: str) -> set[str]:
    """Every module `path` imports, at any depth of its code (absolute names; relative ones resolved)."""
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join([*parts[: len(parts) - node.level + 1], *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # `from pkg import module`
    return found


def _reached(package: Path, handler_module: str) -> tuple[set[str], set[str]]:
    """(the package's modules the handler reaches, the top-level names of everything else they import)."""
    seen: set[str] = set()
    outside: set[str] = set()
    todo = [handler_module]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        path = _module_file(package, module)
        if path is None:
            continue  # `from rightsizer.x import name`: a name, not a module
        seen.add(module)
        for name in _imports(path, module):
            top = name.partition(".")[0]
            if top == "rightsizer":
                todo.extend(name.rsplit(".", depth)[0] for depth in range(name.count(".") + 1))
            elif top:
                outside.add(top)
    return seen, outside


def _layer_top_level(python: Path) -> set[str]:
    return {path.stem if path.suffix == ".py" else path.name for path in python.iterdir()} | {
        path.name.split(".")[0] for path in python.glob("*.so")
    }


def _elf_machine(path: Path) -> int | None:
    head = path.read_bytes()[:20]
    if head[:4] != b"\x7fELF":
        return None
    return int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")


def check_functions(build: Path, template: dict[str, Any], layer_names: set[str]) -> list[str]:
    problems: list[str] = []
    stdlib = set(sys.stdlib_module_names)
    for name, props in _resources(template, "AWS::Serverless::Function"):
        package = build / str(props["CodeUri"])
        module, _, function = str(props["Handler"]).rpartition(".")
        path = _module_file(package, module)
        if path is None:
            problems.append(f"{name}: {props['Handler']} is not in its package {package}")
            continue
        if not re.search(rf"^def {re.escape(function)}\(", path.read_text(), re.MULTILINE):
            problems.append(f"{name}: {path} defines no {function}()")
        modules, outside = _reached(package, module)
        missing = sorted(outside - stdlib - layer_names - {"rightsizer"})
        if missing:
            problems.append(f"{name}: {module} reaches imports neither Python nor the layer has: {missing}")
        if not any(m.startswith("rightsizer.") for m in modules):
            problems.append(f"{name}: no rightsizer module reached from {module}")
    return problems


def check_layer(build: Path, template: dict[str, Any]) -> tuple[list[str], set[str]]:
    problems: list[str] = []
    layers = list(_resources(template, "AWS::Serverless::LayerVersion"))
    names: set[str] = set()
    for name, props in layers:
        python = build / str(props["ContentUri"]) / "python"
        if not python.is_dir():
            return [f"{name}: no python/ directory in {python.parent}"], names
        names |= _layer_top_level(python)
        installed = {
            _normal(match["name"]): match["version"]
            for path in python.glob("*.dist-info")
            if (match := _DIST_INFO.match(path.name))
        }
        if installed != pins():
            wrong = sorted(set(installed.items()) ^ set(pins().items()))
            problems.append(f"{name}: the layer's distributions differ from layer/requirements.txt: {wrong}")
        for extension in python.rglob("*.so*"):
            if _elf_machine(extension) != AARCH64:
                problems.append(f"{name}: {extension.relative_to(python)} is not an arm64 ELF file")
            tag = re.search(r"\.cpython-(\d+)-", extension.name)
            if tag and tag.group(1) != "312":
                problems.append(f"{name}: {extension.relative_to(python)} is built for CPython {tag.group(1)}")
    return problems, names


def check_state_machines(build: Path, template: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    for name, props in _resources(template, "AWS::Serverless::StateMachine"):
        definition = (build / str(props["DefinitionUri"])).resolve()
        if not definition.is_file():
            problems.append(f"{name}: {definition} does not exist")
        elif (ROOT / "statemachine" / definition.name).read_text() != definition.read_text():
            problems.append(f"{name}: {definition} is not statemachine/{definition.name}")
    return problems


def check(build: Path) -> list[str]:
    template = _template(build)
    layer_problems, layer_names = check_layer(build, template)
    functions = check_functions(build, template, layer_names) if not layer_problems or layer_names else []
    return [*layer_problems, *functions, *check_state_machines(build, template)]


def main(argv: list[str]) -> int:
    (build,) = (Path(arg) for arg in argv)
    problems = check(build)
    for problem in problems:
        print(f"{build}: {problem}", file=sys.stderr)
    if not problems:
        template = _template(build)
        functions = sum(1 for _ in _resources(template, "AWS::Serverless::Function"))
        machines = sum(1 for _ in _resources(template, "AWS::Serverless::StateMachine"))
        print(f"{build}: ok ({functions} functions: handlers, imports, the layer's pins; {machines} definitions)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
