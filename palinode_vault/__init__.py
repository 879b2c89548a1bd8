"""palinode-vault: keeps an Obsidian vault used as durable memory clean, linked and searchable."""

import os

__version__ = "0.1.0"

# One BLAS thread, unless the person chose otherwise. numpy's OpenBLAS threads spin for a while
# after each product and take the core llama.cpp's embedding thread needs: on 2 cores a hybrid
# search over 30,000 vectors took a median 31 ms with the default threads and about half that
# with one (docs/BENCHMARKS.md). Set here because OpenBLAS reads it once, when numpy loads.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
