# Two commands on a fresh machine: `make demo` and `make test`. Both build .venv on first use, from the
# hash-pinned files that `make lock` exports from uv.lock: requirements/demo.txt (the runtime and moto's server)
# for the demo, requirements/dev.txt (all of that plus the checkers and Playwright) for the tests.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
hash = $(shell cat pyproject.toml $(1) | cksum | cut -d' ' -f1)
DEV_STAMP := $(VENV)/.dev-$(call hash,requirements/dev.txt)
DEMO_STAMP := $(VENV)/.demo-$(call hash,requirements/demo.txt)
# A test environment runs the demo too: the demo installs its smaller set only where that is missing.
DEMO_ENV := $(if $(wildcard $(DEV_STAMP)),$(DEV_STAMP),$(DEMO_STAMP))
export SAM_CLI_TELEMETRY := 0
export AWS_EC2_METADATA_DISABLED := true
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: demo serve images test lint imports typecheck unit template build bench lock clean

define install
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --require-hashes -r $(1)
	$(BIN)/python -m pip install --quiet --no-deps -e .
	@rm -f $(VENV)/.$(2)-*
	@touch $@
endef

$(DEV_STAMP): pyproject.toml requirements/dev.txt
	$(call install,requirements/dev.txt,dev)

$(DEMO_STAMP): pyproject.toml requirements/demo.txt
	$(call install,requirements/demo.txt,demo)

demo: $(DEMO_ENV)
	$(BIN)/python -m demo

# The demo's world kept running, for trying `rightsizer` by hand (Ctrl-C stops it). Port 5000, or
# `make serve PORT=8080`; a taken port gives way to a free one, and the printed export line says which. `DAYS=4`:
# fewer days of metrics, seeded faster (the demo's approvals need its 14).
serve: $(DEMO_ENV)
	$(BIN)/python -m demo serve $(if $(PORT),--port $(PORT)) $(if $(DAYS),--days $(DAYS))

# Every picture in docs/images, from a fresh demo run (needs Chromium: docs/development.md); a test checks they are
# current (docs/images/manifest.json).
images: $(DEMO_ENV)
	$(BIN)/python -m demo
	$(BIN)/python -m demo.images

test: lint imports typecheck template build unit

lint: $(DEV_STAMP)
	$(BIN)/ruff check src tests demo bench report_schema statemachine agent
	$(BIN)/ruff format --check src tests demo bench report_schema statemachine agent

# The architecture: the import contracts under [tool.importlinter] in pyproject.toml (docs/architecture.md).
imports: $(DEV_STAMP)
	$(BIN)/lint-imports --no-logo

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

template: $(DEV_STAMP)
	AWS_DEFAULT_REGION=us-east-1 $(BIN)/cfn-lint template.yaml member-account/template.yaml regional/template.yaml agent/ssm-rollout.yaml
	AWS_DEFAULT_REGION=us-east-1 $(BIN)/sam validate --lint --template-file template.yaml
	AWS_DEFAULT_REGION=us-east-1 $(BIN)/sam validate --lint --template-file regional/template.yaml

unit: $(DEV_STAMP)
	$(BIN)/pytest

# Each `sam build` the docs give (README, docs/deploy.md, docs/multi-account.md), as written (samconfig.toml's
# settings), into its own directory under .aws-sam/test-build (`sam deploy` keeps reading .aws-sam/build), then what
# Lambda needs of the result (tests/built_stack.py). The layer's arm64 wheels come from the package index.
# `sam build` runs pip with the functions' runtime, python3.12: the one on PATH, else pyenv's newest 3.12.
SAM_BUILDS := default:--config-env=default dev:--config-env=dev regional:--template-file=regional/template.yaml
build: $(DEV_STAMP)
	@if python3.12 -c '' 2>/dev/null; then py312=; \
	elif command -v pyenv >/dev/null && pyenv versions --bare | grep -q '^3\.12'; then \
	  py312="PYENV_VERSION=$$(pyenv versions --bare | grep '^3\.12' | sort -V | tail -1)"; \
	else \
	  echo "sam build needs Python 3.12 (the functions' runtime) as python3.12 on PATH; none was found." >&2; \
	  echo "Install it (pyenv install 3.12, apt-get install python3.12, brew install python@3.12 or python.org)," >&2; \
	  echo "then run make test again." >&2; exit 1; \
	fi; \
	mkdir -p .aws-sam; \
	for build in $(SAM_BUILDS); do \
	  name=$${build%%:*}; option=$${build#*:}; \
	  echo "sam build $$option (.aws-sam/test-build/$$name) $$py312"; \
	  env $$py312 AWS_DEFAULT_REGION=us-east-1 $(BIN)/sam build $$option --build-dir .aws-sam/test-build/$$name \
	    > .aws-sam/test-build-$$name.log 2>&1 || { cat .aws-sam/test-build-$$name.log; exit 1; }; \
	  $(BIN)/python -m tests.built_stack .aws-sam/test-build/$$name || exit 1; \
	done

# ActionKind (src/rightsizer/domain/action_kinds.py) and statemachine/resize.asl.json are generated from the action
# modules (src/rightsizer/domain/actions/) and the shared workflow (src/rightsizer/domain/workflow/): regenerate them
# after adding an action or editing a fragment (tests/unit/test_statemachine_build.py fails while they differ).
.PHONY: asl
asl: $(DEV_STAMP)
	$(BIN)/python -m statemachine.build --write

# schema/report.schema.json's enums are the registries' (findings, actions, resource kinds, ...), and the table of
# findings in docs/how-it-decides.md is their specs' words: rewrite them after adding or editing one
# (tests/unit/test_report_schema.py fails while they differ).
.PHONY: schema
schema: $(DEV_STAMP)
	$(BIN)/python -m report_schema.build --write

bench: $(DEV_STAMP)
	$(BIN)/python -m bench

# After editing dependencies in pyproject.toml: re-resolve uv.lock and export what pip installs.
# `uv lock --upgrade` moves every pin to the newest allowed release. A test checks these files agree.
lock: $(DEV_STAMP)
	$(BIN)/uv lock
	$(BIN)/uv export --frozen --no-dev --no-emit-project > layer/requirements.txt
	$(BIN)/uv export --frozen --no-dev --group demo --extra cli --no-emit-project > requirements/demo.txt
	$(BIN)/uv export --frozen --all-groups --extra cli --no-emit-project > requirements/dev.txt

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .import_linter_cache .aws-sam
