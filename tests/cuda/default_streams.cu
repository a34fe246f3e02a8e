// The legacy default stream mixed with a blocking and a non-blocking stream: work on stream 0
// waits for the blocking stream and is waited on by it, but not by the non-blocking one, which
// is ordered by an explicit event instead.
#include "check.h"

__global__ void fill(float *x, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = v;
}
__global__ void axpy(float *y, const float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}

int main() {
    const int n = 1 << 16;
    float *x, *y, *z;
    CHECK(cudaMalloc(&x, n * sizeof(float)));
    CHECK(cudaMalloc(&y, n * sizeof(float)));
    CHECK(cudaMalloc(&z, n * sizeof(float)));
    cudaStream_t blocking, nonblocking;
    CHECK(cudaStreamCreate(&blocking));
    CHECK(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking));
    cudaEvent_t done;
    CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));

    fill<<<n / 256, 256, 0, blocking>>>(x, 1.0f, n);  // stream 0 below waits for this
    fill<<<n / 256, 256>>>(y, 2.0f, n);               // legacy default stream
    axpy<<<n / 256, 256, 0, blocking>>>(y, x, 3.0f, n); // waits for the stream-0 fill
    fill<<<n / 256, 256, 0, nonblocking>>>(z, 5.0f, n); // independent of stream 0
    CHECK(cudaEventRecord(done, blocking));
    CHECK(cudaStreamWaitEvent(nonblocking, done, 0));
    axpy<<<n / 256, 256, 0, nonblocking>>>(z, y, 1.0f, n);
    CHECK(cudaDeviceSynchronize());

    float host[4];
    CHECK(cudaMemcpy(host, z + n - 4, sizeof host, cudaMemcpyDeviceToHost));
    for (float v : host) EXPECT(v == 10.0f, "z = %f, expected 10", v);
    printf("default_streams: z = %.1f\n", host[0]);
    return 0;
}
