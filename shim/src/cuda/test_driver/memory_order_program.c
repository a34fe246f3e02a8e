// Work the host's timing ordered (driver_ptx of the GPU check): a copy and a memset on the legacy
// stream fill memory, which kernels on a non-blocking stream then use without waiting for the
// legacy stream; only the non-blocking stream is synchronized.
#include "driver.h"
#include <stdio.h>
int main(void) {
    if (!open_driver()) return 2;
    F(cuModuleLoadData, void **, const void *);
    F(cuModuleGetFunction, void **, void *, const char *);
    F(cuMemAlloc_v2, CUdeviceptr *, size_t);
    F(cuMemcpyHtoD_v2, CUdeviceptr, const void *, size_t);
    F(cuMemcpyDtoH_v2, void *, CUdeviceptr, size_t);
    F(cuMemsetD32_v2, CUdeviceptr, unsigned, size_t);
    F(cuStreamCreate, void **, unsigned);
    F(cuStreamSynchronize, void *);
    void *module, *function, *stream;
    cuModuleLoadData(&module, ".version 9.0\n.target sm_90\n.visible .entry add1() { ret; }\n");
    cuModuleGetFunction(&function, module, "add1");
    cuStreamCreate(&stream, 1);
    CUdeviceptr a, b;
    cuMemAlloc_v2(&a, 64);
    cuMemAlloc_v2(&b, 64);
    int values[16];
    for (int i = 0; i < 16; i++) values[i] = i;
    cuMemcpyHtoD_v2(a, values, sizeof values);
    cuMemsetD32_v2(b, 7, 16);
    add1(function, stream, a, 16);
    add1(function, stream, b, 16);
    cuStreamSynchronize(stream);
    cuMemcpyDtoH_v2(values, a, sizeof values);
    printf("%d %d\n", values[0], values[15]);
    return 0;
}
