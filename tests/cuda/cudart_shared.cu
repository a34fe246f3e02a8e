// gpu-check-flags: -cudart shared
// The same fork/join shape as vector_add_streams, linked against the shared CUDA runtime.
#include "check.h"

__global__ void mul(float *x, float by, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= by;
}

int main() {
    const int n = 1 << 14;
    float *x;
    CHECK(cudaMalloc(&x, n * sizeof(float)));
    float host[n];
    for (int i = 0; i < n; i++) host[i] = 1.0f;
    CHECK(cudaMemcpy(x, host, sizeof host, cudaMemcpyHostToDevice));
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreate(&s1));
    CHECK(cudaStreamCreate(&s2));
    cudaEvent_t e;
    CHECK(cudaEventCreate(&e));
    mul<<<n / 2 / 256, 256, 0, s1>>>(x, 3.0f, n / 2);
    mul<<<n / 2 / 256, 256, 0, s2>>>(x + n / 2, 5.0f, n / 2);
    CHECK(cudaEventRecord(e, s2));
    CHECK(cudaStreamWaitEvent(s1, e, 0));
    mul<<<n / 256, 256, 0, s1>>>(x, 2.0f, n);
    CHECK(cudaMemcpyAsync(host, x, sizeof host, cudaMemcpyDeviceToHost, s1));
    CHECK(cudaStreamSynchronize(s1));
    EXPECT(host[0] == 6.0f && host[n - 1] == 10.0f, "x = %f %f", host[0], host[n - 1]);
    printf("cudart_shared: %.1f %.1f\n", host[0], host[n - 1]);
    return 0;
}
