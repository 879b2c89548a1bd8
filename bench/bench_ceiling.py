"""What these cores do at MiniLM's matrix shapes: numpy's OpenBLAS sgemm, measured.

The "hardware-bound" argument for the embedder (docs/ARCHITECTURE.md) needs a measured
ceiling, not a datasheet one. MiniLM (all-MiniLM-L6-v2) does, per layer and for n tokens,
four (n x 384) @ (384 x 384) products (query, key, value, output), one (n x 384) @ (384 x 1536)
and one (n x 1536) @ (1536 x 384): about 21.2 MFLOP a token over its six layers, all but ~5 %
of the model's arithmetic at ~150 tokens a text. This times exactly those products in fp32 with
OpenBLAS on

- one thread,
- one product split over two threads (what one llama.cpp context with two threads does),
- two one-thread products side by side in two Python threads (what the embedder's lanes do;
  numpy releases the GIL),

interleaved in rounds so that load from other programs falls on all of them alike, and prints
GFLOPS per shape and for one whole forward pass's products, as texts/s of `--tokens` tokens.

    .venv/bin/python bench/bench_ceiling.py [--n 128,512] [--rounds 5] [--seconds 1.0]
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import os
import sys
import threading
import time
from pathlib import Path

#: (rows of the weight, columns of the weight, how many such products per layer)
SHAPES = ((384, 384, 4), (384, 1536, 1), (1536, 384, 1))
LAYERS = 6
#: all-MiniLM-L6-v2's matrix FLOPs per token (2 x weights of the six layers' linear maps).
FLOP_PER_TOKEN = 2 * LAYERS * sum(k * m * c for k, m, c in SHAPES)


def openblas_threads():
    """numpy's bundled OpenBLAS `set_num_threads`, or None if it cannot be found."""
    import numpy as np

    libs = Path(np.__file__).resolve().parent.parent / "numpy.libs"
    for path in glob.glob(str(libs / "libscipy_openblas*.so")) + glob.glob(str(libs / "libopenblas*.so")):
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_", "openblas_set_num_threads"):
            if hasattr(lib, name):
                fn = getattr(lib, name)
                fn.argtypes = [ctypes.c_int]
                return fn
    return None


def time_product(a, b, seconds: float) -> float:
    """Seconds per a @ b (fp32), the median of repeats over about `seconds`."""
    import numpy as np

    out = np.empty((a.shape[0], b.shape[1]), dtype=np.float32)
    np.matmul(a, b, out=out)
    times = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(times) < 5:
        start = time.perf_counter()
        np.matmul(a, b, out=out)
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2]


def measure(n: int, k: int, m: int, mode: str, seconds: float, set_threads) -> float:
    """GFLOPS of (n x k) @ (k x m) in `mode` ("1 thread", "2 threads", "2 lanes")."""
    import numpy as np

    rng = np.random.default_rng(0)
    flop = 2.0 * n * k * m
    if mode == "2 lanes":
        set_threads(1)
        results: list[float] = [0.0, 0.0]
        pairs = [(rng.standard_normal((n, k), dtype=np.float32), rng.standard_normal((k, m), dtype=np.float32)) for _ in range(2)]
        barrier = threading.Barrier(2)

        def lane(i: int) -> None:
            barrier.wait()
            results[i] = time_product(*pairs[i], seconds)

        workers = [threading.Thread(target=lane, args=(i,)) for i in range(2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return sum(flop / t for t in results) / 1e9
    set_threads(1 if mode == "1 thread" else 2)
    a = rng.standard_normal((n, k), dtype=np.float32)
    b = rng.standard_normal((k, m), dtype=np.float32)
    return flop / time_product(a, b, seconds) / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="128,512", help="token counts (rows) to try, comma-separated")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    parser.add_argument("--tokens", type=float, default=123.0, help="tokens per text for the texts/s column")
    args = parser.parse_args()

    import numpy as np

    set_threads = openblas_threads()
    if set_threads is None:
        sys.exit("numpy's OpenBLAS was not found (numpy.libs); cannot set its threads")
    print("command: " + " ".join([Path(sys.executable).name, *sys.argv]))
    print(f"numpy {np.__version__}, {os.cpu_count()} CPUs, load average at start {os.getloadavg()}")
    modes = ("1 thread", "2 threads", "2 lanes")
    ns = [int(x) for x in args.n.split(",")]
    best: dict[tuple[int, int, int, str], float] = {}
    for r in range(args.rounds):
        for n in ns:
            for k, m, _ in SHAPES:
                for mode in modes:
                    g = measure(n, k, m, mode, args.seconds, set_threads)
                    key = (n, k, m, mode)
                    best[key] = max(best.get(key, 0.0), g)
        print(f"  round {r + 1} done; load average {os.getloadavg()}", flush=True)
    print(f"\nGFLOPS, best of {args.rounds} rounds (median of repeats within a round)")
    print(f"{'shape':<28}" + "".join(f"{mode:>12}" for mode in modes))
    for n in ns:
        for k, m, _ in SHAPES:
            print(f"{f'({n} x {k}) @ ({k} x {m})':<28}" + "".join(f"{best[(n, k, m, mode)]:>12.1f}" for mode in modes))
        # one forward pass's products: time-weighted, so the slowest shape counts most
        line = f"{f'MiniLM products, n={n}':<28}"
        rates = []
        for mode in modes:
            seconds = sum(2.0 * n * k * m * c * LAYERS / (best[(n, k, m, mode)] * 1e9) for k, m, c in SHAPES)
            gflops = FLOP_PER_TOKEN * n / seconds / 1e9
            rates.append(gflops)
            line += f"{gflops:>12.1f}"
        print(line)
        print(
            f"{f'  = texts/s at {args.tokens:g} tokens':<28}"
            + "".join(f"{g * 1e9 / (FLOP_PER_TOKEN * args.tokens):>12.1f}" for g in rates)
        )
    print(f"MiniLM matrix FLOPs per token: {FLOP_PER_TOKEN / 1e6:.2f} M; load average at end {os.getloadavg()}")


if __name__ == "__main__":
    main()
