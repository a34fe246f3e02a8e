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
