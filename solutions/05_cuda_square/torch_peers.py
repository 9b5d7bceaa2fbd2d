"""The CUDA labs' references against PyTorch, timed by one timer (triton.testing.do_bench, which
flushes the L2 between runs), in one process, on the same tensors, in alternating rounds: lab 05's
square against torch.square, lab 06's normalize against F.layer_norm (no affine). Percentages are of
a 1 GiB copy_ measured the same way, as in the project's anchors (../shared/anchors/peers_gpu.py).

Build a lab's reference as a shared library, then run this on a GPU machine with PyTorch and
Triton, from the repository root (solutions/05_cuda_square/device_check.sh does both):
  nvcc -O3 -std=c++20 -arch=sm_90 -shared -Xcompiler -fPIC -Ilabs/05_cuda_square -Icommon/include \\
       solutions/05_cuda_square/*.cu common/src/cuda/check.cpp common/src/not_implemented.cpp \\
       common/src/require.cpp -o /tmp/liblab05.so
  python3 solutions/05_cuda_square/torch_peers.py /tmp/liblab05.so [--rounds 6] [--variants]
(lab 06 likewise, from labs/06_cuda_normalize and solutions/06_cuda_normalize). Bytes counted:
each input read once, each output written once."""
import ctypes
import sys

import torch
import torch.nn.functional as F
from triton.testing import do_bench

ROUNDS = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 2
EPS = 1e-5
lib = ctypes.CDLL(sys.argv[1])


def median_us(fn):
    return do_bench(fn, warmup=50, rep=300, return_mode="median") * 1e3


def checked(status):
    if status != 0:
        raise RuntimeError("the reference failed (see its C entry point in capi.cu)")


def compare(shape, impls, copy_gbs):
    """Times each implementation in ROUNDS rounds, forward then backward, and prints the means."""
    rows, cols = shape
    times = {k: [] for k in impls}
    for r in range(ROUNDS):  # A B, then B A, ...: drift hits every implementation alike
        for k in (list(impls) if r % 2 == 0 else list(reversed(impls))):
            times[k].append(median_us(impls[k]))
    for k, ts in times.items():
        us = sum(ts) / len(ts)
        gbs = 2 * rows * cols * 4 / us / 1e3
        print(f"{rows:>5}x{cols:<6} {k:>22} {us:9.1f} {gbs:7.0f} {100 * gbs / copy_gbs:6.1f}%"
              f"   rounds {min(ts):.1f}..{max(ts):.1f}")


def square_peers(copy_gbs):
    lib.lab05_square.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    lib.lab05_square_variant.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int]
    for rows, cols in [(10000, 10000), (4096, 4096), (1823, 781)]:
        x = torch.randn(rows, cols, device="cuda")
        y = torch.empty_like(x)
        checked(lib.lab05_square(x.data_ptr(), y.data_ptr(), x.numel()))
        torch.cuda.synchronize()
        assert torch.equal(y, x * x), "the reference disagrees with torch"
        impls = {"torch.square": lambda: torch.square(x),
                 "lab05 reference": lambda: checked(lib.lab05_square(x.data_ptr(), y.data_ptr(), x.numel()))}
        if "--variants" in sys.argv:  # the reference's knobs: float4s per thread, threads per block
            for p, b in [(1, 64), (2, 64), (1, 128), (2, 128), (4, 128), (1, 256), (2, 256), (4, 256),
                         (8, 256), (1, 512), (2, 512)]:
                impls[f"v5 {p} x float4, {b}"] = lambda p=p, b=b: checked(
                    lib.lab05_square_variant(x.data_ptr(), y.data_ptr(), x.numel(), p, b))
        compare((rows, cols), impls, copy_gbs)


def normalize_peers(copy_gbs):
    lib.lab06_normalize.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_float]
    for rows, cols in [(1024, 128), (4096, 256), (8192, 512), (16384, 1024), (65536, 1024), (16384, 4096)]:
        x = torch.randn(rows, cols, device="cuda") * 2 + 0.5
        y = torch.empty_like(x)
        ours = lambda: checked(lib.lab06_normalize(x.data_ptr(), y.data_ptr(), rows, cols, EPS))
        ours()
        torch.cuda.synchronize()
        want = F.layer_norm(x.double(), (cols,), eps=EPS).float()
        err = ((y - want).norm() / want.norm()).item()
        assert err < 1e-5, f"the reference disagrees with layer_norm: relative error {err}"
        compare((rows, cols), {"F.layer_norm": lambda: F.layer_norm(x, (cols,), eps=EPS), "lab06 reference": ours},
                copy_gbs)


big = torch.empty(2**28, device="cuda")
dst = torch.empty_like(big)
copy_gbs = 2 * big.numel() * 4 / median_us(lambda: dst.copy_(big)) / 1e3
del big, dst
print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}; copy_ 1 GiB {copy_gbs:.0f} GB/s")
print(f"{'shape':>12} {'impl':>22} {'us':>9} {'GB/s':>7} {'% copy':>7}")
if hasattr(lib, "lab05_square"):
    square_peers(copy_gbs)
if hasattr(lib, "lab06_normalize"):
    normalize_peers(copy_gbs)
