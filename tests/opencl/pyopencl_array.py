"""pyopencl.array as its users write it: to_device, element-wise arithmetic, a custom element-wise
kernel, reductions (sum, dot, max), a scan and random numbers, each checked with numpy. pyopencl
builds its kernels at run time and chains them by events, which is what this exercises.
The platform is the first whose name contains $REPRISE_TEST_PLATFORM (any case), else the first."""
import os
import sys

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.clrandom as clrandom
from pyopencl.elementwise import ElementwiseKernel
from pyopencl.scan import InclusiveScanKernel

N = 4096


def choose_platform():
    wanted = os.environ.get("REPRISE_TEST_PLATFORM", "")
    matching = [p for p in cl.get_platforms() if wanted.lower() in p.name.lower()]
    if not matching:
        sys.exit(f"no OpenCL platform named like {wanted!r}")
    return matching[0]


def check(name, got, want, tolerance=1e-4):
    if not np.allclose(got, want, rtol=tolerance, atol=tolerance):
        sys.exit(f"{name}: got {got}, want {want}")


def main():
    context = cl.Context([choose_platform().get_devices()[0]])
    queue = cl.CommandQueue(context)
    x_host = np.linspace(-1.0, 1.0, N).astype(np.float32)
    y_host = np.cos(np.arange(N, dtype=np.float32))
    x, y = cla.to_device(queue, x_host), cla.to_device(queue, y_host)

    check("arithmetic", (2 * x + y * y - 1).get(), 2 * x_host + y_host * y_host - 1)
    lin_comb = ElementwiseKernel(context, "float a, float *x, float b, float *y, float *z", "z[i] = a*x[i] + b*y[i]")
    z = cla.empty_like(x)
    lin_comb(np.float32(3), x, np.float32(-2), y, z)
    check("custom kernel", z.get(), 3 * x_host - 2 * y_host)
    check("sum", cla.sum(x).get(), x_host.sum(dtype=np.float64), 1e-3)
    check("dot", cla.dot(x, y).get(), np.dot(x_host.astype(np.float64), y_host), 1e-3)
    check("max", cla.max(y).get(), y_host.max())

    counts = cla.to_device(queue, np.arange(N, dtype=np.int32) % 7)
    InclusiveScanKernel(context, np.int32, "a+b", neutral="0")(counts)
    check("scan", counts.get(), np.cumsum(np.arange(N, dtype=np.int32) % 7))

    uniform = clrandom.rand(queue, (N,), np.float32, a=0.0, b=1.0)
    values = uniform.get()
    if not (values.min() >= 0.0 and values.max() <= 1.0 and 0.4 < values.mean() < 0.6):
        sys.exit(f"random numbers out of range: min {values.min()} max {values.max()} mean {values.mean()}")
    queue.finish()
    print("pyopencl.array: arithmetic, custom kernel, sum, dot, max, scan, random: ok")


if __name__ == "__main__":
    main()
