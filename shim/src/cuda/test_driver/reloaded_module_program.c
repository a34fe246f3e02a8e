// A module unloaded and another loaded in its place, whose kernel the driver hands out under the
// same function handle but with other parameters (a 16-byte structure first instead of a
// pointer): launches after that are decoded with the new kernel's parameters, on the launching
// thread too, which had kept the old kernel's to launch it without the recorder's lock (read
// with those, the last launch, whose structure differs from the one before past its first 8
// bytes, would pass for a repeat of it). With UNSEEN set, the program finds its kernels through a
// lookup the shim does not see (as the CUDA runtime may), so the shim asks the driver what each
// launched handle is: the module's unloading must make it ask again. With RELOAD_UNSEEN set too,
// the shim does not see the second module loaded either: its launches are not recorded as the
// first module's kernel, whose handle they reuse.
#include "driver.h"
#include <stdlib.h>
int main(void) {
    if (!open_driver()) return 2;
    F(cuModuleLoadData, void **, const void *);
    F(cuModuleUnload, void *);
    F(cuModuleGetFunction, void **, void *, const char *);
    if (getenv("UNSEEN")) cuModuleGetFunction = (int (*)(void **, void *, const char *))dlsym(cuda, "fakeGetFunctionUnseen");
    F(cuStreamSynchronize, void *);
    F(cuMemcpyDtoH_v2, void *, CUdeviceptr, size_t);
    void *module, *function, *again;
    cuModuleLoadData(&module, ".version 9.0\n.target sm_90\n.visible .entry add1() { ret; }\n");
    cuModuleGetFunction(&function, module, "add1");
    CUdeviceptr data = ints_set_to(0, 4);
    for (int i = 0; i < 3; i++) add1(function, 0, data, 4);
    cuStreamSynchronize(0);
    cuModuleUnload(module);
    if (getenv("RELOAD_UNSEEN")) cuModuleLoadData = (int (*)(void **, const void *))dlsym(cuda, "fakeModuleLoadDataUnseen");
    cuModuleLoadData(&module, "//wide\n.version 9.0\n.target sm_90\n.visible .entry add1() { ret; }\n");
    cuModuleGetFunction(&again, module, "add1");
    struct { CUdeviceptr data; long tag; } wide = {data, 7};
    int n = 2;
    void *params[] = {&wide, &n};
    for (int i = 0; i < 3; i++) {
        wide.tag = i < 2 ? 7 : 9;
        launch_kernel(again, 1, 1, 1, 32, 1, 1, 0, 0, params, 0);
    }
    cuStreamSynchronize(0);
    int words[4];
    cuMemcpyDtoH_v2(words, data, sizeof words);
    printf("same handle %d, words %d %d %d %d\n", again == function, words[0], words[1], words[2], words[3]);
    return 0;
}
