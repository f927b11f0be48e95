# Two commands matter on a fresh machine: `make run` and `make test`. Both install what they need.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PORT   ?= 6379

.PHONY: run test lint bench tools clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

# redis-server / redis-cli / redis-benchmark from Debian's packages: used by the redis-cli tests,
# the differential tests against a real Redis, and the benchmarks.
tools:
	@command -v redis-server >/dev/null && command -v redis-cli >/dev/null || \
	  { echo "installing redis-server and redis-tools (Debian packages)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools >/dev/null) \
	    || echo "could not install redis-server/redis-tools: the tests that need them will say so"; }

run: $(STAMP)
	mkdir -p data
	$(PY) -m server --port $(PORT) --dir data

test: $(STAMP) tools
	$(PY) -m ruff check .
	$(PY) -m pytest -q

lint: $(STAMP)
	$(PY) -m ruff check .

bench: $(STAMP) tools
	$(PY) -m bench

clean:
	rm -rf $(VENV) data .pytest_cache
