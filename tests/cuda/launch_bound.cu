// Launch-bound: 1000 tiny kernels per iteration on one stream, synchronized per iteration.
// Prints its own time per iteration for comparison with graph and eager replay.
#include "check.h"

__global__ void bump(int *x, int by) { x[threadIdx.x] += by; }

int main() {
    const int launches = 1000, iterations = 20;
    int *x;
    CHECK(cudaMalloc(&x, 32 * sizeof(int)));
    CHECK(cudaMemset(x, 0, 32 * sizeof(int)));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaStreamSynchronize(s));
    double best = 1e30;
    for (int it = 0; it < iterations; it++) {
        double start = seconds_now();
        for (int l = 0; l < launches; l++) bump<<<1, 32, 0, s>>>(x, (l & 1) + 1);
        CHECK(cudaStreamSynchronize(s));
        double took = seconds_now() - start;
        if (took < best) best = took;
    }
    int host[32];
    CHECK(cudaMemcpy(host, x, sizeof host, cudaMemcpyDeviceToHost));
    EXPECT(host[0] == iterations * launches / 2 * 3, "x = %d", host[0]);
    printf("launch_bound: %d launches x %d iterations, x = %d\n", launches, iterations, host[0]);
    printf("time: us_per_iteration %.2f\n", best * 1e6);
    return 0;
}
