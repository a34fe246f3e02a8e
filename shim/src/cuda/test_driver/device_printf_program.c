// Kernels that print (CUDA's device printf): the driver writes their lines to the program's
// stdout at the next synchronization, among the program's own lines; the shim keeps each
// window's lines with its segment and leaves the program's output as it was.
#include "driver.h"
int main(void) {
    if (!open_driver()) return 2;
    F(cuModuleLoadData, void **, const void *);
    F(cuModuleGetFunction, void **, void *, const char *);
    F(cuMemAlloc_v2, CUdeviceptr *, size_t);
    F(cuMemsetD32Async, CUdeviceptr, unsigned, size_t, void *);
    F(cuCtxSynchronize, void);
    void *module, *say;
    cuModuleLoadData(&module, ".version 9.0\n.target sm_90\n.visible .entry say() { ret; }\n");
    cuModuleGetFunction(&say, module, "say");
    CUdeviceptr data;
    cuMemAlloc_v2(&data, 4 * sizeof(int));
    cuMemsetD32Async(data, 5, 4, 0);
    add1(say, 0, data, 3);
    printf("host before the first synchronization\n");
    cuCtxSynchronize();
    add1(say, 0, data, 2);
    cuCtxSynchronize();
    printf("host at the end\n");
    return 0;
}
