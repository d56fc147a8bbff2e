# The README's two commands: `make run` and `make test`. Both create .venv
# when it is missing and install perfmodel (editable) with its test extra.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.perfmodel-installed

.PHONY: run test test-fast lint bench clean browser bench-tools screenshots

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

# The main job: the printed report, then the sizing notebook executed into out/
# (executed notebook + HTML + sizing.csv; `perfmodel notebooks run` prints where).
run: $(STAMP)
	$(BIN)/perfmodel report --full
	@echo
	@echo "== Sizing notebook (notebooks/05-sizing.ipynb) =="
	$(BIN)/perfmodel notebooks run 05-sizing --out out/notebooks --force
	@cat out/notebooks/05-sizing/defaults-*/conclusion.txt

# The whole suite on every core (pytest-xdist, whole files per worker): about 7 minutes on 2 cores.
test: $(STAMP) browser bench-tools
	$(BIN)/python -m pytest -n auto --dist loadfile

# The edit-test loop: unit and property tests without the slow ones (README commands, the wheel,
# notebooks, browser, simulator comparisons), a tenth of the Hypothesis examples, on every core
# (pytest-xdist; whole files per worker). Under 3 minutes on 2 cores.
test-fast: $(STAMP)
	$(BIN)/python -m pytest tests/unit tests/property -m "not slow" --hypothesis-profile=fast -n auto --dist loadfile

# Chromium and chromedriver for the real-browser test of the planner (Debian's chromium and
# chromium-driver), installed when missing: as root, or with passwordless sudo. Where neither
# works the browser test is skipped and says why; nothing else depends on them.
CHROMIUM_PKGS := chromium chromium-driver
browser:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then :; \
	elif ! command -v apt-get >/dev/null; then \
	  echo "note: no apt-get to install $(CHROMIUM_PKGS): the browser test will be skipped"; \
	else \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; \
	  else echo "note: installing $(CHROMIUM_PKGS) needs root: the browser test will be skipped"; exit 0; fi; \
	  echo "installing $(CHROMIUM_PKGS) (Debian packages) for the browser test"; \
	  ( $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	      --no-install-recommends $(CHROMIUM_PKGS) >/dev/null ) \
	    || echo "note: apt-get could not install $(CHROMIUM_PKGS): the browser test will be skipped"; \
	fi

# The benchmark tools whose real outputs the ingest tests read (tests/unit/test_ingest_real_tools.py):
# Debian's fio, sysbench, redis-server + redis-tools, postgresql (pgbench), memcached +
# libmemcached-tools (memaslap) and rocksdb-tools (db_bench), installed when missing: as root, or with
# passwordless sudo. Where neither works those tests are skipped and say why (PERFMODEL_REQUIRE_TOOLS=1,
# as .ci/run sets, makes a missing tool a failure).
BENCH_PKGS := fio sysbench redis-server redis-tools postgresql memcached libmemcached-tools rocksdb-tools
BENCH_BINS := fio sysbench redis-server redis-benchmark memcached memcaslap db_bench
bench-tools:
	@missing=; for b in $(BENCH_BINS); do command -v $$b >/dev/null || missing="$$missing $$b"; done; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing initdb"; \
	if [ -z "$$missing" ]; then :; \
	elif ! command -v apt-get >/dev/null; then \
	  echo "note: no apt-get to install$$missing: their ingest tests will be skipped"; \
	else \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; \
	  else echo "note: installing$$missing needs root: their ingest tests will be skipped"; exit 0; fi; \
	  echo "installing $(BENCH_PKGS) (Debian packages) for the ingest tests"; \
	  ( $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	      --no-install-recommends $(BENCH_PKGS) >/dev/null ) \
	    || echo "note: apt-get could not install $(BENCH_PKGS): their ingest tests will be skipped"; \
	fi

# docs/screenshots/planner-*.png: the planner in JupyterLab (headless Chromium) at the defaults, at a
# high target and with an SLO no candidate meets
screenshots: $(STAMP) browser
	$(BIN)/python tests/browser/screenshots.py

lint: $(STAMP)
	$(BIN)/ruff check perfmodel tools tests benchmarks notebooks

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) dist build .pytest_cache .hypothesis
