# Two commands on a fresh machine: `make demo` and `make test`. Both build .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
export SAM_CLI_TELEMETRY := 0
export AWS_EC2_METADATA_DISABLED := true
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: demo test lint typecheck unit template bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@rm -f $(VENV)/.installed-*
	@touch $@

demo: $(STAMP)
	$(BIN)/python -m demo

test: lint typecheck template unit

lint: $(STAMP)
	$(BIN)/ruff check src tests demo bench
	$(BIN)/ruff format --check src tests demo bench

typecheck: $(STAMP)
	$(BIN)/mypy

template: $(STAMP)
	@if [ -f template.yaml ]; then \
	  AWS_DEFAULT_REGION=us-east-1 $(BIN)/cfn-lint template.yaml && \
	  AWS_DEFAULT_REGION=us-east-1 $(BIN)/sam validate --lint --template-file template.yaml; \
	fi

unit: $(STAMP)
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .aws-sam
