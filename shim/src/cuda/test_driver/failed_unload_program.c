// A module whose unloading fails (the test double refuses it with FAIL_UNLOAD set): its variable
// lives on, and a launch after the failed unload names it as the one before did.
#include "driver.h"
int main(void) {
    if (!open_driver()) return 2;
    F(cuModuleLoadData, void **, const void *);
    F(cuModuleGetFunction, void **, void *, const char *);
    F(cuModuleGetGlobal_v2, CUdeviceptr *, size_t *, void *, const char *);
    F(cuModuleUnload, void *);
    F(cuCtxSynchronize, void);
    F(cuMemcpyDtoH_v2, void *, CUdeviceptr, size_t);
    void *module, *function;
    cuModuleLoadData(&module, ".version 9.0\n.target sm_90\n.visible .global .align 4 .b8 counter[16];\n.visible .entry add1() { ret; }\n");
    cuModuleGetFunction(&function, module, "add1");
    CUdeviceptr counter;
    cuModuleGetGlobal_v2(&counter, 0, module, "counter");
    add1(function, 0, counter, 2);
    cuCtxSynchronize();
    int refused = cuModuleUnload(module) != 0;
    add1(function, 0, counter, 2);
    int words[4];
    cuMemcpyDtoH_v2(words, counter, sizeof words);
    printf("unload refused %d, counter %d %d %d %d\n", refused, words[0], words[1], words[2], words[3]);
    return 0;
}
