// A graph with a node of every type the shim records (against the test-double driver): memory the
// graph allocates, a kernel using it, a copy out of it before the graph frees it; a copy from
// pageable host memory; a 2D memset; a host node; an event record node; a child graph; an IF
// conditional reset to 1 at each launch and a WHILE conditional whose body sets its condition to 0.
// It is launched three times: before the second the host data, a kernel's n and the memset's value
// change and the host node is disabled; before the third the host node is enabled again and the
// executable graph is updated whole from a second graph with another n. After the first launch a
// second stream waits for the graph's event and runs a kernel. Prints the data and the host calls.
#include "driver.h"
typedef struct { void *func; unsigned grid[3], block[3], shared; void **params, **extra; void *kern, *ctx; } KernelNodeParams;
typedef struct { CUdeviceptr dst; size_t pitch; unsigned value, element; size_t width, height; } MemsetParams;
typedef struct { void (*fn)(void *); void *data; } HostParams;
typedef struct { char pool[88]; const void *access; size_t access_count; size_t bytes; CUdeviceptr dptr; } AllocParams;
typedef struct {
    size_t srcX, srcY, srcZ, srcLOD; int srcType; const void *srcHost; CUdeviceptr srcDevice; void *srcArray, *r0; size_t srcPitch, srcHeight;
    size_t dstX, dstY, dstZ, dstLOD; int dstType; void *dstHost; CUdeviceptr dstDevice; void *dstArray, *r1; size_t dstPitch, dstHeight;
    size_t width, height, depth;
} Copy3D;
typedef struct { uint64_t handle; int type; unsigned size; void **bodies; void *ctx; } ConditionalParams;
typedef struct { int type, reserved[3]; union { long long pad[29]; ConditionalParams conditional; }; long long reserved2; } NodeParams;
static int host_calls;
static void count(void *data) { host_calls++; }
static void *add_one, *set_condition;
// The driver function `name`, called with the given argument types.
#define G(name, ...) ((int (*)(__VA_ARGS__))dlsym(cuda, #name))
static void *kernel_node(void *graph, void **deps, size_t ndeps, void *function, CUdeviceptr *data, void *n) {
    void *node, *params[] = {data, n};
    KernelNodeParams launch = {function, {1, 1, 1}, {32, 1, 1}, 0, params, 0, 0, 0};
    G(cuGraphAddKernelNode_v2, void **, void *, void **, size_t, const KernelNodeParams *)(&node, graph, deps, ndeps, &launch);
    return node;
}
static void *conditional(void *graph, void **deps, size_t ndeps, int type, unsigned fallback, uint64_t *handle, void **body) {
    void *node;
    G(cuGraphConditionalHandleCreate, uint64_t *, void *, void *, unsigned, unsigned)(handle, graph, 0, fallback, 1);
    NodeParams params = {13};
    params.conditional = (ConditionalParams){*handle, type, 1, 0, 0};
    G(cuGraphAddNode_v2, void **, void *, void **, const void *, size_t, NodeParams *)(&node, graph, deps, 0, ndeps, &params);
    *body = params.conditional.bodies[0];
    return node;
}
// The graph's nodes the program updates: the kernel using the scratch memory, the memset, the host node.
static void *scratch_kernel, *memset_node, *host_node;
static CUdeviceptr x, y, scratch, x_tail, y_child, y_if, y_while;
static int n_scratch = 4, n_one = 1, host_data[4] = {1, 2, 3, 4};
static uint64_t if_handle, while_handle;
static void *build(void *event) {
    void *graph, *node[11];
    G(cuGraphCreate, void **, unsigned)(&graph, 0);
    AllocParams alloc = {{0}, 0, 0, 64, 0};
    G(cuGraphAddMemAllocNode, void **, void *, void **, size_t, AllocParams *)(&node[0], graph, 0, 0, &alloc);
    scratch = alloc.dptr;
    node[1] = scratch_kernel = kernel_node(graph, &node[0], 1, add_one, &scratch, &n_scratch);
    Copy3D out = {0, 0, 0, 0, 2, 0, scratch, 0, 0, 16, 1, 0, 0, 0, 0, 2, 0, x, 0, 0, 16, 1, 16, 1, 1};
    G(cuGraphAddMemcpyNode, void **, void *, void **, size_t, const Copy3D *, void *)(&node[2], graph, &node[1], 1, &out, 0);
    G(cuGraphAddMemFreeNode, void **, void *, void **, size_t, CUdeviceptr)(&node[3], graph, &node[2], 1, scratch);
    Copy3D in = {0, 0, 0, 0, 1, host_data, 0, 0, 0, 16, 1, 0, 0, 0, 0, 2, 0, x_tail, 0, 0, 16, 1, 16, 1, 1};
    G(cuGraphAddMemcpyNode, void **, void *, void **, size_t, const Copy3D *, void *)(&node[4], graph, 0, 0, &in, 0);
    MemsetParams fill = {y, 32, 5, 4, 2, 2};
    G(cuGraphAddMemsetNode, void **, void *, void **, size_t, const MemsetParams *, void *)(&node[5], graph, 0, 0, &fill, 0);
    memset_node = node[5];
    HostParams host = {count, 0};
    G(cuGraphAddHostNode, void **, void *, void **, size_t, const HostParams *)(&node[6], graph, &node[5], 1, &host);
    host_node = node[6];
    G(cuGraphAddEventRecordNode, void **, void *, void **, size_t, void *)(&node[7], graph, &node[6], 1, event);
    void *child;
    G(cuGraphCreate, void **, unsigned)(&child, 0);
    kernel_node(child, 0, 0, add_one, &y_child, &n_one);
    G(cuGraphAddChildGraphNode, void **, void *, void **, size_t, void *)(&node[8], graph, &node[7], 1, child);
    void *if_body, *while_body;
    node[9] = conditional(graph, &node[8], 1, 0, 1, &if_handle, &if_body);
    kernel_node(if_body, 0, 0, add_one, &y_if, &n_one);
    node[10] = conditional(graph, &node[9], 1, 1, 1, &while_handle, &while_body);
    void *step = kernel_node(while_body, 0, 0, add_one, &y_while, &n_one);
    kernel_node(while_body, &step, 1, set_condition, &y, &while_handle);
    return graph;
}
int main(void) {
    if (!open_driver()) return 2;
    void *module, *exec, *stream, *other, *event = (void *)0xe7;
    G(cuModuleLoadData, void **, const void *)(&module, ".version 9.0\n.target sm_90\n.visible .entry add1() { ret; }\n");
    G(cuModuleGetFunction, void **, void *, const char *)(&add_one, module, "add1");
    G(cuModuleGetFunction, void **, void *, const char *)(&set_condition, module, "set_condition");
    G(cuMemAlloc_v2, CUdeviceptr *, size_t)(&x, 64);
    G(cuMemAlloc_v2, CUdeviceptr *, size_t)(&y, 64);
    x_tail = x + 16; y_child = y + 16; y_if = y + 48; y_while = y + 56;
    G(cuStreamCreate, void **, unsigned)(&stream, 1);
    G(cuStreamCreate, void **, unsigned)(&other, 1);
    void *graph = build(event);
    G(cuGraphInstantiateWithFlags, void **, void *, unsigned long long)(&exec, graph, 0);
    G(cuGraphLaunch, void *, void *)(exec, stream);
    G(cuStreamWaitEvent, void *, void *, unsigned)(other, event, 0);
    void *after[] = {&y, &n_one};
    launch_kernel(add_one, 1, 1, 1, 32, 1, 1, 0, other, after, 0);
    G(cuStreamSynchronize, void *)(other);
    host_data[0] = 10;
    int n_more = 8; void *more[] = {&scratch, &n_more};
    KernelNodeParams changed = {add_one, {1, 1, 1}, {32, 1, 1}, 0, more, 0, 0, 0};
    G(cuGraphExecKernelNodeSetParams_v2, void *, void *, const KernelNodeParams *)(exec, scratch_kernel, &changed);
    MemsetParams six = {y, 32, 6, 4, 2, 2};
    G(cuGraphExecMemsetNodeSetParams, void *, void *, const MemsetParams *, void *)(exec, memset_node, &six, 0);
    G(cuGraphNodeSetEnabled, void *, void *, unsigned)(exec, host_node, 0);
    G(cuGraphLaunch, void *, void *)(exec, stream);
    G(cuStreamSynchronize, void *)(stream);
    G(cuGraphNodeSetEnabled, void *, void *, unsigned)(exec, host_node, 1);
    n_scratch = 2;
    void *second = build(event);
    G(cuGraphExecUpdate_v2, void *, void *, void *)(exec, second, 0);
    G(cuGraphLaunch, void *, void *)(exec, stream);
    G(cuStreamSynchronize, void *)(stream);
    int host[2][16];
    G(cuMemcpyDtoH_v2, void *, CUdeviceptr, size_t)(host[0], x, 64);
    G(cuMemcpyDtoH_v2, void *, CUdeviceptr, size_t)(host[1], y, 64);
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 16; j++) printf("%d ", host[i][j]);
        printf("\n");
    }
    printf("host calls %d\n", host_calls);
    return 0;
}
