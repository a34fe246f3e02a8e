// A module unloaded on one thread while another loads one in its place (the test double hands out
// the same handle, and with SLOW_UNLOAD takes its time unloading): the new module's kernel, found
// and launched while the unload is still under way, is recorded as that kernel, not forgotten
// with the unloaded one.
#include "driver.h"
#include <pthread.h>
#include <unistd.h>
static void *module;
static void *unload(void *unused) {
    F(cuModuleUnload, void *);
    cuModuleUnload(module);
    return unused;
}
int main(void) {
    if (!open_driver()) return 2;
    F(cuModuleLoadData, void **, const void *);
    F(cuModuleGetFunction, void **, void *, const char *);
    F(cuCtxSynchronize, void);
    F(cuMemcpyDtoH_v2, void *, CUdeviceptr, size_t);
    void *function, *again, *reloaded;
    cuModuleLoadData(&module, ".version 9.0\n.target sm_90\n.visible .entry add1() { ret; }\n");
    cuModuleGetFunction(&function, module, "add1");
    CUdeviceptr data = ints_set_to(0, 4);
    add1(function, 0, data, 4);
    cuCtxSynchronize();
    pthread_t unloading;
    pthread_create(&unloading, 0, unload, 0);
    usleep(50000);
    cuModuleLoadData(&reloaded, "//again\n.version 9.0\n.target sm_90\n.visible .entry add1() { ret; }\n");
    cuModuleGetFunction(&again, reloaded, "add1");
    pthread_join(unloading, 0);
    add1(again, 0, data, 2);
    cuCtxSynchronize();
    int words[4];
    cuMemcpyDtoH_v2(words, data, sizeof words);
    printf("same handle %d, words %d %d %d %d\n", again == function, words[0], words[1], words[2], words[3]);
    return 0;
}
