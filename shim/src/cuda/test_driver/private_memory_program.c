// Device memory a library allocates through a private way to the driver (as nvJPEG does): the
// program fills it, adds to it with a kernel and reads it back; the shim adopts the allocation
// the driver reports for the pointer. A second allocation starts where the first ends; a third is
// first named by a kernel whose (mangled) name declares that parameter a pointer; a fourth, just
// past the third, inside a structure passed by value beside a word that is no pointer.
#include "driver.h"
int main(void) {
    if (!open_driver()) return 2;
    F(fakePrivateAlloc, CUdeviceptr *, size_t);
    F(cuModuleLoadData, void **, const void *);
    F(cuModuleGetFunction, void **, void *, const char *);
    F(cuMemsetD32Async, CUdeviceptr, unsigned, size_t, void *);
    F(cuMemcpyDtoH_v2, void *, CUdeviceptr, size_t);
    void *module, *function;
    cuModuleLoadData(&module, ".version 9.0\n.target sm_90\n.visible .entry _Z4add1Pii() { ret; }\n");
    cuModuleGetFunction(&function, module, "_Z4add1Pii");
    CUdeviceptr data, next, third, fourth;
    fakePrivateAlloc(&data, 8 * sizeof(int));
    fakePrivateAlloc(&next, 4 * sizeof(int));
    fakePrivateAlloc(&third, 4 * sizeof(int));
    fakePrivateAlloc(&fourth, 4 * sizeof(int));
    add1(function, 0, third, 4);
    void *in_struct;
    cuModuleGetFunction(&in_struct, module, "add1_in_struct");
    struct { CUdeviceptr data; long long size; } image = {fourth, 0x1aa00000280LL};
    int four = 4;
    void *params[] = {&image, &four};
    launch_kernel(in_struct, 1, 1, 1, 32, 1, 1, 0, 0, params, 0);
    cuMemsetD32Async(data + 4 * sizeof(int), 7, 4, 0);
    cuMemsetD32Async(next, 3, 4, 0);
    add1(function, 0, data + 4 * sizeof(int), 2);
    int words[20];
    cuMemcpyDtoH_v2(words, data, 8 * sizeof(int));
    cuMemcpyDtoH_v2(words + 8, next, 4 * sizeof(int));
    cuMemcpyDtoH_v2(words + 12, third, 4 * sizeof(int));
    cuMemcpyDtoH_v2(words + 16, fourth, 4 * sizeof(int));
    printf("private %d %d %d %d %d next %d third %d fourth %d\n", words[0], words[3], words[4], words[5], words[6], words[8], words[12], words[19]);
    return 0;
}
