// Stream-ordered allocation: scratch buffers allocated, used and freed on a stream. First three
// rounds in one window (the frees do not end it), then three rounds each ended by a
// synchronization, whose weight changes: one family, its scratch memory allocated by the graph.
#include "check.h"

__global__ void square_into(float *out, const float *in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * in[i];
}
__global__ void accumulate(float *acc, const float *x, float weight, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) acc[i] += weight * x[i];
}

static void round_of(cudaStream_t s, float *acc, const float *in, float weight, int n) {
    float *scratch;
    CHECK(cudaMallocAsync(&scratch, n * sizeof(float), s));
    square_into<<<n / 256, 256, 0, s>>>(scratch, in, n);
    accumulate<<<n / 256, 256, 0, s>>>(acc, scratch, weight, n);
    CHECK(cudaFreeAsync(scratch, s));
}

int main() {
    const int n = 1 << 14;
    float *in, *acc;
    CHECK(cudaMalloc(&in, n * sizeof(float)));
    CHECK(cudaMalloc(&acc, n * sizeof(float)));
    static float host[n];
    for (int i = 0; i < n; i++) host[i] = (float)(i % 10);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMemcpyAsync(in, host, sizeof host, cudaMemcpyHostToDevice, s));
    CHECK(cudaMemsetAsync(acc, 0, n * sizeof(float), s));
    for (int round = 0; round < 3; round++) round_of(s, acc, in, 1.0f, n);
    CHECK(cudaStreamSynchronize(s));
    for (int round = 0; round < 3; round++) {
        round_of(s, acc, in, (float)(round + 1), n);
        CHECK(cudaStreamSynchronize(s));
    }
    CHECK(cudaMemcpyAsync(host, acc, sizeof host, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < n; i++) EXPECT(host[i] == 9.0f * (i % 10) * (i % 10), "acc[%d] = %f", i, host[i]);
    printf("stream_ordered: acc[9] = %.1f\n", host[9]);
    return 0;
}
