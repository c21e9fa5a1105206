# Two commands set everything up on a fresh machine with only Python: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
DEMO   := demo

.PHONY: install demo figures test lint bench check-reference clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@# setuptools warns on every editable install that same-named folders may shadow the package;
	@# this checkout is that folder, by design: the one message is filtered, nothing else.
	PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

## The main job on data the project generates itself (nothing is downloaded but packages):
## generate a dataset, sweep the built-in converter, convert with the best point, score, analyze.
demo: $(STAMP)
	$(BIN)/python -m hbb2obb.synthetic $(DEMO)/data --frames 12 --seed 7
	$(BIN)/hbb2obb-optimize $(DEMO)/data/images $(DEMO)/data/labels_obb_gt -o $(DEMO)/sweep -n image \
		-sf 0 0.02 -ok 0.1 0.2 -pm iou_at_90 -nb
	$(BIN)/hbb2obb $(DEMO)/data/images --hbb_dir $(DEMO)/data/labels_hbb --obb_dir $(DEMO)/converted \
		--params_from $(DEMO)/sweep/image/results.yaml -nb
	$(BIN)/hbb2obb-eval $(DEMO)/data/labels_obb_gt $(DEMO)/converted -mp $(DEMO)/data/classes.yaml \
		-i $(DEMO)/data/images -o $(DEMO)/eval/metrics.yaml --overlay $(DEMO)/eval/overlays -nb
	@echo "note: the simulated baseline (labels_obb_pred) lacks one frame's file on purpose (the missing prediction file the generator names above): the warning about it below is expected"
	$(BIN)/hbb2obb-analyze $(DEMO)/data/labels_obb_gt $(DEMO)/converted -mp $(DEMO)/data/classes.yaml \
		-hd $(DEMO)/data/labels_hbb -i $(DEMO)/data/images --baseline $(DEMO)/data/labels_obb_pred \
		--worst 12 -o $(DEMO)/analysis -nb
	@echo
	@echo "Demo outputs, all under $(DEMO)/:"
	@echo "  data/            the generated dataset: images, GT OBBs, HBB prompts, a simulated SAM-like conversion"
	@echo "  sweep/image/     results.yaml, summary.txt, plot.png, plot_iou_at_90.png of the converter sweep"
	@echo "  converted/       the HBBs converted with the best grid point"
	@echo "  eval/            metrics.yaml (the metric dict) and overlays/ (one picture per frame)"
	@echo "  analysis/        analysis.md, analysis.yaml, analysis.png, worst_iou.png, worst_angle.png"

## The manual's pictures (README.md, docs/), drawn from the demo data: docs/worst_iou.png (contact sheet), docs/overlay.jpg.
figures: $(STAMP)
	$(BIN)/python -m hbb2obb.synthetic $(DEMO)/data --frames 12 --seed 7
	$(BIN)/python tools/readme_figures.py $(DEMO)/data docs

## Lint (ruff), the layers of the package (import-linter, see pyproject.toml), then the suite.
test: lint
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check --no-cache .
	$(BIN)/lint-imports --no-cache

## The documentation site into site/ (mkdocs, strict: a broken link or anchor fails); open site/index.html.
.PHONY: docs
docs: $(STAMP)
	$(BIN)/mkdocs build --strict --site-dir site

bench: $(STAMP)
	$(BIN)/python benchmarks/bench.py

## Our numbers against the reference tool's on the shared real sample (needs ../shared).
check-reference: $(STAMP)
	@test -f ../shared/tools/check_reference.py || { echo "check-reference: the real sample is not beside this checkout (no ../shared/tools/check_reference.py): nothing checked"; exit 1; }
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python ../shared/tools/check_reference.py --run

clean:
	rm -rf $(VENV) $(DEMO) .bench .pytest_cache .hypothesis *.egg-info
