// What a tiny CUDA graph costs against the same work launched on a stream, both waited for with
// cudaStreamSynchronize as the replayer waits for each segment: chains of 1, 2, 4 and 16 empty
// kernels; a 16 KB copy in, a kernel and a 16 KB copy out (cublas_sgemm's shape); a 16 KB memset
// before 3 kernels and a 16 KB copy out (driver_module's); a host function between 2 kernels
// (host_function's); each way alternately. Where the work copies to or from the host, two more
// ways: the graph without its host copies between them on the stream (what the replayer does),
// and a graph whose host copies are kernels reading or writing the pinned memory (as many blocks
// of 256 threads as the replayer's, 16 bytes a step). An argument sets the copies' and memset's
// size in bytes instead of 16 KB (the largest copy a kernel should make).
// Prints the medians in microseconds per iteration, submitting and in all.
//   nvcc -arch=sm_90 -o cuda_graph_latency scripts/bench/cuda_graph_latency.cu && ./cuda_graph_latency [BYTES]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define CHECK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { printf("%s: %s\n", #call, cudaGetErrorString(e)); return 1; } } while (0)

__global__ void empty(float *data) { if (data && threadIdx.x == 1024) data[0] = 0; }
__global__ void copy_words(uint4 *to, const uint4 *from, size_t words) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += gridDim.x * blockDim.x) to[i] = from[i];
}
static void CUDART_CB on_host(void *) {}

using Clock = std::chrono::steady_clock;
static double us(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }
static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

enum Extra { NONE, COPIES, MEMSET, MEMSET_COPY_OUT, HOST_FUNCTION };
static const char *extras[] = {"", ", copied in and out", " after a memset", " after a memset, copied out", " around a host function"};
static size_t bytes = 16 << 10;
// Which of an iteration's work to enqueue: all of it, the part before, between or after its host copies.
enum Part { ALL, BEFORE, BETWEEN, AFTER };
// How host copies are made: by DMA (cudaMemcpyAsync), or by a kernel on pinned memory.
enum Copier { DMA, KERNEL };

static void host_copy(cudaStream_t stream, void *to, const void *from, size_t bytes, cudaMemcpyKind kind, Copier copier) {
    if (copier == DMA) cudaMemcpyAsync(to, from, bytes, kind, stream);
    else {
        // The replayer's grid (replayer/src/cuda/host_copies.rs): up to 64 blocks of 256 threads.
        size_t words = bytes / sizeof(uint4);
        copy_words<<<(unsigned)std::min<size_t>(64, (words + 255) / 256), 256, 0, stream>>>((uint4 *)to, (const uint4 *)from, words);
    }
}

// Enqueues `part` of one iteration's work: `kernels` kernels, and `extra` around or before them.
static void enqueue(cudaStream_t stream, int kernels, Extra extra, float *device, float *pinned, Part part = ALL, Copier copier = DMA) {
    bool copy_in = extra == COPIES, copy_out = extra == COPIES || extra == MEMSET_COPY_OUT;
    if (copy_in && (part == ALL || part == BEFORE)) host_copy(stream, device, pinned, bytes, cudaMemcpyHostToDevice, copier);
    if (part == ALL || part == BETWEEN) {
        if (extra == MEMSET || extra == MEMSET_COPY_OUT) cudaMemsetAsync(device, 0, bytes, stream);
        for (int k = 0; k < kernels; k++) {
            if (extra == HOST_FUNCTION && k == kernels / 2) cudaLaunchHostFunc(stream, on_host, nullptr);
            empty<<<1, 32, 0, stream>>>(device);
        }
    }
    if (copy_out && (part == ALL || part == AFTER)) host_copy(stream, pinned + bytes / sizeof(float), device, bytes, cudaMemcpyDeviceToHost, copier);
}

static cudaGraphExec_t captured(cudaStream_t stream, int kernels, Extra extra, float *device, float *pinned, Part part, Copier copier) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
    enqueue(stream, kernels, extra, device, pinned, part, copier);
    cudaStreamEndCapture(stream, &graph);
    cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    return exec;
}

int main(int argc, char **argv) {
    if (argc > 1) bytes = strtoull(argv[1], nullptr, 0);
    printf("copies and memsets of %zu bytes\n", bytes);
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    float *device, *pinned;
    CHECK(cudaMalloc(&device, bytes));
    CHECK(cudaMallocHost(&pinned, 2 * bytes));
    struct Shape { int kernels; Extra extra; } shapes[] = {{1, NONE}, {2, NONE}, {4, NONE}, {16, NONE}, {1, COPIES}, {3, MEMSET},
                                                          {3, MEMSET_COPY_OUT}, {2, HOST_FUNCTION}};
    printf("| work | stream µs/iter (submitting) | graph | stream / graph | graph, host copies on the stream | stream / that | "
           "graph, host copies by kernels | stream / that |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (Shape shape : shapes) {
        bool host_copies = shape.extra == COPIES || shape.extra == MEMSET_COPY_OUT;
        cudaGraphExec_t whole = captured(stream, shape.kernels, shape.extra, device, pinned, ALL, DMA);
        cudaGraphExec_t between = captured(stream, shape.kernels, shape.extra, device, pinned, BETWEEN, DMA);
        cudaGraphExec_t by_kernels = captured(stream, shape.kernels, shape.extra, device, pinned, ALL, KERNEL);
        int ways = host_copies ? 4 : 2;
        std::vector<double> total[4], submit[4];
        for (int round = 0; round < 20; round++) {
            for (int way = 0; way < ways; way++) {
                for (int i = 0; i < 200; i++) {
                    auto start = Clock::now();
                    switch (way) {
                    case 0: enqueue(stream, shape.kernels, shape.extra, device, pinned); break;
                    case 1: cudaGraphLaunch(whole, stream); break;
                    case 2:
                        enqueue(stream, shape.kernels, shape.extra, device, pinned, BEFORE);
                        cudaGraphLaunch(between, stream);
                        enqueue(stream, shape.kernels, shape.extra, device, pinned, AFTER);
                        break;
                    case 3: cudaGraphLaunch(by_kernels, stream); break;
                    }
                    auto submitted = Clock::now();
                    cudaStreamSynchronize(stream);
                    auto done = Clock::now();
                    if (i >= 10) { total[way].push_back(us(start, done)); submit[way].push_back(us(start, submitted)); }
                }
            }
        }
        CHECK(cudaGetLastError());
        double stream_total = median(total[0]);
        printf("| %d kernel%s%s | %.1f (%.1f)", shape.kernels, shape.kernels > 1 ? "s" : "", extras[shape.extra], stream_total, median(submit[0]));
        for (int way = 1; way < 4; way++) {
            if (way < ways) printf(" | %.1f (%.1f) | %.2f", median(total[way]), median(submit[way]), stream_total / median(total[way]));
            else printf(" | | ");
        }
        printf(" |\n");
        for (cudaGraphExec_t exec : {whole, between, by_kernels}) cudaGraphExecDestroy(exec);
    }
    return 0;
}
