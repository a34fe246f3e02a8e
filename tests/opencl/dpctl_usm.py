"""Intel's SYCL runtime on OpenCL through dpctl, as its users write it: a queue on the OpenCL CPU
device, device and shared USM, a program built from OpenCL C, eight kernels submitted with SYCL
event dependencies, a copy back. It names the OpenCL backend for the SYCL runtime to load: with
the Level Zero test driver registered (scripts/env.sh), the runtime's Level Zero adapter crashes
in urDeviceGet natively (issue 37)."""
import ctypes
import os

import numpy as np

os.environ.setdefault("ONEAPI_DEVICE_SELECTOR", "opencl:*")

import dpctl
import dpctl.memory as dpmem
import dpctl.program

SOURCE = """
__kernel void axpy(__global float *y, __global const float *x, float a) {
    size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }
__kernel void scale(__global float *y, float a) {
    size_t i = get_global_id(0); y[i] = a * y[i]; }
"""
N = 1024


def main():
    queue = dpctl.SyclQueue("opencl:cpu")
    print(queue.sycl_device.name, queue.sycl_device.backend)
    program = dpctl.program.create_program_from_source(queue, SOURCE)
    axpy, scale = program.get_sycl_kernel("axpy"), program.get_sycl_kernel("scale")
    x = dpmem.MemoryUSMDevice(N * 4, queue=queue)
    y = dpmem.MemoryUSMShared(N * 4, queue=queue)
    x.copy_from_host(np.arange(N, dtype=np.float32).view(np.uint8))
    y.copy_from_host(np.ones(N, dtype=np.float32).view(np.uint8))
    event = None
    for step in range(8):
        depends = [event] if event is not None else []
        if step % 2 == 0:
            event = queue.submit(axpy, [y, x, ctypes.c_float(0.5 + step)], [N], dEvents=depends)
        else:
            event = queue.submit(scale, [y, ctypes.c_float(0.5)], [N], dEvents=depends)
    event.wait()
    out = np.empty(N, dtype=np.float32)
    y.copy_to_host(out.view(np.uint8))
    print(out[:4], float(out.sum()))


main()
