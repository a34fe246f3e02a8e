// The program's own graphs with a node of every type a replay can reproduce, launched several times
// with the program changing the executable graphs in every way CUDA allows in between:
//   memory:       allocation -> kernel -> copy out -> free (one graph); an allocation another graph
//                 keeps, used by a stream kernel and freed in stream order;
//   copies:       from pinned and pageable host memory, to pinned and pageable host memory, a 3D copy
//                 between device regions, a 2D memset, a kernel, a host node, event record and wait
//                 nodes, a child graph, an empty node;
//   conditionals: IF set by a kernel, WHILE reset to 1 at each launch with a body captured into it
//                 (cudaStreamBeginCaptureToGraph), SWITCH with three bodies.
// Updates: kernel, memset, memcpy, host, child graph, event record and wait node parameters, the
// generic cudaGraphExecNodeSetParams, a node disabled and enabled again, cudaGraphUpload and a whole
// cudaGraphExecUpdate. Exits 1 on any wrong value.
#include "check.h"

const int N = 256;

__global__ void fill(int *x, int base) { x[threadIdx.x] = base + threadIdx.x; }
__global__ void add(const int *a, const int *b, int *c) { c[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x]; }
__global__ void scale(int *x, int k) { x[threadIdx.x] *= k; }
__global__ void inc(int *x) { x[threadIdx.x] += 1; }
__global__ void set_condition(cudaGraphConditionalHandle handle, const int *value) { cudaGraphSetConditional(handle, *value); }
// One round of the WHILE body: counts the round in rounds[*left], and ends the loop at 0.
__global__ void loop_round(int *left, int *rounds, cudaGraphConditionalHandle handle) {
    rounds[*left] += 1;
    *left -= 1;
    if (*left == 0) cudaGraphSetConditional(handle, 0);
}

static int host_calls, host_weight = 1;
static void CUDART_CB count(void *) { host_calls += host_weight; }
static void CUDART_CB count_double(void *) { host_calls += 2 * host_weight; }

static cudaKernelNodeParams kernel_params(void *function, void **args, int threads) {
    cudaKernelNodeParams params = {};
    params.func = function;
    params.gridDim = dim3(1);
    params.blockDim = dim3(threads);
    params.kernelParams = args;
    return params;
}

static cudaGraphNode_t kernel(cudaGraph_t graph, const cudaGraphNode_t *deps, size_t count, void *function, void **args, int threads = N) {
    cudaGraphNode_t node;
    cudaKernelNodeParams params = kernel_params(function, args, threads);
    CHECK(cudaGraphAddKernelNode(&node, graph, deps, count, &params));
    return node;
}

static void expect_all(const int *values, int count, int expected, const char *what) {
    for (int i = 0; i < count; i++) EXPECT(values[i] == expected, "%s[%d] = %d, expected %d", what, i, values[i], expected);
}

// ---- memory nodes ------------------------------------------------------------------------------

