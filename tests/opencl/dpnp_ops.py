"""dpnp (NumPy on SYCL) on Intel's OpenCL CPU device, as its users write it: elementwise arithmetic, a
reduction, a sort, a matmul through oneMKL's SYCL BLAS, and random numbers. Not run in CI (dpnp pulls in
about 1 GB of oneMKL): `pip install dpnp` beside dpctl, then record and replay it by hand."""
import os

os.environ.setdefault("ONEAPI_DEVICE_SELECTOR", "opencl:cpu")
import dpnp
import numpy as np

n = 256
a = dpnp.arange(n * n, dtype=dpnp.float32).reshape(n, n) / (n * n)
b = dpnp.ones((n, n), dtype=dpnp.float32) * 0.5
c = dpnp.sin(a) * b + a ** 2
print("elementwise sum", round(float(dpnp.sum(c)), 2))
print("row maxima head", np.round(dpnp.asnumpy(dpnp.max(c, axis=1))[:3], 4))
order = dpnp.sort(dpnp.asarray(np.random.default_rng(0).permutation(1000).astype(np.int32)))
print("sorted ends", int(order[0]), int(order[-1]))
product = dpnp.matmul(a, b)
print("matmul trace", round(float(dpnp.trace(product)), 2))
dpnp.random.seed(7)
samples = dpnp.random.rand(4096)
print("random mean in (0.4, 0.6)", bool(0.4 < float(samples.mean()) < 0.6))
