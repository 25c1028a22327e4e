"""PyTorch side of bench:engine's roofline (bench/roofline.ts): float32 matmul GFLOPS on N x N and
the bandwidth of an elementwise add over large arrays (read 2, write 1; STREAM's "add", output
pre-allocated). Best of `reps` runs after a warm-up. Prints one JSON line (a Measurement).
"""
import json, resource, sys, time
import torch

args = json.loads(sys.argv[1])
torch.set_num_threads(args["threads"])


def best_seconds(fn, reps):
    fn()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


n = args["matmul_size"]
a, b = torch.randn(n, n), torch.randn(n, n)
c = torch.empty(n, n)
matmul_s = best_seconds(lambda: torch.matmul(a, b, out=c), args["reps"])

length = args["stream_megabytes"] * 2**20 // 4
x, y, out = torch.randn(length), torch.randn(length), torch.empty(length)
add_s = best_seconds(lambda: torch.add(x, y, out=out), args["reps"])

print(json.dumps({
    "system": f"PyTorch {torch.__version__} (matmul, add)",
    "threads": str(torch.get_num_threads()),
    "figures": {"matmulGflops": 2 * n**3 / matmul_s / 1e9, "addGBps": 3 * 4 * length / add_s / 1e9},
    "peakRssMb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "note": f"matmul {n}²; add {args['stream_megabytes']} MB arrays; best of {args['reps']}; BLAS {torch.backends.mkl.is_available() and 'MKL' or 'other'}",
}))
