// Jacobi-style iteration: two buffers swapped and a weight changed every iteration, with a
// stream synchronization after each, so every iteration is one recorded segment.
#include "check.h"
#include <vector>

__global__ void relax(float *out, const float *in, float weight, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) out[i] = in[i] + weight * (0.5f * (in[i - 1] + in[i + 1]) - in[i]);
    else if (i < n) out[i] = in[i];
}

int main() {
    const int n = 1 << 12, iterations = 16;
    std::vector<float> host(n, 0.0f);
    host[0] = 64.0f;
    host[n - 1] = 32.0f;
    float *a, *b;
    CHECK(cudaMalloc(&a, n * 4));
    CHECK(cudaMalloc(&b, n * 4));
    CHECK(cudaMemcpy(a, host.data(), n * 4, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    double start = seconds_now();
    for (int k = 0; k < iterations; k++) {
        float weight = 0.5f + 0.25f * (k % 3);
        relax<<<n / 256, 256, 0, s>>>(b, a, weight, n);
        CHECK(cudaStreamSynchronize(s));
        float *t = a;
        a = b;
        b = t;
    }
    double took = seconds_now() - start;
    CHECK(cudaMemcpy(host.data(), a, n * 4, cudaMemcpyDeviceToHost));
    double sum = 0;
    for (float v : host) sum += v;
    printf("jacobi: %d iterations, sum %.4f\n", iterations, sum);
    printf("time: us_per_iteration %.2f\n", took * 1e6 / iterations);
    return 0;
}
