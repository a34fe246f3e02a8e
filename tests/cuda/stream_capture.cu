// The program captures a stream into a graph itself, then launches the graph twice.
#include "check.h"

__global__ void inc(int *x) { x[threadIdx.x] += 1; }
__global__ void twice(int *x) { x[threadIdx.x] *= 2; }

int main() {
    int *x;
    CHECK(cudaMalloc(&x, 32 * sizeof(int)));
    CHECK(cudaMemset(x, 0, 32 * sizeof(int)));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    cudaGraph_t graph;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    inc<<<1, 32, 0, s>>>(x);
    twice<<<1, 32, 0, s>>>(x);
    CHECK(cudaStreamEndCapture(s, &graph));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaGraphLaunch(exec, s));
    int host[32];
    CHECK(cudaMemcpyAsync(host, x, sizeof host, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    EXPECT(host[0] == 6, "x = %d, expected 6", host[0]);
    printf("stream_capture: x = %d\n", host[0]);
    return 0;
}
