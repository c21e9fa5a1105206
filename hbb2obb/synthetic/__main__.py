"""``python -m hbb2obb.synthetic OUT_DIR``: write a synthetic data set (see :mod:`hbb2obb.synthetic.dataset`)."""

import sys

from hbb2obb.synthetic.dataset import main

sys.exit(main())
