// Windows that close off the program's thread (`launch_log`): a synchronization whose window
// reads nothing closes later, on the shim's thread, and what the host writes after it into
// pinned memory the window read (a copy whose source is a device pointer to it) belongs to the
// next window; one whose window delivers data into host memory (pinned or pageable)
// closes before its call returns, before the host changes that memory, and so does one where a
// kernel writes memory the host reads directly. Each round's write
// right after its synchronization lands long before the shim's thread, which looks every
// 50 microseconds, gets to the window. The pinned memory is a page of its own, registered (as
// simpleStreams registers its buffer): no other write to that page tells the shim of one.
#include "driver.h"
#include <sys/mman.h>
#define ROUNDS 50
int main(void) {
    if (!open_driver()) return 2;
    F(cuStreamSynchronize, void *);
    F(cuMemHostRegister_v2, void *, size_t, unsigned);
    F(cuMemcpyDtoDAsync_v2, CUdeviceptr, CUdeviceptr, size_t, void *);
    F(cuMemcpyDtoHAsync_v2, void *, CUdeviceptr, size_t, void *);
    void *add = kernel_named("add1");
    CUdeviceptr data = ints_set_to(0, 4);
    int *pinned = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cuMemHostRegister_v2(pinned, 4096, 0);
    for (int round = 0; round < ROUNDS; round++) {
        pinned[0] = round;
        cuMemcpyDtoDAsync_v2(data, (CUdeviceptr)pinned, sizeof(int), 0);
        add1(add, 0, data, 1);
        add1(add, 0, data, 1);
        cuStreamSynchronize(0);
        pinned[0] = -1;
    }
    int pageable[ROUNDS];
    for (int round = 0; round < ROUNDS; round++) {
        add1(add, 0, data, 1);
        cuMemcpyDtoHAsync_v2(&pinned[1], data, sizeof(int), 0);
        cuMemcpyDtoHAsync_v2(&pageable[round], data, sizeof(int), 0);
        cuStreamSynchronize(0);
        pinned[1] = -1;
        pageable[round] = -1;
    }
    // A kernel writes the pinned page, which the host reads without a command: its window closes
    // at once, with the page as the device left it, before the host writes it again (the test
    // double's kernels run on the CPU, so the shim also sees the page written by the host: the
    // recorder's tests check the kernel's write alone).
    for (int round = 0; round < ROUNDS; round++) {
        add1(add, 0, (CUdeviceptr)&pinned[2], 1);
        cuStreamSynchronize(0);
        pinned[2] = -1;
    }
    printf("rounds %d\n", ROUNDS);
    return 0;
}
