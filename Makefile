# offsetguard — `make run` and `make test` do everything on a fresh machine (see README.md).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed
JARS := deploy/sandbox/lib/.resolved
SPARK_JARS := deploy/spark/lib/.resolved
# The other Kafka releases of the version matrix (sandbox/versions.py), for make test only
MATRIX_JARS := deploy/sandbox/versions/.resolved
CONFIG ?=
PYTEST_ARGS ?=

.PHONY: install tools run test check lint imports typecheck pytest bench clean

$(INSTALLED): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

$(JARS): deploy/sandbox/pom.xml
	mvn -q -B -f deploy/sandbox/pom.xml dependency:copy-dependencies
	touch $@

# Test tools: Prometheus, promtool, Alertmanager, Chromium, PostgreSQL's initdb/pg_ctl (Debian packages) and
# helm (built from the Go module proxy into ~/.cache/offsetguard/tools); each is a no-op when present.
tools:
	deploy/tools/install-prometheus.sh
	deploy/tools/install-alertmanager.sh
	deploy/tools/install-chromium.sh
	deploy/tools/install-postgresql.sh
	deploy/tools/install-helm.sh

# spark-sql-kafka-0-10 (matching pyspark) for `offsetguard pipeline history --source kafka`.
$(SPARK_JARS): deploy/spark/pom.xml
	mvn -q -B -f deploy/spark/pom.xml dependency:copy-dependencies
	touch $@

$(MATRIX_JARS): $(INSTALLED) deploy/sandbox/pom.xml deploy/sandbox/pom-3.x.xml sandbox/versions.py
	$(VENV)/bin/offsetguard sandbox jars --all
	touch $@

install: $(INSTALLED) $(JARS) $(SPARK_JARS) tools

# A real cluster instead of the sandbox: make run CONFIG=path/to/offsetguard.yaml
run: install
ifeq ($(strip $(CONFIG)),)
	$(VENV)/bin/offsetguard serve --sandbox .sandbox/run
else
	$(VENV)/bin/offsetguard serve --config $(CONFIG)
endif

test: check

check: install lint imports typecheck pytest

lint: $(INSTALLED)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# The layers and the one door to Kafka, as contracts ([tool.importlinter] in pyproject.toml)
imports: $(INSTALLED)
	$(VENV)/bin/lint-imports

typecheck: $(INSTALLED)
	$(VENV)/bin/mypy

# Two workers: the tests of the real components (Kafka, Spark) on one, in order, the rest beside them
# (tests/parallel.py); PYTEST_WORKERS=0 runs everything in one process
PYTEST_WORKERS ?= 2
pytest: install $(MATRIX_JARS)
	$(PY) -m pytest $(if $(filter-out 0,$(PYTEST_WORKERS)),-n $(PYTEST_WORKERS) --dist loadgroup) $(PYTEST_ARGS)

# Every benchmark (each prints its figures and writes bench/results/<name>.json); one: make bench BENCH=poll
# bench/service (the whole service at fleet sizes, ~1 h for three sizes) runs alone: make bench BENCH=service
BENCH ?= codec store_write state_save poll decode detect evaluate api api_metrics pipeline
bench: install
	set -e; for b in $(BENCH); do echo "== bench/$$b"; $(PY) -m bench.$$b; done

clean:
	rm -rf $(VENV) deploy/sandbox/lib deploy/sandbox/versions deploy/spark/lib .sandbox var
