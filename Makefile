# hivewire developer tasks. The README's two commands are `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?=
# Two test processes, each with its own services, a file's tests kept together (module fixtures start once):
# most integration tests wait on services or subprocesses, so two overlap their waits on a 2-core machine (with a
# third, tried, the services each process keeps to its end took 18 of 24 GB while the cores were mostly busy).
# --no-loadscope-reorder keeps tests/conftest.py's order (the longest files first); xdist's default would sort
# the files by their number of tests and leave the long one-test files for last, alone.
TEST_WORKERS ?= -n 2 --dist loadfile --no-loadscope-reorder
# The suite must stay well under CI's time: its 30 slowest tests are printed at the end of every run.
TEST_REPORT ?= --durations=30
BASE ?= HEAD
# The Maven repository of the test peers Maven Central does not serve (Drone Fly, Apiary 8.x): make jvm resolves
# them from it and tests/peers runs beside them. Default: ../shared/peers/m2 beside this checkout, when it exists.
PEERS_M2 ?= $(or $(HIVEWIRE_PEERS_M2),$(wildcard $(abspath ..)/shared/peers/m2))
ifneq ($(PEERS_M2),)
export HIVEWIRE_PEERS_M2 := $(abspath $(PEERS_M2))
endif
BENCH ?=
# rustup puts cargo in ~/.cargo/bin, which a non-login shell (CI) may not have on PATH: pip needs it to build the
# native event decoder (native/), so it is added when it is there.
ifneq ($(wildcard $(HOME)/.cargo/bin/cargo),)
export PATH := $(HOME)/.cargo/bin:$(PATH)
endif

.PHONY: help install jvm demo test unit integration lint format generate thrift thrift-check bench bench-compare clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

$(BIN)/python:
	PYTHON=$(PYTHON) ./dev/prereqs.sh --python
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# An editable install of a package spread over three source roots (sdk/, shim/, thrift/) is made by setuptools
# with an import hook, and setuptools prints a 10-line "Editable installation" notice about it on every
# install (a wheel, pip install hivewire, prints nothing); that notice alone is silenced.
EDITABLE := PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install -q -e

install: $(BIN)/python  ## create .venv and install hivewire with its test dependencies
	$(EDITABLE) '.[test]'

# The Java components from Maven Central (sdk/hivewire/tools/jvm/pom.xml pins every version): fetched once by Maven,
# their classpaths cached in ~/.cache/hivewire/jvm, so later runs need no network. COMPONENTS= narrows the list.
COMPONENTS ?=
jvm: $(BIN)/python  ## fetch the Java components (Apache Kafka, ...) from Maven Central once; later runs use the cache
	./dev/prereqs.sh --with-maven
	$(BIN)/python -m hivewire.tools._jvm resolve $(COMPONENTS)

demo: $(BIN)/python  ## install hivewire and run the demo: shim -> Kafka -> listener, ZooKeeper, a DataFrame
	./dev/prereqs.sh
	$(EDITABLE) '.[spark,arrow]'
	$(MAKE) jvm COMPONENTS=kafka
	$(BIN)/hivewire demo

test: install  ## install and run the whole test suite (unit + integration against real services)
	./dev/prereqs.sh --with-thrift
	$(MAKE) jvm
	$(BIN)/python -m pytest $(TEST_WORKERS) $(TEST_REPORT) $(PYTEST_ARGS)

unit: install  ## only the fast unit tests
	$(BIN)/python -m pytest -m unit $(PYTEST_ARGS)

integration: install  ## only the integration tests (real HMS, ZooKeeper, Kafka, Spark)
	./dev/prereqs.sh
	$(MAKE) jvm
	$(BIN)/python -m pytest -m integration $(TEST_WORKERS) $(PYTEST_ARGS)

lint:  ## ruff check, ruff format --check, mypy (strict)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format:  ## rewrite the code in ruff's format and apply ruff's safe fixes
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

generate:  ## regenerate what idl/ describes: thrift/hivewire_thrift (code, stubs, JSON loaders), the event types' code
	$(BIN)/python idl/generate.py
	$(BIN)/python idl/generate_events.py

thrift: generate  ## the same as generate

thrift-check:  ## fail if the committed generated code differs from what idl/ generates
	$(BIN)/python idl/generate.py --check
	$(BIN)/python idl/generate_events.py --check

bench:  ## run every benchmark in bench/, print the ratios and refresh bench/README.md with them
	@for b in bench/bench_*.py; do \
	  if [ $$b = bench/bench_dronefly.py ] && [ -z "$$HIVEWIRE_PEERS_M2" ]; then \
	    echo "== $$b: not run (no peers' Maven repository: set PEERS_M2)"; continue; fi; \
	  echo "== $$b"; $(BIN)/python $$b --update-readme || exit 1; done

bench-compare:  ## the benchmarks' figures, this tree against commit BASE (default HEAD), side by side
	$(BIN)/python bench/compare.py --base $(BASE) $(BENCH)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
