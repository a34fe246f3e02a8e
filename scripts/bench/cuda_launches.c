/* The shim's bookkeeping per recorded CUDA launch, without a GPU: LAUNCHES cuLaunchKernel calls
 * per window against the test-double libcuda (shim/src/cuda/test_driver/fake_libcuda.c, whose
 * kernels touch one int), a cuStreamSynchronize ending each window; prints the best window. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef uint64_t CUdeviceptr;

int main(int argc, char **argv) {
    int launches = argc > 1 ? atoi(argv[1]) : 1000, windows = argc > 2 ? atoi(argv[2]) : 20;
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cuda) {
        fprintf(stderr, "no libcuda.so.1 on the library path\n");
        return 2;
    }
#define F(name, ...) int (*name)(__VA_ARGS__) = (int (*)(__VA_ARGS__))dlsym(cuda, #name)
    F(cuModuleLoadData, void **, const void *);
    F(cuModuleGetFunction, void **, void *, const char *);
    F(cuMemAlloc_v2, CUdeviceptr *, size_t);
    F(cuStreamSynchronize, void *);
    F(cuLaunchKernel, void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **);
    void *module, *function;
    cuModuleLoadData(&module, ".version 9.0\n.target sm_90\n.visible .entry add1() { ret; }\n");
    cuModuleGetFunction(&function, module, "add1");
    CUdeviceptr data;
    cuMemAlloc_v2(&data, 64);
    int n = 1;
    void *params[] = {&data, &n};
    double best = 1e30;
    for (int window = 0; window < windows; window++) {
        struct timespec start, end;
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (int l = 0; l < launches; l++) cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, 0, params, 0);
        cuStreamSynchronize(0);
        clock_gettime(CLOCK_MONOTONIC, &end);
        double took = (end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec);
        if (took < best) best = took;
    }
    printf("ns_per_launch %.1f\n", best / launches);
    return 0;
}
