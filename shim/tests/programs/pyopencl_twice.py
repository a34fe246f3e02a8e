# A pyopencl program (pyopencl brings its own private OpenCL loader): doubles an array twice.
import sys

import numpy as np
import pyopencl as cl

name = sys.argv[1] if len(sys.argv) > 1 else ""
platform = next(p for p in cl.get_platforms() if name in p.name)
context = cl.Context([platform.get_devices()[0]])
queue = cl.CommandQueue(context)
values = np.arange(64, dtype=np.int32)
buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=values)
program = cl.Program(context, "kernel void twice(global int *a) { a[get_global_id(0)] *= 2; }").build()
twice = cl.Kernel(program, "twice")
twice(queue, values.shape, None, buffer)
twice(queue, values.shape, None, buffer)
result = np.empty_like(values)
cl.enqueue_copy(queue, result, buffer)
print(int(result.sum()), int(result[63]))