static void memory_graphs(cudaStream_t stream, int device) {
    int *out;
    CHECK(cudaMalloc(&out, N * sizeof(int)));
    cudaMemAllocNodeParams alloc = {};
    alloc.poolProps.allocType = cudaMemAllocationTypePinned;
    alloc.poolProps.location.type = cudaMemLocationTypeDevice;
    alloc.poolProps.location.id = device;
    alloc.bytesize = N * sizeof(int);
    // alloc -> fill(scratch, base) -> copy scratch -> out -> free.
    cudaGraph_t graph;
    CHECK(cudaGraphCreate(&graph, 0));
    cudaGraphNode_t allocated, filled, copied, freed;
    CHECK(cudaGraphAddMemAllocNode(&allocated, graph, nullptr, 0, &alloc));
    int *scratch = (int *)alloc.dptr;
    int base = 100;
    void *fill_args[] = {&scratch, &base};
    filled = kernel(graph, &allocated, 1, (void *)fill, fill_args);
    CHECK(cudaGraphAddMemcpyNode1D(&copied, graph, &filled, 1, out, scratch, N * sizeof(int), cudaMemcpyDeviceToDevice));
    CHECK(cudaGraphAddMemFreeNode(&freed, graph, &copied, 1, scratch));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    int host[N];
    for (int launch = 0; launch < 2; launch++) {
        CHECK(cudaGraphLaunch(exec, stream));
        CHECK(cudaStreamSynchronize(stream));
        CHECK(cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost));
        for (int i = 0; i < N; i++) EXPECT(host[i] == base + i, "out[%d] = %d after launch %d", i, host[i], launch);
        base = 200;
        cudaKernelNodeParams params = kernel_params((void *)fill, fill_args, N);
        CHECK(cudaGraphExecKernelNodeSetParams(exec, filled, &params));
    }
    // An allocation the graph keeps: a stream kernel uses it, and it is freed in stream order.
    cudaGraph_t keeping;
    CHECK(cudaGraphCreate(&keeping, 0));
    CHECK(cudaGraphAddMemAllocNode(&allocated, keeping, nullptr, 0, &alloc));
    int *kept = (int *)alloc.dptr, five = 5;
    void *kept_args[] = {&kept, &five};
    kernel(keeping, &allocated, 1, (void *)fill, kept_args);
    cudaGraphExec_t keeping_exec;
    CHECK(cudaGraphInstantiate(&keeping_exec, keeping, 0));
    CHECK(cudaGraphLaunch(keeping_exec, stream));
    add<<<1, N, 0, stream>>>(kept, out, out);
    CHECK(cudaFreeAsync(kept, stream));
    CHECK(cudaMemcpyAsync(host, out, sizeof host, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    for (int i = 0; i < N; i++) EXPECT(host[i] == 205 + 2 * i, "out[%d] = %d with the kept allocation", i, host[i]);
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphExecDestroy(keeping_exec));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaGraphDestroy(keeping));
    CHECK(cudaFree(out));
    printf("graph_nodes: memory nodes %d %d\n", host[0], host[N - 1]);
}

// ---- copies, host, events, child graphs ---------------------------------------------------------

struct Copies {
    int *a, *b, *c, *box, *side;    // device; box: 4 rows of 64 ints, pitch 64 ints
    int *pinned_in, *pinned_out;    // pinned host
    int *pageable_in, *pageable_out, *other_in;
    cudaEvent_t before, after, before2, after2;
    cudaGraphNode_t from_pageable, memset_box, sum, host, record, wait, child;
};

static cudaGraph_t child_graph(Copies &m, int *k) {
    static void *args[2];
    args[0] = &m.c;
    args[1] = k;
    cudaGraph_t child;
    CHECK(cudaGraphCreate(&child, 0));
    kernel(child, nullptr, 0, (void *)scale, args);
    return child;
}

