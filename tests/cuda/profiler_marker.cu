// What NVIDIA's asyncAPI sample revealed: the program stops the profiler (a capture marker) with
// its copies still running, the copy back landing in the same pinned buffer the copy in read from,
// and waits by polling an event. The marker closes the window, so the shim waits for that work
// first: reading the buffer while the copy back fills it kept a torn mix as the copy in's data.
#include "check.h"

// cuda_profiler_api.h is not among the pip wheels' headers; cudart has the functions.
extern "C" cudaError_t cudaProfilerStart(void);
extern "C" cudaError_t cudaProfilerStop(void);

__global__ void increment(int *x, int by) { x[blockIdx.x * blockDim.x + threadIdx.x] += by; }

int main() {
    const int n = 16 << 20;
    int *host, *device;
    CHECK(cudaMallocHost(&host, n * sizeof(int)));
    CHECK(cudaMalloc(&device, n * sizeof(int)));
    for (int i = 0; i < n; i++) host[i] = i;
    cudaEvent_t done;
    CHECK(cudaEventCreate(&done));
    CHECK(cudaProfilerStart());
    CHECK(cudaMemcpyAsync(device, host, n * sizeof(int), cudaMemcpyHostToDevice, 0));
    increment<<<n / 512, 512>>>(device, 26);
    CHECK(cudaMemcpyAsync(host, device, n * sizeof(int), cudaMemcpyDeviceToHost, 0));
    CHECK(cudaEventRecord(done, 0));
    CHECK(cudaProfilerStop());
    while (cudaEventQuery(done) == cudaErrorNotReady) {
    }
    for (int i = 0; i < n; i++) EXPECT(host[i] == i + 26, "host[%d] = %d", i, host[i]);
    CHECK(cudaFreeHost(host));
    CHECK(cudaFree(device));
    printf("profiler_marker: %d values incremented\n", n);
    return 0;
}
