# The README's commands. `make run` and `make test` work on a fresh machine: they create the virtual
# environment, install the project with its dev extras, and (for tests) the system packages tests use.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
HOST ?= 127.0.0.1
PORT ?= 8000
BENCH_REDIS_PORT ?= 46379

.PHONY: run test check lint typecheck pytest bench bench-market openapi system-deps clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

## Run the service on the embedded in-memory store with the bundled reference catalog.
run: $(STAMP)
	$(BIN)/gpuquote serve --host $(HOST) --port $(PORT)

## Lint, type-check and run every test (a real Redis is started for the Redis tests).
test: $(STAMP) system-deps lint typecheck pytest

## Before a commit: lint, type-check and the fast tests (everything but the tests marked slow).
check: $(STAMP) lint typecheck
	$(BIN)/pytest -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest

# redis-server backs the Redis tests when neither GPUQUOTE_TEST_REDIS_URL nor a Docker engine is there.
system-deps:
	@command -v redis-server >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq redis-server >/dev/null; \
	  else echo "redis-server not found: install it (apt-get install redis-server) or set GPUQUOTE_TEST_REDIS_URL"; fi; }
	@# wrk is the load generator of `make bench` (bench/http_load.py).
	@command -v wrk >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq wrk >/dev/null; \
	  else echo "wrk not found: install it (apt-get install wrk) for make bench"; fi; }
	@# The explorer's browser tests drive the system chromium (Playwright cannot download browsers here).
	@test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	  else echo "/usr/bin/chromium not found: install it (apt-get install chromium) for the explorer tests"; fi; }

# wrk drives the HTTP benchmark (loopback only); redis-server backs the refresh benchmark's Redis write.
bench: $(STAMP) system-deps
	$(BIN)/python bench/quote.py
	$(BIN)/python bench/http_load.py
	@port=$(BENCH_REDIS_PORT); \
	  redis-server --port $$port --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
	    --pidfile /tmp/gpuquote-bench-redis-$$port.pid >/dev/null && sleep 0.5; \
	  $(BIN)/python bench/refresh.py --redis-url redis://127.0.0.1:$$port/0; status=$$?; \
	  kill $$(cat /tmp/gpuquote-bench-redis-$$port.pid); exit $$status

# The market-scale measures in one table (bench/market.py, about 3 minutes; QUICK=1 for a smoke run). It
# starts its own redis-server on a free port for the Redis measure.
bench-market: $(STAMP) system-deps
	$(BIN)/python bench/market.py $(if $(QUICK),--quick)

openapi: $(STAMP)
	$(BIN)/gpuquote openapi

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