// pinned_in -> a, pageable_in -> b (from host); memset the box; wait for `before`; c = a + b;
// host node; record `after`; child graph c *= k; 3D copy of c's first 128 ints into the box's
// rows 1 and 2 (columns 0..63); empty; c -> pinned_out and pageable_out.
static cudaGraph_t copies_graph(Copies &m, int *k, int box_value) {
    cudaGraph_t graph;
    CHECK(cudaGraphCreate(&graph, 0));
    cudaGraphNode_t to_a, deps[4];
    CHECK(cudaGraphAddMemcpyNode1D(&to_a, graph, nullptr, 0, m.a, m.pinned_in, N * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaGraphAddMemcpyNode1D(&m.from_pageable, graph, nullptr, 0, m.b, m.pageable_in, N * sizeof(int), cudaMemcpyHostToDevice));
    cudaMemsetParams set = {};
    set.dst = m.box;
    set.pitch = 64 * sizeof(int);
    set.value = box_value;
    set.elementSize = sizeof(int);
    set.width = 64;
    set.height = 4;
    CHECK(cudaGraphAddMemsetNode(&m.memset_box, graph, nullptr, 0, &set));
    CHECK(cudaGraphAddEventWaitNode(&m.wait, graph, nullptr, 0, m.before));
    deps[0] = to_a, deps[1] = m.from_pageable, deps[2] = m.wait;
    static void *sum_args[3];
    sum_args[0] = &m.a, sum_args[1] = &m.b, sum_args[2] = &m.c;
    m.sum = kernel(graph, deps, 3, (void *)add, sum_args);
    cudaHostNodeParams host = {count, nullptr};
    CHECK(cudaGraphAddHostNode(&m.host, graph, &m.sum, 1, &host));
    CHECK(cudaGraphAddEventRecordNode(&m.record, graph, &m.host, 1, m.after));
    cudaGraph_t child = child_graph(m, k);
    CHECK(cudaGraphAddChildGraphNode(&m.child, graph, &m.record, 1, child));
    CHECK(cudaGraphDestroy(child));
    cudaMemcpy3DParms box = {};
    box.srcPtr = make_cudaPitchedPtr(m.c, 64 * sizeof(int), 64, 2);
    box.dstPtr = make_cudaPitchedPtr(m.box, 64 * sizeof(int), 64, 4);
    box.dstPos = make_cudaPos(0, 1, 0);
    box.extent = make_cudaExtent(64 * sizeof(int), 2, 1);
    box.kind = cudaMemcpyDeviceToDevice;
    cudaGraphNode_t boxed, joined, out[2];
    deps[0] = m.child, deps[1] = m.memset_box;
    CHECK(cudaGraphAddMemcpyNode(&boxed, graph, deps, 2, &box));
    CHECK(cudaGraphAddEmptyNode(&joined, graph, &boxed, 1));
    CHECK(cudaGraphAddMemcpyNode1D(&out[0], graph, &joined, 1, m.pinned_out, m.c, N * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaGraphAddMemcpyNode1D(&out[1], graph, &joined, 1, m.pageable_out, m.c, N * sizeof(int), cudaMemcpyDeviceToHost));
    return graph;
}

static void check_copies(Copies &m, int k, bool summed, int box_value, int previous_c, const char *when) {
    int box[4 * 64];
    CHECK(cudaMemcpy(box, m.box, sizeof box, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) {
        int c = summed ? (m.pinned_in[i] + m.pageable_in[i]) * k : previous_c * k;
        EXPECT(m.pinned_out[i] == c && m.pageable_out[i] == c, "%s: c[%d] = %d and %d, expected %d", when, i, m.pinned_out[i], m.pageable_out[i], c);
    }
    expect_all(box, 64, box_value, "box row 0");
    expect_all(box + 192, 64, box_value, "box row 3");
    for (int i = 0; i < 128; i++) EXPECT(box[64 + i] == m.pinned_out[i], "%s: box[%d] = %d, expected %d", when, 64 + i, box[64 + i], m.pinned_out[i]);
}

static void copies_graphs(cudaStream_t stream) {
    Copies m;
    CHECK(cudaMalloc(&m.a, N * sizeof(int)));
    CHECK(cudaMalloc(&m.b, N * sizeof(int)));
    CHECK(cudaMalloc(&m.c, N * sizeof(int)));
    CHECK(cudaMalloc(&m.box, 4 * 64 * sizeof(int)));
    CHECK(cudaMalloc(&m.side, N * sizeof(int)));
    CHECK(cudaMemset(m.side, 0, N * sizeof(int)));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMallocHost(&m.pinned_in, N * sizeof(int)));
    CHECK(cudaMallocHost(&m.pinned_out, N * sizeof(int)));
    m.pageable_in = new int[N], m.pageable_out = new int[N], m.other_in = new int[N];
    for (int i = 0; i < N; i++) m.pinned_in[i] = i, m.pageable_in[i] = 1000, m.other_in[i] = 2000;
    for (cudaEvent_t *event : {&m.before, &m.after, &m.before2, &m.after2}) CHECK(cudaEventCreateWithFlags(event, cudaEventDisableTiming));
    cudaStream_t side;
    CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    int k = 2;
    cudaGraph_t graph = copies_graph(m, &k, 7);
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    // Launch 1: after `before` on the side stream; the side stream then waits for `after`.
    inc<<<1, N, 0, side>>>(m.side);
    CHECK(cudaEventRecord(m.before, side));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamWaitEvent(side, m.after, 0));
    inc<<<1, N, 0, side>>>(m.side);
    CHECK(cudaStreamSynchronize(side));
    CHECK(cudaStreamSynchronize(stream));
    check_copies(m, 2, true, 7, 0, "launch 1");
    EXPECT(host_calls == 1, "host calls %d after launch 1", host_calls);
    // Launch 2: every kind of node parameter changed, the sum disabled (c keeps its value), uploaded first.
    int previous_c = m.pinned_out[0] / 2;
    for (int i = 0; i < N; i++) EXPECT(m.pinned_out[i] / 2 == previous_c + i, "c is not linear");
    CHECK(cudaGraphExecMemcpyNodeSetParams1D(exec, m.from_pageable, m.b, m.other_in, N * sizeof(int), cudaMemcpyHostToDevice));
    cudaMemsetParams set = {};
    set.dst = m.box, set.pitch = 64 * sizeof(int), set.value = 9, set.elementSize = sizeof(int), set.width = 64, set.height = 4;
    CHECK(cudaGraphExecMemsetNodeSetParams(exec, m.memset_box, &set));
    int three = 3;
    cudaGraph_t child = child_graph(m, &three);
    CHECK(cudaGraphExecChildGraphNodeSetParams(exec, m.child, child));
    cudaHostNodeParams host = {count_double, nullptr};
    CHECK(cudaGraphExecHostNodeSetParams(exec, m.host, &host));
    CHECK(cudaGraphExecEventRecordNodeSetEvent(exec, m.record, m.after2));
    CHECK(cudaGraphExecEventWaitNodeSetEvent(exec, m.wait, m.before2));
    CHECK(cudaGraphNodeSetEnabled(exec, m.sum, 0));
    CHECK(cudaGraphUpload(exec, stream));
    CHECK(cudaEventRecord(m.before2, side));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamWaitEvent(side, m.after2, 0));
    CHECK(cudaStreamSynchronize(side));
    CHECK(cudaStreamSynchronize(stream));
    int c[N];
    for (int i = 0; i < N; i++) c[i] = m.pinned_out[i];
    for (int i = 0; i < N; i++) EXPECT(c[i] == (previous_c + i) * 2 * 3, "launch 2: c[%d] = %d", i, c[i]);
    EXPECT(host_calls == 3, "host calls %d after launch 2", host_calls);
    // Launch 3: enabled again, the sum's node set through the generic call, then the whole graph
    // updated from one built with k = 4 and the box set to 11.
    CHECK(cudaGraphNodeSetEnabled(exec, m.sum, 1));
    cudaGraphNodeParams generic = {};
    generic.type = cudaGraphNodeTypeKernel;
    void *swapped[] = {&m.b, &m.a, &m.c};
    generic.kernel.func = (void *)add;
    generic.kernel.gridDim = dim3(1);
    generic.kernel.blockDim = dim3(N);
    generic.kernel.kernelParams = swapped;
    CHECK(cudaGraphExecNodeSetParams(exec, m.sum, &generic));
    int four = 4;
    Copies second = m;
    cudaGraph_t updated = copies_graph(second, &four, 11);
    cudaGraphExecUpdateResultInfo info;
    CHECK(cudaGraphExecUpdate(exec, updated, &info));
    for (int i = 0; i < N; i++) m.pageable_in[i] = 3000 + i;
    CHECK(cudaEventRecord(m.before, side));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    check_copies(m, 4, true, 11, 0, "launch 3");
    EXPECT(host_calls == 4, "host calls %d after launch 3", host_calls);
    printf("graph_nodes: copies %d %d, host calls %d\n", m.pinned_out[0], m.pageable_out[N - 1], host_calls);
    CHECK(cudaGraphExecDestroy(exec));
    for (cudaGraph_t g : {graph, child, updated}) CHECK(cudaGraphDestroy(g));
    CHECK(cudaStreamDestroy(side));
}

