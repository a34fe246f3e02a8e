/* simpleStreams' non-streamed loop against the test-double libcuda (shim/src/cuda/test_driver):
 * 64 MB of page-aligned host memory registered with cuMemHostRegister, and REPS repetitions of
 * a kernel and a synchronous device-to-host copy of all 64 MB into it; prints the best
 * repetition's milliseconds. What it measures is the shim's work around each window that
 * receives 64 MB into registered memory (the copy itself is the test double's memcpy). */
#include "../../shim/src/cuda/test_driver/driver.h"
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 10;
    if (!open_driver()) return 2;
    F(cuMemHostRegister_v2, void *, size_t, unsigned);
    F(cuMemcpyDtoH_v2, void *, CUdeviceptr, size_t);
    const size_t bytes = 64 << 20;
    void *add = kernel_named("add1");
    char *host = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(host, 0, bytes);
    cuMemHostRegister_v2(host, bytes, 0);
    CUdeviceptr device = ints_set_to(7, bytes / sizeof(int));
    double best = 1e30;
    for (int rep = 0; rep < reps; rep++) {
        struct timespec start, end;
        clock_gettime(CLOCK_MONOTONIC, &start);
        add1(add, NULL, device, 1);
        cuMemcpyDtoH_v2(host, device, bytes);
        clock_gettime(CLOCK_MONOTONIC, &end);
        double took = (end.tv_sec - start.tv_sec) * 1e3 + (end.tv_nsec - start.tv_nsec) / 1e6;
        if (took < best) best = took;
    }
    printf("ms_per_rep %.2f (host[0] %d)\n", best, host[0]);
    return 0;
}
