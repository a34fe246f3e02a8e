// Kernels that print (CUDA's device printf): the driver writes their lines to the program's
// stdout at the next synchronization, among the program's own lines; the shim keeps each
// window's lines with its segment and leaves the program's output as it was.
#include "driver.h"
int main(void) {
    if (!open_driver()) return 2;
    F(cuCtxSynchronize, void);
    void *say = kernel_named("say");
    CUdeviceptr data = ints_set_to(5, 4);
    add1(say, 0, data, 3);
    printf("host before the first synchronization\n");
    cuCtxSynchronize();
    add1(say, 0, data, 2);
    cuCtxSynchronize();
    printf("host at the end\n");
    return 0;
}
