# The README's two commands: `make run` and `make test`. Both create .venv
# when it is missing and install perfmodel (editable) with its test extra.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.perfmodel-installed

.PHONY: run test lint bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

# The main job: the printed report, then the sizing notebook executed into out/
# (executed notebook + HTML + sizing.csv; `perfmodel notebooks run` prints where).
run: $(STAMP)
	$(BIN)/perfmodel report
	@echo
	@echo "== Sizing notebook (notebooks/05-sizing.ipynb) =="
	$(BIN)/perfmodel notebooks run 05-sizing --out out/notebooks --force
	@cat out/notebooks/05-sizing/defaults-*/conclusion.txt

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check perfmodel tests benchmarks notebooks

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) dist build .pytest_cache .hypothesis
