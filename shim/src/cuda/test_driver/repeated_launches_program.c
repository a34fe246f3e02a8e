// The same launch repeated, then its memory freed and allocated again in stream order, at the
// same address (the test double's stream-ordered allocations are glibc's malloc, which hands
// the block just freed back): a launch with the same bytes as an earlier one names the
// allocation live at its own time (what the shim worked out for a launch is taken again only
// while the memory it knows stands still). Then ten thousand launches alternating between two
// argument lists, which the shim records off the program's thread (the test double launches
// faster than that thread records, so the program's thread records whenever the log holds too
// many), and a synchronization.
#include "driver.h"
int main(void) {
    if (!open_driver()) return 2;
    F(cuMemAllocAsync, CUdeviceptr *, size_t, void *);
    F(cuMemFreeAsync, CUdeviceptr, void *);
    F(cuMemsetD32Async, CUdeviceptr, unsigned, size_t, void *);
    F(cuMemcpyDtoH_v2, void *, CUdeviceptr, size_t);
    void *function = kernel_named("add1");
    CUdeviceptr first, second;
    cuMemAllocAsync(&first, 4 * sizeof(int), 0);
    cuMemsetD32Async(first, 0, 4, 0);
    add1(function, 0, first, 4);
    add1(function, 0, first, 4);
    int words[8];
    cuMemcpyDtoH_v2(words, first, 4 * sizeof(int));
    cuMemFreeAsync(first, 0);
    cuMemAllocAsync(&second, 4 * sizeof(int), 0);
    cuMemsetD32Async(second, 0, 4, 0);
    add1(function, 0, second, 4);
    add1(function, 0, second, 3);
    cuMemcpyDtoH_v2(words + 4, second, 4 * sizeof(int));
    printf("first %d %d second %d %d same address %d\n", words[0], words[3], words[4], words[7], first == second);
    F(cuStreamSynchronize, void *);
    for (int i = 0; i < 10000; i++) add1(function, 0, second, 1 + i % 2);
    cuStreamSynchronize(0);
    cuMemcpyDtoH_v2(words, second, 4 * sizeof(int));
    printf("after the loop %d %d\n", words[0], words[1]);
    return 0;
}