// ---- conditionals ------------------------------------------------------------------------------

static cudaGraphNode_t conditional(cudaGraph_t graph, const cudaGraphNode_t *deps, size_t count, cudaGraphConditionalHandle handle,
                                   cudaGraphConditionalNodeType type, unsigned bodies, cudaGraph_t *body_out) {
    cudaGraphNodeParams params = {cudaGraphNodeTypeConditional};
    params.conditional.handle = handle;
    params.conditional.type = type;
    params.conditional.size = bodies;
    cudaGraphNode_t node;
    CHECK(cudaGraphAddNode(&node, graph, deps, nullptr, count, &params));
    for (unsigned i = 0; i < bodies; i++) body_out[i] = params.conditional.phGraph_out[i];
    return node;
}

static void conditional_graph(cudaStream_t stream) {
    int *flags, *d;   // flags: if, which, left; d: 64 ints of results
    CHECK(cudaMalloc(&flags, 3 * sizeof(int)));
    CHECK(cudaMalloc(&d, 64 * sizeof(int)));
    CHECK(cudaMemset(d, 0, 64 * sizeof(int)));
    CHECK(cudaDeviceSynchronize());
    int *which = flags + 1, *left = flags + 2, *if_part = d, *switch_part = d + 16, *rounds = d + 48;
    cudaGraph_t graph;
    CHECK(cudaGraphCreate(&graph, 0));
    cudaGraphConditionalHandle if_handle, while_handle, switch_handle;
    CHECK(cudaGraphConditionalHandleCreate(&if_handle, graph));
    CHECK(cudaGraphConditionalHandleCreate(&while_handle, graph, 1, cudaGraphCondAssignDefault));
    CHECK(cudaGraphConditionalHandleCreate(&switch_handle, graph));
    // IF/ELSE on flags[0], set by a kernel: 1 added to 8 ints of if_part, else 2 to 16.
    void *set_if[] = {&if_handle, &flags};
    cudaGraphNode_t setting = kernel(graph, nullptr, 0, (void *)set_condition, set_if, 1);
    cudaGraph_t if_bodies[2];
    cudaGraphNode_t if_node = conditional(graph, &setting, 1, if_handle, cudaGraphCondTypeIf, 2, if_bodies);
    void *if_args[] = {&if_part};
    kernel(if_bodies[0], nullptr, 0, (void *)inc, if_args, 8);
    cudaGraphNode_t twice = kernel(if_bodies[1], nullptr, 0, (void *)inc, if_args, 16);
    kernel(if_bodies[1], &twice, 1, (void *)inc, if_args, 16);
    // WHILE (a do-while: reset to 1): its body, captured into it, counts down `left`.
    cudaGraph_t while_body;
    cudaGraphNode_t while_node = conditional(graph, &if_node, 1, while_handle, cudaGraphCondTypeWhile, 1, &while_body);
    cudaStream_t capturing;
    CHECK(cudaStreamCreate(&capturing));
    CHECK(cudaStreamBeginCaptureToGraph(capturing, while_body, nullptr, nullptr, 0, cudaStreamCaptureModeGlobal));
    loop_round<<<1, 1, 0, capturing>>>(left, rounds, while_handle);
    CHECK(cudaStreamEndCapture(capturing, nullptr));
    CHECK(cudaStreamDestroy(capturing));
    // SWITCH on flags[1]: body k adds 1 to 4 ints at switch_part + 4k.
    void *set_switch[] = {&switch_handle, &which};
    cudaGraphNode_t choosing = kernel(graph, &while_node, 1, (void *)set_condition, set_switch, 1);
    cudaGraph_t switch_bodies[3];
    conditional(graph, &choosing, 1, switch_handle, cudaGraphCondTypeSwitch, 3, switch_bodies);
    static int *parts[3];
    static void *part_args[3][1];
    for (int k = 0; k < 3; k++) {
        parts[k] = switch_part + 4 * k;
        part_args[k][0] = &parts[k];
        kernel(switch_bodies[k], nullptr, 0, (void *)inc, part_args[k], 4);
    }
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    int results[64], expected_rounds[16] = {0};
    // Launch 1: if true, 3 rounds, switch 2; launch 2: if false, 2 rounds, switch 0; launch 3: switch 5 (no body).
    int inputs[3][3] = {{1, 2, 3}, {0, 0, 2}, {1, 5, 1}};
    for (int launch = 0; launch < 3; launch++) {
        CHECK(cudaMemcpyAsync(flags, inputs[launch], sizeof inputs[launch], cudaMemcpyHostToDevice, stream));
        CHECK(cudaGraphLaunch(exec, stream));
        CHECK(cudaStreamSynchronize(stream));
        for (int left_now = inputs[launch][2]; left_now > 0; left_now--) expected_rounds[left_now] += 1;
    }
    CHECK(cudaMemcpy(results, d, sizeof results, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 16; i++) EXPECT(results[i] == (i < 8 ? 2 : 0) + 2, "if_part[%d] = %d", i, results[i]);
    for (int k = 0; k < 3; k++) expect_all(results + 16 + 4 * k, 4, k == 0 || k == 2 ? 1 : 0, "switch part");
    for (int i = 0; i < 16; i++) EXPECT(results[48 + i] == expected_rounds[i], "rounds[%d] = %d, expected %d", i, results[48 + i], expected_rounds[i]);
    printf("graph_nodes: conditionals %d %d %d\n", results[0], results[24], results[49]);
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
}

int main() {
    int device;
    CHECK(cudaGetDevice(&device));
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    memory_graphs(stream, device);
    copies_graphs(stream);
    conditional_graph(stream);
    return 0;
}
