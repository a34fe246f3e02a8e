// Two streams fork and join through events: each stream adds one half of two vectors, the
// second half waits for the first stream's upload, and a final kernel on the first stream scales
// the whole sum once both halves are done. Exits non-zero on a CUDA error or a wrong result.
// With TOPOLOGY_OUT=FILE it then captures the same work with CUDA's own stream capture and writes
// the captured graph's nodes and edges to FILE, for gpu-check's topology comparison with the
// recorded graph (scripts/gpu-topology.py).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "check.h"

__global__ void add(const float *a, const float *b, float *sum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) sum[i] = a[i] + b[i];
}

__global__ void scale(float *data, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}

struct Work {
    int n, half, threads;
    size_t bytes;
    float *a, *b, *sum;      // pinned host memory: capturable copies
    float *da, *db, *dsum;   // device memory
    cudaStream_t first, second;
    cudaEvent_t uploaded, second_done;
};

// The fork/join, issued on the two streams; run once for real and once under capture.
static void submit(const Work &w) {
    // Fork: the first stream uploads everything, the second waits for it.
    CHECK(cudaMemcpyAsync(w.da, w.a, w.bytes, cudaMemcpyHostToDevice, w.first));
    CHECK(cudaMemcpyAsync(w.db, w.b, w.bytes, cudaMemcpyHostToDevice, w.first));
    CHECK(cudaEventRecord(w.uploaded, w.first));
    CHECK(cudaStreamWaitEvent(w.second, w.uploaded, 0));
    add<<<(w.half + w.threads - 1) / w.threads, w.threads, 0, w.first>>>(w.da, w.db, w.dsum, w.half);
    add<<<(w.half + w.threads - 1) / w.threads, w.threads, 0, w.second>>>(w.da + w.half, w.db + w.half, w.dsum + w.half, w.half);
    CHECK(cudaGetLastError());
    // Join: the scale on the first stream waits for the second stream's half.
    CHECK(cudaEventRecord(w.second_done, w.second));
    CHECK(cudaStreamWaitEvent(w.first, w.second_done, 0));
    scale<<<(w.n + w.threads - 1) / w.threads, w.threads, 0, w.first>>>(w.dsum, 0.5f, w.n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(w.sum, w.dsum, w.bytes, cudaMemcpyDeviceToHost, w.first));
}

static const char *node_type(cudaGraphNodeType type) {
    switch (type) {
    case cudaGraphNodeTypeKernel: return "kernel";
    case cudaGraphNodeTypeMemcpy: return "copy";
    case cudaGraphNodeTypeMemset: return "fill";
    case cudaGraphNodeTypeHost: return "host_task";
    case cudaGraphNodeTypeGraph: return "subgraph";
    case cudaGraphNodeTypeEmpty: return "barrier";
    case cudaGraphNodeTypeMemAlloc: return "mem_alloc";
    case cudaGraphNodeTypeMemFree: return "mem_free";
    default: return "other";
    }
}

// Captures `submit` into a graph and writes "node INDEX TYPE" and "edge FROM TO" lines.
static void dump_captured_topology(const Work &w, const char *path) {
    cudaGraph_t graph;
    CHECK(cudaStreamBeginCapture(w.first, cudaStreamCaptureModeGlobal));
    submit(w);
    CHECK(cudaStreamEndCapture(w.first, &graph));
    size_t count = 0, edge_count = 0;
    CHECK(cudaGraphGetNodes(graph, nullptr, &count));
    std::vector<cudaGraphNode_t> nodes(count);
    CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
    CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edge_count));
    std::vector<cudaGraphNode_t> from(edge_count), to(edge_count);
    CHECK(cudaGraphGetEdges(graph, from.data(), to.data(), nullptr, &edge_count));
    auto index = [&](cudaGraphNode_t node) {
        for (size_t i = 0; i < count; i++)
            if (nodes[i] == node) return i;
        EXPECT(false, "an edge names a node the graph does not list");
        return count;
    };
    FILE *out = fopen(path, "w");
    EXPECT(out != nullptr, "cannot write %s", path);
    for (size_t i = 0; i < count; i++) {
        cudaGraphNodeType type;
        CHECK(cudaGraphNodeGetType(nodes[i], &type));
        fprintf(out, "node %zu %s\n", i, node_type(type));
    }
    for (size_t i = 0; i < edge_count; i++) fprintf(out, "edge %zu %zu\n", index(from[i]), index(to[i]));
    fclose(out);
    CHECK(cudaGraphDestroy(graph));
}

int main() {
    Work w;
    w.n = 1 << 16;
    w.half = w.n / 2;
    w.threads = 256;
    w.bytes = w.n * sizeof(float);
    const int n = w.n;
    CHECK(cudaMallocHost(&w.a, w.bytes));
    CHECK(cudaMallocHost(&w.b, w.bytes));
    CHECK(cudaMallocHost(&w.sum, w.bytes));
    float *a = w.a, *b = w.b, *sum = w.sum;
    for (int i = 0; i < n; i++) {
        a[i] = float(i);
        b[i] = float(2 * i);
    }
    CHECK(cudaMalloc(&w.da, w.bytes));
    CHECK(cudaMalloc(&w.db, w.bytes));
    CHECK(cudaMalloc(&w.dsum, w.bytes));
    CHECK(cudaStreamCreateWithFlags(&w.first, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&w.second, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&w.uploaded, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&w.second_done, cudaEventDisableTiming));

    submit(w);
    CHECK(cudaStreamSynchronize(w.first));

    for (int i = 0; i < n; i++) {
        float expected = 0.5f * (a[i] + b[i]);
        if (sum[i] != expected) {
            fprintf(stderr, "sum[%d] = %f, expected %f\n", i, sum[i], expected);
            return 1;
        }
    }
    if (const char *path = getenv("TOPOLOGY_OUT")) dump_captured_topology(w, path);
    CHECK(cudaEventDestroy(w.uploaded));
    CHECK(cudaEventDestroy(w.second_done));
    CHECK(cudaStreamDestroy(w.first));
    CHECK(cudaStreamDestroy(w.second));
    CHECK(cudaFree(w.da));
    CHECK(cudaFree(w.db));
    CHECK(cudaFree(w.dsum));
    CHECK(cudaFreeHost(w.a));
    CHECK(cudaFreeHost(w.b));
    CHECK(cudaFreeHost(w.sum));
    printf("vector_add_streams: %d elements correct\n", n);
    return 0;
}
