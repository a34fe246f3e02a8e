/* simpleStreams' pattern against the test-double libcuda (shim/src/cuda/test_driver): a 64 MB pinned
 * host buffer, 64 MB of device memory, and REPS repetitions of a kernel and a device-to-host copy of
 * its quarter on each of 4 streams, then a context synchronization; prints the best repetition's
 * milliseconds. What it measures is the shim's bookkeeping around large pinned copies. */
#include "../../shim/src/cuda/test_driver/driver.h"
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 10;
    if (!open_driver()) return 2;
    F(cuCtxSynchronize, void);
    F(cuMemHostAlloc, void **, size_t, unsigned);
    F(cuStreamCreate, void **, unsigned);
    F(cuMemcpyDtoHAsync_v2, void *, CUdeviceptr, size_t, void *);
    const size_t bytes = 64 << 20, quarter = bytes / 4;
    void *add = kernel_named("add1");
    char *host;
    cuMemHostAlloc((void **)&host, bytes, 0);
    memset(host, 0, bytes);
    CUdeviceptr device = ints_set_to(7, bytes / sizeof(int));
    void *streams[4];
    for (int s = 0; s < 4; s++) cuStreamCreate(&streams[s], 0);
    double best = 1e30;
    for (int rep = 0; rep < reps; rep++) {
        struct timespec start, end;
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (int s = 0; s < 4; s++) {
            add1(add, streams[s], device + s * quarter, 1);
            cuMemcpyDtoHAsync_v2(host + s * quarter, device + s * quarter, quarter, streams[s]);
        }
        cuCtxSynchronize();
        clock_gettime(CLOCK_MONOTONIC, &end);
        double took = (end.tv_sec - start.tv_sec) * 1e3 + (end.tv_nsec - start.tv_nsec) / 1e6;
        if (took < best) best = took;
    }
    printf("ms_per_rep %.2f (host[0] %d)\n", best, host[0]);
    return 0;
}
