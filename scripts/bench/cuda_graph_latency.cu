// What a tiny CUDA graph costs against the same work launched on a stream, both waited for with
// cudaStreamSynchronize as the replayer waits for each segment: chains of 1, 2, 4 and 16 empty
// kernels; a 16 KB copy in, a kernel and a 16 KB copy out (cublas_sgemm's shape); a 16 KB memset
// before 3 kernels (driver_module's); a host function between 2 kernels (host_function's); each way
// alternately. Prints the medians in microseconds per iteration, submitting and in all.
//   nvcc -arch=sm_90 -o cuda_graph_latency scripts/bench/cuda_graph_latency.cu && ./cuda_graph_latency
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
#define CHECK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { printf("%s: %s\n", #call, cudaGetErrorString(e)); return 1; } } while (0)

__global__ void empty(float *data) { if (data && threadIdx.x == 1024) data[0] = 0; }
static void CUDART_CB on_host(void *) {}

using Clock = std::chrono::steady_clock;
static double us(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }
static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

enum Extra { NONE, COPIES, MEMSET, HOST_FUNCTION };
static const char *extras[] = {"", ", 16 KB copied in and out", " after a 16 KB memset", " around a host function"};

// Enqueues one iteration's work: `kernels` kernels, and `extra` around or before them.
static void enqueue(cudaStream_t stream, int kernels, Extra extra, float *device, float *pinned) {
    const size_t bytes = 16 << 10;
    if (extra == COPIES) cudaMemcpyAsync(device, pinned, bytes, cudaMemcpyHostToDevice, stream);
    if (extra == MEMSET) cudaMemsetAsync(device, 0, bytes, stream);
    for (int k = 0; k < kernels; k++) {
        if (extra == HOST_FUNCTION && k == kernels / 2) cudaLaunchHostFunc(stream, on_host, nullptr);
        empty<<<1, 32, 0, stream>>>(device);
    }
    if (extra == COPIES) cudaMemcpyAsync(pinned + bytes / sizeof(float), device, bytes, cudaMemcpyDeviceToHost, stream);
}

int main() {
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    float *device, *pinned;
    CHECK(cudaMalloc(&device, 64 << 10));
    CHECK(cudaMallocHost(&pinned, 64 << 10));
    struct Shape { int kernels; Extra extra; } shapes[] = {{1, NONE}, {2, NONE}, {4, NONE}, {16, NONE}, {1, COPIES}, {3, MEMSET}, {2, HOST_FUNCTION}};
    printf("| work | stream µs/iter (submitting) | graph µs/iter (submitting) | stream / graph |\n| --- | --- | --- | --- |\n");
    for (Shape shape : shapes) {
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        enqueue(stream, shape.kernels, shape.extra, device, pinned);
        CHECK(cudaStreamEndCapture(stream, &graph));
        CHECK(cudaGraphInstantiate(&exec, graph, 0));
        std::vector<double> total[2], submit[2];
        for (int round = 0; round < 20; round++) {
            for (int way = 0; way < 2; way++) {
                for (int i = 0; i < 200; i++) {
                    auto start = Clock::now();
                    if (way == 0) enqueue(stream, shape.kernels, shape.extra, device, pinned);
                    else cudaGraphLaunch(exec, stream);
                    auto submitted = Clock::now();
                    cudaStreamSynchronize(stream);
                    auto done = Clock::now();
                    if (i >= 10) { total[way].push_back(us(start, done)); submit[way].push_back(us(start, submitted)); }
                }
            }
        }
        CHECK(cudaGetLastError());
        double stream_total = median(total[0]), graph_total = median(total[1]);
        printf("| %d kernel%s%s | %.1f (%.1f) | %.1f (%.1f) | %.2f |\n", shape.kernels, shape.kernels > 1 ? "s" : "",
               extras[shape.extra], stream_total, median(submit[0]), graph_total, median(submit[1]),
               stream_total / graph_total);
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
    }
    return 0;
}
