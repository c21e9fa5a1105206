# Two commands set everything up on a fresh machine with only Python: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
DEMO   := demo

.PHONY: install demo figures test bench check-reference clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

## The main job on data the project generates itself (nothing is downloaded but packages).
demo: $(STAMP)
	$(BIN)/python -m hbb2obb.synthetic $(DEMO)/data --frames 12 --seed 7
	$(BIN)/hbb2obb-eval $(DEMO)/data/labels_obb_gt $(DEMO)/data/labels_obb_pred -mp $(DEMO)/data/classes.yaml \
		-i $(DEMO)/data/images -o $(DEMO)/eval/metrics.yaml --missing_pred empty
	@echo
	@echo "Demo outputs are under $(DEMO)/: data/ (generated dataset), eval/metrics.yaml"

## The README's pictures, drawn from the demo data: docs/worst_iou.png (contact sheet), docs/overlay.jpg.
figures: $(STAMP)
	$(BIN)/python -m hbb2obb.synthetic $(DEMO)/data --frames 12 --seed 7
	$(BIN)/python scripts/readme_figures.py $(DEMO)/data docs

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python scripts/bench.py

## Our numbers against the reference tool's on the shared real sample (needs ../shared).
check-reference: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python ../shared/tools/check_reference.py --run

clean:
	rm -rf $(VENV) $(DEMO) .pytest_cache .hypothesis *.egg-info
