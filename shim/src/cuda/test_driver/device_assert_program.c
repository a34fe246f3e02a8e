// A kernel that asserts on the device (NVIDIA's simpleAssert): the synchronization after it
// fails with CUDA_ERROR_ASSERT, which the program reports; the window before it succeeded.
#include "driver.h"
int main(void) {
    if (!open_driver()) return 2;
    F(cuModuleLoadData, void **, const void *);
    F(cuModuleGetFunction, void **, void *, const char *);
    F(cuMemAlloc_v2, CUdeviceptr *, size_t);
    F(cuMemsetD32Async, CUdeviceptr, unsigned, size_t, void *);
    F(cuCtxSynchronize, void);
    void *module, *function;
    cuModuleLoadData(&module, ".version 9.0\n.target sm_90\n.visible .entry add1() { ret; }\n");
    cuModuleGetFunction(&function, module, "add1");
    CUdeviceptr data;
    cuMemAlloc_v2(&data, 4 * sizeof(int));
    cuMemsetD32Async(data, 1, 4, 0);
    add1(function, 0, data, 4);
    int first = cuCtxSynchronize();
    add1(function, 0, data, -1);
    int second = cuCtxSynchronize();
    printf("synchronizations %d %d\n", first, second);
    return second == 710 ? 0 : 1;
}
