// gpu-check-flags: --default-stream per-thread
// Built with the per-thread default stream: launches without a stream go to this thread's own
// stream, which the runtime reaches through the _ptsz/_ptds driver entry points.
#include "check.h"

__global__ void step(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * 2 + 1;
}

int main() {
    const int n = 4096;
    int *x;
    CHECK(cudaMalloc(&x, n * sizeof(int)));
    CHECK(cudaMemsetAsync(x, 0, n * sizeof(int)));
    for (int k = 0; k < 8; k++) step<<<n / 128, 128>>>(x, n);
    int host[n];
    CHECK(cudaMemcpyAsync(host, x, sizeof host, cudaMemcpyDeviceToHost));
    CHECK(cudaStreamSynchronize(cudaStreamPerThread));
    for (int i = 0; i < n; i++) EXPECT(host[i] == 255, "x[%d] = %d", i, host[i]);
    printf("per_thread_stream: x = %d\n", host[0]);
    return 0;
}
