"""saxpy through pyopencl, whose wheel bundles its own ICD loader: y = a*x + y, checked with numpy.
The platform is the first whose name contains $REPRISE_TEST_PLATFORM (any case), else the first."""
import os
import sys

import numpy as np
import pyopencl as cl

N = 1000
SOURCE = """
__kernel void saxpy(__global float *y, __global const float *x, float a) {
    size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }
"""


def choose_platform():
    platforms = cl.get_platforms()
    wanted = os.environ.get("REPRISE_TEST_PLATFORM", "")
    matching = [p for p in platforms if wanted.lower() in p.name.lower()]
    if not matching:
        sys.exit(f"no OpenCL platform named like {wanted!r}")
    return matching[0]


def main():
    device = choose_platform().get_devices()[0]
    context = cl.Context([device])
    queue = cl.CommandQueue(context)
    saxpy = cl.Program(context, SOURCE).build().saxpy
    x = np.arange(N, dtype=np.float32)
    y = np.full(N, 2.0, dtype=np.float32)
    flags = cl.mem_flags
    x_buffer = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=x)
    y_buffer = cl.Buffer(context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=y)
    saxpy(queue, (N,), None, y_buffer, x_buffer, np.float32(3.0))
    result = np.empty_like(y)
    cl.enqueue_copy(queue, result, y_buffer)
    queue.finish()
    expected = 3.0 * x + y
    if not np.allclose(result, expected):
        sys.exit("saxpy: wrong result")
    print(f"pyopencl saxpy: sum = {float(result.sum()):.1f}")


main()
