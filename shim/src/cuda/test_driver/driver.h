// Shared by the test programs that reach the test-double driver by name: the driver opened
// privately (as the CUDA runtime opens it), its functions looked up with dlsym (the shim's, when
// preloaded), and add1(data, n), the kernel every module of the test double has, launched.
#include <dlfcn.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
typedef uint64_t CUdeviceptr;
static void *cuda;
// Declares `name` as the driver function of that name taking the given arguments.
#define F(name, ...) int (*name)(__VA_ARGS__) = (int (*)(__VA_ARGS__))dlsym(cuda, #name)
static int (*launch_kernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **);
// Opens the driver; 0 when there is none.
static int open_driver(void) {
    cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cuda) { printf("no libcuda\n"); return 0; }
    launch_kernel = (int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **))dlsym(cuda, "cuLaunchKernel");
    return 1;
}
static inline void add1(void *function, void *stream, CUdeviceptr data, int n) {
    void *params[] = {&data, &n};
    launch_kernel(function, 1, 1, 1, 32, 1, 1, 0, stream, params, 0);
}
// The kernel `name` of a module the test double loads (every function adds one, see add1).
static inline void *kernel_named(const char *name) {
    F(cuModuleLoadData, void **, const void *);
    F(cuModuleGetFunction, void **, void *, const char *);
    void *module, *function;
    cuModuleLoadData(&module, ".version 9.0\n.target sm_90\n.visible .entry add1() { ret; }\n");
    cuModuleGetFunction(&function, module, name);
    return function;
}
// Device memory of `n` ints, each set to `value` (a memset on the legacy stream).
static inline CUdeviceptr ints_set_to(unsigned value, size_t n) {
    F(cuMemAlloc_v2, CUdeviceptr *, size_t);
    F(cuMemsetD32Async, CUdeviceptr, unsigned, size_t, void *);
    CUdeviceptr data;
    cuMemAlloc_v2(&data, n * sizeof(int));
    cuMemsetD32Async(data, value, n, 0);
    return data;
}
