// A program that builds its own graph, as the CUDA runtime does through cuGetProcAddress_v2
// (cuGraphInstantiate answered with cuGraphInstantiateWithFlags): one kernel node adding 1 to the
// first n ints, launched 3 times with n = 4, 8, 12 set on the executable graph, then read back.
#include <dlfcn.h>
#include <stdio.h>
#include <stdint.h>
typedef int (*gpa_t)(const char *, void **, int, uint64_t, int *);
typedef struct { void *func; unsigned grid[3], block[3], shared; void **params, **extra; void *kern, *ctx; } KernelNodeParams;
int main(void) {
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cuda) { printf("no libcuda\n"); return 2; }
    gpa_t gpa = (gpa_t)dlsym(cuda, "cuGetProcAddress_v2");
    void *f[10]; const char *names[] = {"cuMemAlloc", "cuMemcpyHtoD", "cuMemcpyDtoH", "cuModuleLoadData",
        "cuModuleGetFunction", "cuGraphCreate", "cuGraphAddKernelNode", "cuGraphInstantiate",
        "cuGraphExecKernelNodeSetParams", "cuGraphLaunch"};
    for (int i = 0; i < 10; i++) if (gpa(names[i], &f[i], 13000, 0, 0)) { printf("no %s\n", names[i]); return 1; }
    int (*stream_synchronize)(void *) = (int (*)(void *))dlsym(cuda, "cuStreamSynchronize");
    uint64_t a; int host[16] = {0};
    ((int (*)(uint64_t *, size_t))f[0])(&a, sizeof host);
    ((int (*)(uint64_t, const void *, size_t))f[1])(a, host, sizeof host);
    void *module, *function, *graph, *node, *exec;
    ((int (*)(void **, const void *))f[3])(&module, ".version 9.0\n.target sm_90\n.visible .entry add1() { ret; }\n");
    ((int (*)(void **, void *, const char *))f[4])(&function, module, "add1");
    int n = 0; void *params[] = {&a, &n};
    KernelNodeParams launch = {function, {1, 1, 1}, {32, 1, 1}, 0, params, 0, 0, 0};
    ((int (*)(void **, unsigned))f[5])(&graph, 0);
    ((int (*)(void **, void *, void **, size_t, const KernelNodeParams *))f[6])(&node, graph, 0, 0, &launch);
    ((int (*)(void **, void *, unsigned long long))f[7])(&exec, graph, 0);
    for (n = 4; n <= 12; n += 4) {
        ((int (*)(void *, void *, const KernelNodeParams *))f[8])(exec, node, &launch);
        ((int (*)(void *, void *))f[9])(exec, 0);
        stream_synchronize(0);
    }
    ((int (*)(void *, uint64_t, size_t))f[2])(host, a, sizeof host);
    for (int i = 0; i < 16; i++) printf("%d ", host[i]);
    printf("\n");
    return 0;
}
