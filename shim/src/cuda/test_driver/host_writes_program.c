// The host writes pinned memory directly: between windows, and from a thread that blocks every
// signal (as a driver's helper thread does, running a host callback). With
// REPRISE_HOST_WRITES=watch the shim sees those writes through page protection; the program's
// results are as without it. The test double's "pinned" memory is malloc'd, so the pages
// watched are shared with the heap around it, and its kernels run on the CPU.
#include "driver.h"
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
static void *write_with_signals_blocked(void *place) {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, 0);
    *(int *)place = 40;
    return 0;
}
int main(void) {
    if (!open_driver()) return 2;
    F(cuCtxSynchronize, void);
    F(cuMemHostAlloc, void **, size_t, unsigned);
    F(cuMemFreeHost, void *);
    void *add = kernel_named("add1");
    int *pinned;
    cuMemHostAlloc((void **)&pinned, 3 * 4096, 0);
    memset(pinned, 0, 3 * 4096);
    add1(add, 0, (CUdeviceptr)pinned, 4);
    cuCtxSynchronize();
    pinned[1024 + 5] = 7;
    pthread_t thread;
    pthread_create(&thread, 0, write_with_signals_blocked, &pinned[2048]);
    pthread_join(thread, 0);
    add1(add, 0, (CUdeviceptr)pinned, 4);
    cuCtxSynchronize();
    char *scratch = malloc(64);
    add1(add, 0, (CUdeviceptr)pinned, 4);
    cuCtxSynchronize();
    printf("pinned %d %d %d\n", pinned[0], pinned[1024 + 5], pinned[2048]);
    cuMemFreeHost(pinned);
    free(scratch);
    return 0;
}
