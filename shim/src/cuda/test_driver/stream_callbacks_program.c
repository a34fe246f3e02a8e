// Stream callbacks (simpleCallback of cuda-samples): worker threads each fill pinned memory, copy it
// in, run a kernel, copy it back into the pinned memory and add a stream callback, which starts a
// thread that checks the result, frees the memory and destroys the stream; nobody waits otherwise.
#include "driver.h"
#include <pthread.h>
#include <stdio.h>
#define WORKERS 4
#define N 4096
struct workload { int id; void *stream; CUdeviceptr d; int *h; int ok; void *function; };
static int (*cuMemFree_p)(CUdeviceptr);
static int (*cuMemFreeHost_p)(void *);
static int (*cuStreamDestroy_p)(void *);
static pthread_t post[WORKERS];
static void *postprocess(void *arg) {
    struct workload *w = arg;
    w->ok = 1;
    for (int i = 0; i < N; i++) w->ok &= w->h[i] == w->id + i + 1;
    cuMemFree_p(w->d);
    cuMemFreeHost_p(w->h);
    cuStreamDestroy_p(w->stream);
    return 0;
}
static void callback(void *stream, int status, void *arg) {
    struct workload *w = arg;
    pthread_create(&post[w->id], 0, postprocess, w);
}
static void *launch(void *arg) {
    struct workload *w = arg;
    F(cuStreamCreate, void **, unsigned);
    F(cuMemAlloc_v2, CUdeviceptr *, size_t);
    F(cuMemHostAlloc, void **, size_t, unsigned);
    F(cuMemcpyHtoDAsync_v2, CUdeviceptr, const void *, size_t, void *);
    F(cuMemcpyDtoHAsync_v2, void *, CUdeviceptr, size_t, void *);
    F(cuStreamAddCallback, void *, void (*)(void *, int, void *), void *, unsigned);
    cuStreamCreate(&w->stream, 0);
    cuMemAlloc_v2(&w->d, N * sizeof(int));
    cuMemHostAlloc((void **)&w->h, N * sizeof(int), 1);
    for (int i = 0; i < N; i++) w->h[i] = w->id + i;
    cuMemcpyHtoDAsync_v2(w->d, w->h, N * sizeof(int), w->stream);
    add1(w->function, w->stream, w->d, N);
    cuMemcpyDtoHAsync_v2(w->h, w->d, N * sizeof(int), w->stream);
    cuStreamAddCallback(w->stream, callback, w, 0);
    return 0;
}
int main(void) {
    if (!open_driver()) return 2;
    F(cuModuleLoadData, void **, const void *);
    F(cuModuleGetFunction, void **, void *, const char *);
    cuMemFree_p = dlsym(cuda, "cuMemFree_v2");
    cuMemFreeHost_p = dlsym(cuda, "cuMemFreeHost");
    cuStreamDestroy_p = dlsym(cuda, "cuStreamDestroy_v2");
    void *module, *function;
    cuModuleLoadData(&module, ".version 9.0\n.target sm_90\n.visible .entry add1() { ret; }\n");
    cuModuleGetFunction(&function, module, "add1");
    struct workload w[WORKERS];
    pthread_t threads[WORKERS];
    for (int i = 0; i < WORKERS; i++) { w[i] = (struct workload){ .id = i, .function = function }; pthread_create(&threads[i], 0, launch, &w[i]); }
    for (int i = 0; i < WORKERS; i++) pthread_join(threads[i], 0);
    for (int i = 0; i < WORKERS; i++) pthread_join(post[i], 0);
    int ok = 1;
    for (int i = 0; i < WORKERS; i++) ok &= w[i].ok;
    printf("workers %s\n", ok ? "passed" : "FAILED");
    return !ok;
}
