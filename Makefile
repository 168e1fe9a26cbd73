# Gantry: two set-up commands, `make run` and `make test`. Everything they need is installed here.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.requirements-installed
DEV_STAMP := $(VENV)/.requirements-dev-installed
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Test processes: two per core (most tests wait on servers, sockets and clocks, so two per core keep the
# cores busy; one per core left them ~60 % idle), at most 8 (each has its own cluster, redis-server, Spark
# session and, in the second pass, PostgreSQL server). Whole files are handed out one at a time in
# collection order (--dist loadfile --no-loadscope-reorder): a module's fixtures are set up once, no
# worker sits on a queue of tests while the others are done, and browser tests stay last (tests/conftest.py).
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$(( n * 2 > 8 ? 8 : n * 2 )))

.PHONY: run test check setup system venv dev-venv speedups migrate interop clean-var bench

run: setup
	$(PY) manage.py ensure_admin
	$(PY) manage.py run_embedded

test: setup dev-venv
	@$(MAKE) --no-print-directory system NEED_BROWSER=1 NEED_POSTGRES=1 NEED_MAVEN=1
	@$(MAKE) --no-print-directory interop
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
	GANTRY_TEST_DB=postgres GANTRY_PURE_PYTHON=1 GANTRY_EVENT_LOOP=asyncio $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder -m "not e2e and not interop"  # the DB-touching tests again, on PostgreSQL (browser tests: SQLite only), on the pure-Python codecs and asyncio's own event loop; Apache's Java pieces (interop) run in the first pass only

# The fast guardrail, under a minute: ruff's lint and its formatter (checked, not applied) and mypy, as
# pyproject.toml configures them (strict on brokers/engine). CI runs it before make test. `$(PY) -m ruff
# format .` formats the tree; mypy keeps its cache in .mypy_cache (a cold run ~9 s of CPU, a warm one ~1 s).
check: dev-venv
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

setup: system venv speedups migrate

# The runtime (requirements.txt) for make run; make test and make check add the test and lint tools
# (requirements-dev.txt, which includes requirements.txt), re-installed when either file changes.
venv: $(STAMP)
dev-venv: $(DEV_STAMP)

$(STAMP): requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	@touch $(STAMP)

$(DEV_STAMP): $(STAMP) requirements-dev.txt
	$(PY) -m pip install --quiet -r requirements-dev.txt
	@touch $(DEV_STAMP)

# Install what is missing, only what is missing: redis-server (Celery broker, benchmarks), a JRE
# for Spark, and for the tests a JDK and Maven (Apache RocketMQ's Java clients and servers, tests/interop), Debian's chromium (driven by Playwright) with a Chinese font (fonts-wqy-zenhei: the
# Chinese pages' screenshots show characters, not boxes) and postgresql (the suite's
# PostgreSQL run starts private servers from its initdb/postgres, in /usr/lib/postgresql/N/bin).
system:
	@missing=""; \
	command -v redis-server >/dev/null 2>&1 || missing="$$missing redis-server"; \
	command -v java >/dev/null 2>&1 || missing="$$missing default-jre-headless"; \
	if [ -n "$(NEED_BROWSER)" ]; then command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; fi; \
	if [ -n "$(NEED_BROWSER)" ]; then fc-list :lang=zh 2>/dev/null | grep -q . || missing="$$missing fonts-wqy-zenhei"; fi; \
	if [ -n "$(NEED_MAVEN)" ]; then command -v javac >/dev/null 2>&1 || missing="$$missing default-jdk-headless"; fi; \
	if [ -n "$(NEED_MAVEN)" ]; then command -v mvn >/dev/null 2>&1 || missing="$$missing maven"; fi; \
	if [ -n "$(NEED_POSTGRES)" ]; then command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; fi; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

# The compiled twins of the frame, record, batch and properties codecs and the Java string hash
# (brokers/engine/speedups.py), built in place with gcc; a no-op when no .pyx (or .pxd it cimports) changed.
# GANTRY_PURE_PYTHON=1 runs without them.
speedups: venv
	$(PY) tools/build_speedups.py

# Apache RocketMQ's Java clients, mqadmin, name server and broker for the interop suite (tests/interop),
# resolved by Maven from interop/pom.xml (no jars in the repository; ~/.m2 is Maven's cache), with our
# small Java driver built against each client; a no-op when no pom or driver source changed.
interop: venv
	$(PY) tools/build_interop.py

migrate: venv
	$(PY) manage.py migrate --noinput -v 0

# Every row of the performance goals (docs/benchmarks.md); BENCH_QUICK=1: small parameters, a smoke test.
bench: setup
	$(PY) -m pip install --quiet -r bench/requirements.txt
	$(PY) bench/run_all.py $(if $(BENCH_QUICK),--quick)

clean-var:
	rm -rf var
