# Two commands matter on a fresh machine: `make run` and `make test`. Both install what they need.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
SPARK_STAMP := $(VENV)/.spark-installed
PORT   ?= 6379

.PHONY: run test lint bench bench-spark tools clean java pipeline docker-test

# Editable installs in compat mode put the checkout on sys.path, so that Spark's discovery of
# pyspark_* data source modules finds pyspark_redis_streams.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]' --config-settings editable_mode=compat
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

test: $(STAMP) tools $(SPARK_STAMP) java
	$(PY) -m ruff check .
	$(PY) -m pytest -q

lint: $(STAMP)
	$(PY) -m ruff check .

bench: $(STAMP) tools
	$(PY) -m bench

# Spark source and sink throughput (entries/s), against Rivulet and redis-server.
bench-spark: $(SPARK_STAMP) java tools
	$(PY) -m bench.spark_bench

# The Docker images and the compose stack, run for real (docker/test.sh); skips, saying why,
# only when no Docker engine can be started.
docker-test: $(STAMP)
	bash docker/test.sh

clean:
	rm -rf $(VENV) data .pytest_cache

# --- Spark (the redis_streams source and sink, spark/) ---------------------------------------
$(SPARK_STAMP): $(STAMP)
	$(PY) -m pip install -q -e '.[spark]' --config-settings editable_mode=compat
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
pipeline: $(SPARK_STAMP) java
	$(PY) examples/sensor_pipeline.py --port $(PORT)
