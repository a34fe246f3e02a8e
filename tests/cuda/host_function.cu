// A host function between two kernels on one stream: the second kernel runs after it.
#include "check.h"

__global__ void set(int *x, int v) { x[threadIdx.x] = v; }
__global__ void add(int *x, int v) { x[threadIdx.x] += v; }

static void CUDART_CB note(void *counter) { ++*static_cast<int *>(counter); }

int main() {
    int *x, calls = 0;
    CHECK(cudaMalloc(&x, 64 * sizeof(int)));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    set<<<1, 64, 0, s>>>(x, 40);
    CHECK(cudaLaunchHostFunc(s, note, &calls));
    add<<<1, 64, 0, s>>>(x, 2);
    int host[64];
    CHECK(cudaMemcpyAsync(host, x, sizeof host, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    EXPECT(calls == 1 && host[63] == 42, "calls %d x %d", calls, host[63]);
    printf("host_function: x = %d, host function ran %d time(s)\n", host[0], calls);
    return 0;
}
