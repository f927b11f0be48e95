# Two commands matter on a fresh machine: `make run` and `make test`. Both install what they need.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
SPARK_STAMP := $(VENV)/.spark-installed
FUZZ_STAMP := $(VENV)/.fuzz-installed
NATIVE := $(VENV)/.native-built
PURE_DIR := $(VENV)/pure-python-tree
PORT   ?= 6379
FUZZ_SECONDS ?= 600
# Most tests wait on server processes and sockets, so two workers nearly halve the suite's time
# even on 2 cores; each worker takes whole files, whose servers and fixtures stay per file.
PYTEST_PARALLEL ?= -n 2 --dist loadfile
# What setup.py compiles is among these; any of them changing rebuilds (75-90 s on 2 cores).
SOURCES := $(wildcard protocol/*.py server/*.py server/commands/*.py server/rdb/*.py server/replication/*.py streams/*.py hashes/*.py lists/*.py sets/*.py zsets/*.py)

.PHONY: run test test-pure lint bench bench-spark failover tools clean java pipeline docker-test build fuzz fuzz-atheris

# Editable installs in compat mode put the checkout on sys.path, so that Spark's discovery of
# pyspark_* data source modules finds pyspark_redis_streams. They skip the compilation: the next
# step does it once, in place, with the venv's mypy (setup.py; pure Python without a compiler).
$(STAMP): pyproject.toml setup.py
	@command -v cc >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  echo "installing gcc (Debian package) for the compiled modules" && apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev >/dev/null; } || \
	  echo "no C compiler: the server installs as pure Python (same behaviour, slower)"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip 'setuptools>=77'
	RIVULET_PURE_PYTHON=1 $(PY) -m pip install -q -e '.[test]' --config-settings editable_mode=compat
	touch $(STAMP)

# After an edit: compiled modules older than their sources would still be the ones imported.
$(NATIVE): $(STAMP) $(SOURCES)
	$(PY) setup.py -q build_ext --inplace
	touch $(NATIVE)

build: $(NATIVE)

# redis-server / redis-cli / redis-benchmark / redis-sentinel from Debian's packages: used by the
# redis-cli tests, the differential tests against a real Redis, the replication and Sentinel
# failover tests, and the benchmarks.
tools:
	@command -v redis-server >/dev/null && command -v redis-cli >/dev/null && command -v redis-sentinel >/dev/null || \
	  { echo "installing redis-server, redis-tools and redis-sentinel (Debian packages)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools redis-sentinel >/dev/null) \
	    || echo "could not install redis-server/redis-tools/redis-sentinel: the tests that need them will say so"; }

run: $(NATIVE)
	mkdir -p data
	$(PY) -m server --port $(PORT) --dir data

test: $(NATIVE) tools $(SPARK_STAMP) java
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(PY) -m pytest -q $(PYTEST_PARALLEL)
	$(MAKE) --no-print-directory test-pure

# The suite once more on the pure-Python modules, what a machine without a C compiler runs: a
# copy of the sources without the compiled ones. It is there for what compilation could change:
# the commands' replies and effects, the protocol, persistence and replication. Left to the
# compiled run: the tests that drive other processes whose Python is the same on both builds and
# whose checks of the server are made, on both builds, by the command and replication tests:
# Spark, the benchmark harness, Redis Sentinel promoting and following Rivulet servers, the
# Docker files; and the console script, which is the installed package's, i.e. the checkout's.
COMPILED_ONLY := tests/test_spark*.py tests/test_bench.py tests/test_bench_runner.py \
  tests/test_sets_bench.py tests/test_rdb_file_bench.py tests/test_failover.py \
  tests/test_replication_sentinel.py tests/test_docker_static.py
COMPILED_ONLY_TESTS := tests/test_cli.py::test_console_script \
  tests/test_replication_interop.py::test_sentinel_discovers_the_replicas_of_a_rivulet_master
test-pure: $(STAMP) tools
	rm -rf $(PURE_DIR) && mkdir -p $(PURE_DIR)
	tar -c --exclude=./.venv --exclude=./.git --exclude=./build --exclude=./data --exclude='*.so' \
	  --exclude=__pycache__ . | tar -x -C $(PURE_DIR)
	cd $(PURE_DIR) && RIVULET_PURE_PYTHON=1 $(abspath $(PY)) -m pytest -q -p no:cacheprovider $(PYTEST_PARALLEL) \
	  $(foreach f,$(COMPILED_ONLY),'--ignore-glob=$(f)') $(addprefix --deselect ,$(COMPILED_ONLY_TESTS))

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

bench: $(NATIVE) tools
	$(PY) -m bench

# Sentinel failover under load (bench/failover.py): Rivulet, then redis-server, the same scenario.
failover: $(NATIVE) tools
	$(PY) -m bench.failover

# Hostile input (fuzz/): generated and mutated requests against the parser and the command layer
# in process, against a live server over TCP, and reply types against redis-server. Stops by
# itself after FUZZ_SECONDS (make fuzz FUZZ_SECONDS=60); exit status 1 on a crash, hang or leak.
fuzz: $(NATIVE) tools
	nice -n 10 $(PY) -m fuzz --seconds $(FUZZ_SECONDS)

# Coverage-guided fuzzing of the request parser with atheris (libFuzzer), on the pure-Python
# parser (atheris instruments Python bytecode, not compiled modules).
fuzz-atheris: $(FUZZ_STAMP)
	RIVULET_PURE_PYTHON=1 nice -n 10 $(PY) -m fuzz.atheris_parser -max_total_time=$(FUZZ_SECONDS)

$(FUZZ_STAMP): $(STAMP)
	RIVULET_PURE_PYTHON=1 $(PY) -m pip install -q -e '.[fuzz]' --config-settings editable_mode=compat
	touch $(FUZZ_STAMP)

# Spark source and sink throughput (entries/s), against Rivulet and redis-server.
bench-spark: $(NATIVE) $(SPARK_STAMP) java tools
	$(PY) -m bench.spark_bench

# The Docker images and the compose stack, run for real (docker/test.sh); skips, saying why,
# only when no Docker engine can be started.
docker-test: $(STAMP)
	bash docker/test.sh

clean:
	rm -rf $(VENV) data .pytest_cache

# --- Spark (the redis_streams source and sink, spark/) ---------------------------------------
$(SPARK_STAMP): $(STAMP)
	RIVULET_PURE_PYTHON=1 $(PY) -m pip install -q -e '.[spark]' --config-settings editable_mode=compat
	touch $(SPARK_STAMP)

# Spark needs a Java 17+ runtime: install Debian's when root, else say what to install.
java:
	@v=$$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1); \
	if [ -z "$$v" ] || [ "$$v" -lt 17 ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing openjdk-17-jre-headless (Debian package) for Spark"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null; \
	  else echo "Spark needs a Java 17+ runtime: install openjdk-17-jre-headless (or set JAVA_HOME)"; exit 1; fi; \
	fi

# The example pipeline: a server on $(PORT) (started if none answers), the sensor producer and the
# streaming job; prints per-sensor 10-second averages from sensors:avg as they arrive.
pipeline: $(NATIVE) $(SPARK_STAMP) java
	$(PY) examples/sensor_pipeline.py --port $(PORT)
