# Numba's CUDA target as its users write it: a @cuda.jit kernel, device arrays, a reduction.
import numpy as np

if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack  # numba-cuda still names it; numpy 2.5 dropped it
from numba import cuda


@cuda.jit
def saxpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


x = cuda.to_device(np.arange(4096, dtype=np.float32))
y = cuda.to_device(np.ones(4096, dtype=np.float32))
for _ in range(4):
    saxpy[16, 256](np.float32(0.5), x, y)
host = y.copy_to_host()
print("numba: sum", float(host.sum()), "last", float(host[-1]))
