// A kernel that asserts on the device (NVIDIA's simpleAssert): the synchronization after it
// fails with CUDA_ERROR_ASSERT, which the program reports; the window before it succeeded.
#include "driver.h"
int main(void) {
    if (!open_driver()) return 2;
    F(cuCtxSynchronize, void);
    void *function = kernel_named("add1");
    CUdeviceptr data = ints_set_to(1, 4);
    add1(function, 0, data, 4);
    int first = cuCtxSynchronize();
    add1(function, 0, data, -1);
    int second = cuCtxSynchronize();
    printf("synchronizations %d %d\n", first, second);
    return second == 710 ? 0 : 1;
}
