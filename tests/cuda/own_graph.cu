// The program builds its own CUDA graph, launches it, updates a kernel node's scalar between
// launches (cudaGraphExecKernelNodeSetParams), and synchronizes after each launch.
#include "check.h"

__global__ void axpy(float *y, const float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}

int main() {
    const int n = 1 << 12;
    float *x, *y;
    CHECK(cudaMalloc(&x, n * sizeof(float)));
    CHECK(cudaMalloc(&y, n * sizeof(float)));
    float ones[n];
    for (float &v : ones) v = 1.0f;
    CHECK(cudaMemcpy(x, ones, sizeof ones, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(y, 0, sizeof ones));
    // The set-up ends a window of its own, so each launch has one: four windows alike.
    CHECK(cudaDeviceSynchronize());

    cudaGraph_t graph;
    CHECK(cudaGraphCreate(&graph, 0));
    float a = 1.0f;
    int count = n;
    void *args[] = {&y, &x, &a, &count};
    cudaKernelNodeParams params = {};
    params.func = (void *)axpy;
    params.gridDim = dim3(n / 256);
    params.blockDim = dim3(256);
    params.kernelParams = args;
    cudaGraphNode_t node;
    CHECK(cudaGraphAddKernelNode(&node, graph, nullptr, 0, &params));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    for (int k = 1; k <= 4; k++) {
        a = (float)k;
        CHECK(cudaGraphExecKernelNodeSetParams(exec, node, &params));
        CHECK(cudaGraphLaunch(exec, s));
        CHECK(cudaStreamSynchronize(s));
    }
    float host[n];
    CHECK(cudaMemcpy(host, y, sizeof host, cudaMemcpyDeviceToHost));
    for (float v : host) EXPECT(v == 10.0f, "y = %f, expected 10", v);
    printf("own_graph: y = %.1f after 4 launches\n", host[0]);
    return 0;
}
