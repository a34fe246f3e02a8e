// What NVIDIA's simpleStreams does: kernels and copies into one pinned buffer on blocking streams
// of the program's own, then an event recorded on the legacy default stream and waited for. That
// event stands for the blocking streams' earlier work (legacy stream semantics), so each round's
// copies are complete when the wait returns, and the next round overwrites the buffer. Then
// three more rounds before one wait: what the earlier rounds copied was overwritten unseen.
#include "check.h"

__global__ void add(int *data, int n, int value) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += value;
}

int main() {
    const int n = 1 << 22, streams = 4, chunk = n / streams, threads = 256;
    const size_t bytes = n * sizeof(int), chunk_bytes = bytes / streams;
    int *host, *device;
    CHECK(cudaMallocHost(&host, bytes));
    CHECK(cudaMalloc(&device, bytes));
    CHECK(cudaMemset(device, 0, bytes));
    cudaStream_t stream[streams];
    for (int i = 0; i < streams; i++) CHECK(cudaStreamCreate(&stream[i]));
    cudaEvent_t stop;
    CHECK(cudaEventCreate(&stop));
    int expected = 0;
    for (int round = 1; round <= 3; round++) {
        for (int i = 0; i < streams; i++) add<<<chunk / threads, threads, 0, stream[i]>>>(device + i * chunk, chunk, round);
        for (int i = 0; i < streams; i++)
            CHECK(cudaMemcpyAsync(host + i * chunk, device + i * chunk, chunk_bytes, cudaMemcpyDeviceToHost, stream[i]));
        CHECK(cudaEventRecord(stop, 0));
        CHECK(cudaEventSynchronize(stop));
        expected += round;
        for (int i = 0; i < n; i += 4099) EXPECT(host[i] == expected, "round %d: host[%d] = %d, not %d", round, i, host[i], expected);
    }
    for (int round = 1; round <= 3; round++) {
        for (int i = 0; i < streams; i++) add<<<chunk / threads, threads, 0, stream[i]>>>(device + i * chunk, chunk, round);
        for (int i = 0; i < streams; i++)
            CHECK(cudaMemcpyAsync(host + i * chunk, device + i * chunk, chunk_bytes, cudaMemcpyDeviceToHost, stream[i]));
        expected += round;
    }
    CHECK(cudaEventRecord(stop, 0));
    CHECK(cudaEventSynchronize(stop));
    for (int i = 0; i < n; i += 4099) EXPECT(host[i] == expected, "unwaited rounds: host[%d] = %d, not %d", i, host[i], expected);
    for (int i = 0; i < streams; i++) CHECK(cudaStreamDestroy(stream[i]));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaFreeHost(host));
    CHECK(cudaFree(device));
    printf("legacy_stream_event: 3 rounds on %d blocking streams, each ended by an event on the legacy stream, and 3 ended by one: values right\n", streams);
    return 0;
}
