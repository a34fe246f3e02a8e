// The host writes pinned memory directly: between windows, and from a thread that blocks every
// signal (as a driver's helper thread does, running a host callback). With
// REPRISE_HOST_WRITES=watch the shim sees those writes through page protection; the program's
// results are as without it. The test double's "pinned" memory is malloc'd, so the pages
// watched are shared with the heap around it, and its kernels run on the CPU. A local variable
// registered as pinned memory (NPP reads a count back so) lies on the stack, where the kernel
// pushes a signal's frame: a protected page there would end the program at its next call.
#include "driver.h"
#include <alloca.h>
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
// A count in a page of this function's stack, with the stack pointer near that page's top: a
// call's return address and any signal frame land in the same page.
static int __attribute__((noinline)) count_on_the_stack(void *add) {
    F(cuCtxSynchronize, void);
    F(cuMemHostRegister_v2, void *, size_t, unsigned);
    F(cuMemHostUnregister, void *);
    char here;
    volatile int *count = alloca((((uintptr_t)&here & 4095) + 4096 - 3840) % 4096 + 64);
    *count = 1;
    cuMemHostRegister_v2((void *)count, sizeof *count, 0);
    add1(add, 0, (CUdeviceptr)count, 1);
    cuCtxSynchronize();
    *count += 1;
    add1(add, 0, (CUdeviceptr)count, 1);
    cuCtxSynchronize();
    int result = *count;
    cuMemHostUnregister((void *)count);
    return result;
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
    printf("pinned %d %d %d, on the stack %d\n", pinned[0], pinned[1024 + 5], pinned[2048], count_on_the_stack(add));
    cuMemFreeHost(pinned);
    free(scratch);
    return 0;
}
