// gpu-check-recordings: 20
// Two streams of different priority each copy 64 MB in, run many small kernels over it and copy it
// back, and record an end event; the host waits on one event, then the other. A wait on one event
// ends only what that event covers: the other stream's work, still in flight, belongs to the next
// window, and no snapshot may race with it (issue 11: two of four states differed by 200 MB).
#include "check.h"

__global__ void bump(int *x, int n, int by) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] += by;
}

int main() {
    const int n = 16 << 20, launches = 64;
    int low, high;
    CHECK(cudaDeviceGetStreamPriorityRange(&low, &high));
    cudaStream_t streams[2];
    CHECK(cudaStreamCreateWithPriority(&streams[0], cudaStreamNonBlocking, low));
    CHECK(cudaStreamCreateWithPriority(&streams[1], cudaStreamNonBlocking, high));
    int *host[2], *device[2];
    cudaEvent_t done[2];
    for (int s = 0; s < 2; s++) {
        CHECK(cudaMallocHost(&host[s], n * sizeof(int)));
        CHECK(cudaMalloc(&device[s], n * sizeof(int)));
        CHECK(cudaEventCreate(&done[s]));
        for (int i = 0; i < n; i++) host[s][i] = i ^ s;
    }
    for (int s = 0; s < 2; s++) {
        CHECK(cudaMemcpyAsync(device[s], host[s], n * sizeof(int), cudaMemcpyHostToDevice, streams[s]));
        for (int k = 0; k < launches; k++) bump<<<128, 256, 0, streams[s]>>>(device[s], n, s + 1);
        CHECK(cudaMemcpyAsync(host[s], device[s], n * sizeof(int), cudaMemcpyDeviceToHost, streams[s]));
        CHECK(cudaEventRecord(done[s], streams[s]));
    }
    for (int s = 0; s < 2; s++) {
        CHECK(cudaEventSynchronize(done[s]));
        for (int i = 0; i < n; i += 4093) EXPECT(host[s][i] == (i ^ s) + launches * (s + 1), "stream %d: host[%d] = %d", s, i, host[s][i]);
    }
    for (int s = 0; s < 2; s++) {
        CHECK(cudaFreeHost(host[s]));
        CHECK(cudaFree(device[s]));
    }
    printf("two_stream_events: %d launches on each of two streams, both results right\n", launches);
    return 0;
}
