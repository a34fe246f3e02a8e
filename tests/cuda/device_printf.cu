// What NVIDIA's simplePrintf and cdpSimplePrint do: kernels print, and that is the program's
// whole output. The driver writes the lines to the program's stdout at synchronizations; the
// shim keeps each window's lines with its segment, and the replay compares what its own kernels
// print with them (as sorted lines). One warp per launch keeps the native order fixed.
// gpu-check-flags: -rdc=true -lcudadevrt
#include "check.h"

__global__ void child(int round, int parent) {
    printf("round %d: child of thread %d says %d\n", round, parent, parent * 10 + threadIdx.x);
}

__global__ void greet(int round, const float *values) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    printf("round %d: thread %d holds %.3f\n", round, i, values[i]);
    if (round == 2 && threadIdx.x == 0) child<<<1, 2>>>(round, i);
}

int main() {
    float host[32];
    for (int i = 0; i < 32; i++) host[i] = 0.5f * i;
    float *values;
    CHECK(cudaMalloc(&values, sizeof host));
    CHECK(cudaMemcpy(values, host, sizeof host, cudaMemcpyHostToDevice));
    greet<<<1, 32>>>(1, values);
    CHECK(cudaDeviceSynchronize());
    printf("host: between the rounds\n");
    greet<<<1, 8>>>(2, values);
    CHECK(cudaStreamSynchronize(0));
    printf("host: done\n");
    CHECK(cudaFree(values));
    return 0;
}
