// A blocking stream is captured into a graph (global mode, as graphConditionalNodes does) while a
// non-blocking stream runs work the shim records: a memset and a kernel on memory nothing used
// before, which the shim reads during the capture (through the legacy stream, or synchronizing the
// device, it would invalidate the capture and the program would fail). A third stream joins the
// capture through an event and leaves it through another. The captured graph gets a WHILE
// conditional as graphConditionalNodes adds one (cudaStreamGetCaptureInfo, cudaGraphAddNode,
// cudaStreamUpdateCaptureDependencies), its body captured with cudaStreamBeginCaptureToGraph.
// Exits 1 if a capture fails or a value is wrong.
#include "check.h"

const int N = 16;

__global__ void inc(int *x) { x[threadIdx.x] += 1; }
__global__ void twice(int *x) { x[threadIdx.x] *= 2; }
// One round of the loop: adds 100 to x[0] and ends the loop when `left` reaches 0.
__global__ void countdown(int *left, int *x, cudaGraphConditionalHandle handle) {
    x[0] += 100;
    if (--*left == 0) cudaGraphSetConditional(handle, 0);
}

int main() {
    int *x, *y, *fresh, *left;
    CHECK(cudaMalloc(&x, N * sizeof(int)));
    CHECK(cudaMalloc(&y, N * sizeof(int)));
    CHECK(cudaMalloc(&fresh, N * sizeof(int)));
    CHECK(cudaMalloc(&left, sizeof(int)));
    CHECK(cudaMemset(x, 0, N * sizeof(int)));
    CHECK(cudaMemset(y, 0, N * sizeof(int)));
    CHECK(cudaDeviceSynchronize());
    cudaStream_t captured, working, joining;
    CHECK(cudaStreamCreate(&captured));
    CHECK(cudaStreamCreateWithFlags(&working, cudaStreamNonBlocking));
    CHECK(cudaStreamCreate(&joining));
    cudaEvent_t fork, join;
    CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));

    CHECK(cudaStreamBeginCapture(captured, cudaStreamCaptureModeGlobal));
    inc<<<1, N, 0, captured>>>(x);
    CHECK(cudaMemsetAsync(fresh, 0, N * sizeof(int), working));
    inc<<<1, N, 0, working>>>(fresh);
    CHECK(cudaEventRecord(fork, captured));
    CHECK(cudaStreamWaitEvent(joining, fork, 0));
    inc<<<1, N, 0, joining>>>(y);
    CHECK(cudaEventRecord(join, joining));
    CHECK(cudaStreamWaitEvent(captured, join, 0));
    cudaStreamCaptureStatus status;
    CHECK(cudaStreamIsCapturing(working, &status));
    EXPECT(status == cudaStreamCaptureStatusNone, "the working stream takes part in the capture");
    // The loop, added to the captured graph by hand, reset to 1 at each launch (a do-while).
    cudaGraph_t graph;
    const cudaGraphNode_t *dependencies;
    size_t count;
    CHECK(cudaStreamGetCaptureInfo(captured, &status, nullptr, &graph, &dependencies, nullptr, &count));
    cudaGraphConditionalHandle handle;
    CHECK(cudaGraphConditionalHandleCreate(&handle, graph, 1, cudaGraphCondAssignDefault));
    cudaGraphNodeParams params = {cudaGraphNodeTypeConditional};
    params.conditional.handle = handle;
    params.conditional.type = cudaGraphCondTypeWhile;
    params.conditional.size = 1;
    cudaGraphNode_t loop;
    CHECK(cudaGraphAddNode(&loop, graph, dependencies, nullptr, count, &params));
    cudaGraph_t body = params.conditional.phGraph_out[0];
    CHECK(cudaStreamUpdateCaptureDependencies(captured, &loop, nullptr, 1, cudaStreamSetCaptureDependencies));
    twice<<<1, N, 0, captured>>>(x);
    CHECK(cudaStreamEndCapture(captured, &graph));
    CHECK(cudaStreamSynchronize(working));

    cudaStream_t body_stream;
    CHECK(cudaStreamCreate(&body_stream));
    CHECK(cudaStreamBeginCaptureToGraph(body_stream, body, nullptr, nullptr, 0, cudaStreamCaptureModeGlobal));
    countdown<<<1, 1, 0, body_stream>>>(left, x, handle);
    CHECK(cudaStreamEndCapture(body_stream, nullptr));

    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    const int rounds = 3;
    for (int launch = 0; launch < 2; launch++) {
        CHECK(cudaMemcpyAsync(left, &rounds, sizeof rounds, cudaMemcpyHostToDevice, captured));
        CHECK(cudaGraphLaunch(exec, captured));
        CHECK(cudaStreamSynchronize(captured));
    }
    int host[3][N];
    CHECK(cudaMemcpy(host[0], x, sizeof host[0], cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(host[1], y, sizeof host[1], cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(host[2], fresh, sizeof host[2], cudaMemcpyDeviceToHost));
    // x[0]: (0 + 1 + 300) * 2, then (602 + 1 + 300) * 2; the others (0 + 1) * 2, then (2 + 1) * 2.
    EXPECT(host[0][0] == 1806, "x[0] = %d, expected 1806", host[0][0]);
    for (int i = 1; i < N; i++) EXPECT(host[0][i] == 6, "x[%d] = %d, expected 6", i, host[0][i]);
    for (int i = 0; i < N; i++) EXPECT(host[1][i] == 2 && host[2][i] == 1, "y[%d] = %d, fresh = %d", i, host[1][i], host[2][i]);
    printf("capture_alongside: x = %d %d, y = %d, fresh = %d\n", host[0][0], host[0][1], host[1][0], host[2][0]);
    return 0;
}
