// What NVIDIA's graphMemoryNodes sample does: a graph allocates memory with an allocation node
// and does not free it; work after the graph uses that memory, and it is freed outside the graph
// (cudaFree, cudaFreeAsync) or by a second graph that holds only a free node. Each launch of the
// graph allocates the memory again. Inside the graph, memory is freed and its address allocated
// again (graphMemoryNodes' negSquare reuses its input's address): the kept allocation is that one.
#include "check.h"

__global__ void fill(float *out, int n, float value) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value * i;
}

__global__ void copy(float *out, const float *in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

__global__ void add_into(float *sum, const float *from, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) sum[i] += from[i];
}

int main() {
    const int n = 1 << 16, threads = 256, blocks = n / threads;
    const size_t bytes = n * sizeof(float);
    int device;
    CHECK(cudaGetDevice(&device));
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    float *sum, *result = new float[n];
    CHECK(cudaMalloc(&sum, bytes));
    CHECK(cudaMemsetAsync(sum, 0, bytes, stream));

    // The graph: allocate A, fill it, copy it into B, free A, allocate C (where A was, as the
    // driver reuses the address), copy B into C, free B. C outlives the graph.
    cudaGraph_t graph;
    CHECK(cudaGraphCreate(&graph, 0));
    cudaMemAllocNodeParams alloc = {};
    alloc.poolProps.allocType = cudaMemAllocationTypePinned;
    alloc.poolProps.location.type = cudaMemLocationTypeDevice;
    alloc.poolProps.location.id = device;
    alloc.bytesize = bytes;
    float value = 2.0f;
    int count = n;
    auto add_kernel = [&](cudaGraphNode_t after, void *function, void **args) {
        cudaKernelNodeParams kernel = {};
        kernel.func = function;
        kernel.gridDim = dim3(blocks);
        kernel.blockDim = dim3(threads);
        kernel.kernelParams = args;
        cudaGraphNode_t node;
        CHECK(cudaGraphAddKernelNode(&node, graph, &after, 1, &kernel));
        return node;
    };
    auto add_alloc = [&](cudaGraphNode_t *after, float **pointer) {
        cudaGraphNode_t node;
        CHECK(cudaGraphAddMemAllocNode(&node, graph, after, after ? 1 : 0, &alloc));
        *pointer = (float *)alloc.dptr;
        return node;
    };
    auto add_free = [&](cudaGraphNode_t after, float *pointer) {
        cudaGraphNode_t node;
        CHECK(cudaGraphAddMemFreeNode(&node, graph, &after, 1, pointer));
        return node;
    };
    float *a, *b, *scratch;
    cudaGraphNode_t node = add_alloc(nullptr, &a);
    void *fill_args[] = {&a, &count, &value};
    node = add_kernel(node, (void *)fill, fill_args);
    node = add_alloc(&node, &b);
    void *to_b[] = {&b, &a, &count};
    node = add_kernel(node, (void *)copy, to_b);
    node = add_free(node, a);
    node = add_alloc(&node, &scratch);
    void *to_scratch[] = {&scratch, &b, &count};
    node = add_kernel(node, (void *)copy, to_scratch);
    add_free(node, b);
    if (scratch == a) printf("graph_memory: the graph allocates again where it freed\n");
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, nullptr, nullptr, 0));

    // A graph that only frees it.
    cudaGraph_t free_graph;
    cudaGraphNode_t free_node;
    CHECK(cudaGraphCreate(&free_graph, 0));
    CHECK(cudaGraphAddMemFreeNode(&free_node, free_graph, nullptr, 0, scratch));
    cudaGraphExec_t free_exec;
    CHECK(cudaGraphInstantiate(&free_exec, free_graph, nullptr, nullptr, 0));

    // Freed with cudaFree after a synchronization.
    CHECK(cudaGraphLaunch(exec, stream));
    add_into<<<blocks, threads, 0, stream>>>(sum, scratch, n);
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaFree(scratch));
    // Freed in stream order.
    CHECK(cudaGraphLaunch(exec, stream));
    add_into<<<blocks, threads, 0, stream>>>(sum, scratch, n);
    CHECK(cudaFreeAsync(scratch, stream));
    CHECK(cudaStreamSynchronize(stream));
    // Freed by the other graph.
    CHECK(cudaGraphLaunch(exec, stream));
    add_into<<<blocks, threads, 0, stream>>>(sum, scratch, n);
    CHECK(cudaGraphLaunch(free_exec, stream));
    CHECK(cudaMemcpyAsync(result, sum, bytes, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    for (int i = 0; i < n; i += 97) EXPECT(result[i] == 6.0f * i, "sum[%d] = %f, not %f", i, result[i], 6.0f * i);

    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphExecDestroy(free_exec));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaGraphDestroy(free_graph));
    CHECK(cudaFree(sum));
    printf("graph_memory: memory a graph allocates, used and freed outside it, three times: sums right\n");
    return 0;
}
