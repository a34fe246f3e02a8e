// A driver-API program as the CUDA runtime is one: it opens libcuda.so.1 privately, gets
// cuGetProcAddress_v2 through dlsym and every function through it (cuLaunchKernel with the
// per-thread-default-stream flag), then writes, fills, launches on stream 0, copies a 2D region and reads back; then fills on two
// streams joined by an event, launches a kernel of a module loaded from a file, and reads back.
#include <dlfcn.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
typedef int (*gpa_t)(const char *, void **, int, uint64_t, int *);
int main(void) {
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cuda) { printf("no libcuda\n"); return 2; }
    gpa_t gpa = (gpa_t)dlsym(cuda, "cuGetProcAddress_v2");
    void *f[16]; const char *names[] = {"cuMemAlloc", "cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemsetD32", "cuStreamCreate",
        "cuStreamSynchronize", "cuModuleLoadData", "cuModuleGetFunction", "cuLaunchKernel", "cuMemcpy2D",
        "cuMemsetD32Async", "cuEventRecord", "cuStreamWaitEvent", "cuModuleLoad"};
    for (int i = 0; i < 14; i++) gpa(names[i], &f[i], 13000, i == 8 ? 2 : 0, 0);
    uint64_t a; int host[16], n = 16;
    for (int i = 0; i < 16; i++) host[i] = i;
    ((int (*)(uint64_t *, size_t))f[0])(&a, sizeof host);
    ((int (*)(uint64_t, const void *, size_t))f[1])(a, host, sizeof host);
    ((int (*)(uint64_t, unsigned, size_t))f[3])(a + 32, 100, 4);
    void *module, *function;
    ((int (*)(void **, const void *))f[6])(&module, ".version 9.0\n.target sm_90\n.visible .entry add1() { ret; }\n");
    ((int (*)(void **, void *, const char *))f[7])(&function, module, "add1");
    uint64_t arg = a + 8; int count = 8; void *params[] = {&arg, &count};
    ((int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **))f[8])(
        function, 1, 1, 1, 32, 1, 1, 0, 0, params, 0);
    // Two rows of two ints from a host matrix with 4-int rows into the last 4 ints, rows 8 bytes apart.
    int matrix[8] = {50, 51, 0, 0, 52, 53, 0, 0};
    struct { size_t sx, sy; int st; const void *sh; uint64_t sd; void *sa; size_t sp;
             size_t dx, dy; int dt; void *dh; uint64_t dd; void *da; size_t dp; size_t w, h; } copy =
        {0, 0, 1, matrix, 0, 0, 16, 0, 0, 2, 0, a + 48, 0, 8, 8, 2};
    ((int (*)(const void *))f[9])(&copy);
    ((int (*)(void *, uint64_t, size_t))f[2])(host, a, sizeof host);
    ((int (*)(void *))f[5])(0);
    // A second window: a fill on a non-blocking stream joined by a blocking one through an event.
    void *blocking, *non_blocking, *event = (void *)0xe0;
    ((int (*)(void **, unsigned))f[4])(&blocking, 0);
    ((int (*)(void **, unsigned))f[4])(&non_blocking, 1);
    ((int (*)(uint64_t, unsigned, size_t, void *))f[10])(a, 7, 1, non_blocking);
    ((int (*)(void *, void *))f[11])(event, non_blocking);
    ((int (*)(void *, void *, unsigned))f[12])(blocking, event, 0);
    ((int (*)(uint64_t, unsigned, size_t, void *))f[10])(a + 4, 8, 1, blocking);
    // A kernel of a module loaded from the PTX file PTX_FILE names, on the blocking stream, which
    // the synchronous copy after it waits for.
    void *file_module, *file_function;
    ((int (*)(void **, const char *))f[13])(&file_module, getenv("PTX_FILE"));
    ((int (*)(void **, void *, const char *))f[7])(&file_function, file_module, "add1");
    ((int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **))f[8])(
        file_function, 1, 1, 1, 32, 1, 1, 0, blocking, params, 0);
    ((int (*)(void *, uint64_t, size_t))f[2])(host, a, sizeof host);
    for (int i = 0; i < 16; i++) printf("%d ", host[i]);
    printf("\nlaunch via %s\n", f[8] == dlsym(cuda, "cuLaunchKernel_ptsz") ? "ptsz" : "?");
    return 0;
}
