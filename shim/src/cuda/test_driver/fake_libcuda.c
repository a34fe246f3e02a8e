// Test double for libcuda (there is no GPU here), built as libcuda.so.1 for the shim's CUDA
// interception test: "device" memory is host memory and work runs at once. cuGetProcAddress_v2
// hands out the per-thread-stream variant of cuLaunchKernel for flag 2, as the real driver does.
// Host memory's device pointers differ from its host pointers (HOST_DEVICE_BIT set), as without
// unified addressing; kernels clear the bit. A context created is current until destroyed.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>
typedef int CUresult;
typedef uint64_t CUdeviceptr;
#define HOST_DEVICE_BIT (1ull << 62)
static void *current = (void *)0xc0;
CUresult cuCtxGetCurrent(void **c) { *c = current; return 0; }
CUresult cuCtxCreate_v4(void **c, void *params, unsigned flags, int d) { *c = current = malloc(8); return 0; }
CUresult cuCtxDestroy_v2(void *c) { if (c == current) current = (void *)0xc0; free(c); return 0; }
CUresult cuCtxGetDevice(int *d) { *d = 0; return 0; }
CUresult cuCtxSetLimit(int limit, size_t value) { return limit < 0 || limit > 6; }
CUresult cuDeviceGetName(char *n, int len, int d) { strncpy(n, "Fake GPU", len); return 0; }
CUresult cuDeviceGetAttribute(int *v, int a, int d) { *v = a == 75 ? 9 : 0; return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
// A library's private way to device memory (nvJPEG has one): not a function the shim hooks. Its
// allocations lie back to back in one arena, as a memory pool places them. The driver still
// answers for them through cuPointerGetAttribute; for other pointers it fails.
static _Alignas(256) unsigned char private_arena[4096];
static size_t private_used, private_count, private_sizes[16];
CUresult fakePrivateAlloc(CUdeviceptr *p, size_t n) {
    *p = (CUdeviceptr)(private_arena + private_used);
    private_sizes[private_count++] = n;
    private_used += n;
    return 0;
}
CUresult cuPointerGetAttribute(void *d, int a, CUdeviceptr p) {
    CUdeviceptr start = (CUdeviceptr)private_arena;
    for (size_t i = 0; i < private_count; start += private_sizes[i++]) {
        if (p < start || p >= start + private_sizes[i]) continue;
        switch (a) {
        case 2: *(unsigned *)d = 2; return 0;               /* CU_POINTER_ATTRIBUTE_MEMORY_TYPE: device */
        case 8: case 9: *(int *)d = 0; return 0;            /* IS_MANAGED, DEVICE_ORDINAL */
        case 11: *(CUdeviceptr *)d = start; return 0;       /* RANGE_START_ADDR */
        case 12: *(size_t *)d = private_sizes[i]; return 0; /* RANGE_SIZE */
        default: return 1;
        }
    }
    return 1;
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) { *p = (CUdeviceptr)calloc(1, n); return 0; }
CUresult cuMemFree_v2(CUdeviceptr p) { free((void *)p); return 0; }
CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, void *s) { *p = (CUdeviceptr)malloc(n); return 0; }
CUresult cuMemFreeAsync(CUdeviceptr p, void *s) { free((void *)p); return 0; }
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, void *st) { memmove((void *)d, (void *)s, n); return 0; }
static CUresult implicit(void);
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { if (implicit()) return 906; memcpy((void *)d, s, n); return 0; }
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { if (implicit()) return 906; memcpy(d, (void *)s, n); return 0; }
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned v, size_t n) { for (size_t i = 0; i < n; i++) ((unsigned *)d)[i] = v; return 0; }
typedef struct {
    size_t srcX, srcY; int srcType; const void *srcHost; CUdeviceptr srcDevice; void *srcArray; size_t srcPitch;
    size_t dstX, dstY; int dstType; void *dstHost; CUdeviceptr dstDevice; void *dstArray; size_t dstPitch;
    size_t width, height;
} Copy2D;
CUresult cuMemcpy2D_v2(const Copy2D *c) {
    const char *src = c->srcType == 1 ? (const char *)c->srcHost : (const char *)c->srcDevice;
    char *dst = c->dstType == 1 ? (char *)c->dstHost : (char *)c->dstDevice;
    for (size_t row = 0; row < c->height; row++)
        memcpy(dst + (c->dstY + row) * c->dstPitch + c->dstX, src + (c->srcY + row) * c->srcPitch + c->srcX, c->width);
    return 0;
}
typedef struct {
    size_t srcX, srcY, srcZ, srcLOD; int srcType; const void *srcHost; CUdeviceptr srcDevice; void *srcArray, *r0; size_t srcPitch, srcHeight;
    size_t dstX, dstY, dstZ, dstLOD; int dstType; void *dstHost; CUdeviceptr dstDevice; void *dstArray, *r1; size_t dstPitch, dstHeight;
    size_t width, height, depth;
} Copy3D;
CUresult cuMemcpy3D_v2(const Copy3D *c) {
    const char *src = c->srcType == 1 ? (const char *)c->srcHost : (const char *)c->srcDevice;
    char *dst = c->dstType == 1 ? (char *)c->dstHost : (char *)c->dstDevice;
    for (size_t z = 0; z < c->depth; z++)
        for (size_t row = 0; row < c->height; row++)
            memcpy(dst + ((c->dstZ + z) * c->dstHeight + c->dstY + row) * c->dstPitch + c->dstX,
                   src + ((c->srcZ + z) * c->srcHeight + c->srcY + row) * c->srcPitch + c->srcX, c->width);
    return 0;
}
// Context 0xd1 is on a second device.
CUresult cuCtxGetDevice_v2(int *d, void *c) { *d = c == (void *)0xd1; return 0; }
CUresult cuMemcpyPeer(CUdeviceptr d, void *dc, CUdeviceptr s, void *sc, size_t n) { memcpy((void *)d, (void *)s, n); return 0; }
CUresult cuStreamCreate(void **s, unsigned f) { *s = malloc(64); return 0; }
CUresult cuStreamDestroy_v2(void *s) { free(s); return 0; }
// Host code on a stream runs at once, its work being done.
CUresult cuLaunchHostFunc(void *s, void (*fn)(void *), void *data) { fn(data); return 0; }
CUresult cuStreamAddCallback(void *s, void (*fn)(void *, CUresult, void *), void *data, unsigned flags) { fn(s, 0, data); return 0; }
CUresult cuStreamSynchronize(void *s) { return s == 0 || s == (void *)1 ? implicit() : 0; }
// The first query of a stream finds its work still running.
static int stream_queries;
CUresult cuStreamQuery(void *s) { return stream_queries++ == 0 ? 600 : 0; }
CUresult cuEventQuery(void *e) { return 0; }
CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags) { *p = malloc(n); return 0; }
CUresult cuMemFreeHost(void *p) { free(p); return 0; }
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned flags) { return 0; }
CUresult cuMemHostUnregister(void *p) { return 0; }
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags) { *d = (CUdeviceptr)p | HOST_DEVICE_BIT; return 0; }
// Virtual memory: a reserved range is usable memory at once; handles hold their size.
CUresult cuMemAddressReserve(CUdeviceptr *p, size_t n, size_t align, CUdeviceptr addr, unsigned long long f) { *p = (CUdeviceptr)malloc(n); return 0; }
CUresult cuMemCreate(unsigned long long *h, size_t n, const void *prop, unsigned long long f) { *h = n; return 0; }
CUresult cuMemMap(CUdeviceptr p, size_t n, size_t offset, unsigned long long h, unsigned long long f) { return 0; }
CUresult cuMemSetAccess(CUdeviceptr p, size_t n, const void *desc, size_t count) { return 0; }
CUresult cuMemUnmap(CUdeviceptr p, size_t n) { return 0; }
static int counter[4];
CUresult cuModuleGetGlobal_v2(CUdeviceptr *d, size_t *n, void *m, const char *name) {
    if (strcmp(name, "counter")) return 500;
    if (d) *d = (CUdeviceptr)counter;
    if (n) *n = sizeof counter;
    return 0;
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, void *s) { return cuMemsetD32_v2(d, v, n); }
// A launch with a negative count asserts on the device: the context reports it from then on.
static int asserted;
// Kernels named "say" also print each value they leave (as device printf does): the lines wait
// in a buffer until a context synchronization writes them to stdout as libcuda does, a piece
// at a time with vfprintf and fwrite, then fflush.
static int said[64], saying;
static void device_print(const char *format, ...) {
    va_list args;
    va_start(args, format);
    vfprintf(stdout, format, args);
    va_end(args);
}
static void flush_said(void) {
    for (int i = 0; i < saying; i++) {
        device_print("device says %d", said[i]);
        fwrite("\n", 1, 1, stdout);
    }
    if (saying) fflush(stdout);
    saying = 0;
}
CUresult cuCtxSynchronize(void) { flush_said(); return asserted ? 710 : implicit(); }
// Every module loaded from data gets the same handle, and its kernels the same handles, as a
// driver may hand out an unloaded module's handles again; an image starting "//wide" has add1
// take a structure first, as add1_in_struct (see `wide_first`).
static int wide_first;
static CUresult load_data(void **m, const void *image) {
    wide_first = strncmp(image, "//wide", 6) == 0;
    *m = (void *)0xa00;
    return 0;
}
CUresult cuModuleLoadData(void **m, const void *image) { return load_data(m, image); }
// A load the program makes without the shim seeing it, as through a private copy of the driver's table.
CUresult fakeModuleLoadDataUnseen(void **m, const void *image) { return load_data(m, image); }
CUresult cuModuleUnload(void *m) {
    if (getenv("SLOW_UNLOAD")) usleep(300000);
    return getenv("FAIL_UNLOAD") ? 400 /* CUDA_ERROR_INVALID_HANDLE */ : 0;
}
CUresult cuModuleLoad(void **m, const char *path) { *m = (void *)0xb00; return 0; }
// Every function is add1(int *data, int n) but set_condition(int *data, condition handle), whose
// second parameter has 8 bytes, and add1_in_struct(struct { int *data; long tag; }, int n).
#define SET_CONDITION 0x10000
#define SAY 0x20000
#define IN_STRUCT 0x40000
static CUresult get_function(void **f, void *m, const char *name) {
    *f = (char *)m + 0x500 + (strcmp(name, "set_condition") ? 0 : SET_CONDITION) + (strcmp(name, "say") ? 0 : SAY)
         + (strcmp(name, "add1_in_struct") ? 0 : IN_STRUCT);
    return 0;
}
CUresult cuModuleGetFunction(void **f, void *m, const char *name) { return get_function(f, m, name); }
// Kernels the program finds without the shim seeing it, as the CUDA runtime may: the shim asks
// the driver for their names and modules. (Not through cuModuleGetFunction, which the preloaded
// shim's export would take.)
CUresult fakeGetFunctionUnseen(void **f, void *m, const char *name) { return get_function(f, m, name); }
CUresult cuFuncGetName(const char **name, void *f) {
    uintptr_t flags = (uintptr_t)f;
    *name = flags & SET_CONDITION ? "set_condition" : flags & SAY ? "say" : flags & IN_STRUCT ? "add1_in_struct" : "add1";
    return 0;
}
CUresult cuFuncGetModule(void **m, void *f) { *m = (void *)(((uintptr_t)f & 0xffff) - 0x500); return 0; }
static size_t second_size(void *f) { return (uintptr_t)f & SET_CONDITION ? 8 : 4; }
CUresult cuFuncGetParamInfo(void *f, size_t i, size_t *o, size_t *s) {
    if (i > 1) return 1;
    size_t first = (uintptr_t)f & IN_STRUCT || wide_first ? 16 : 8;
    *o = i * first; *s = i == 0 ? first : second_size(f); return 0;
}
static CUresult launch(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh,
                       void *stream, void **params, void **extra) {
    int *data = (int *)(*(CUdeviceptr *)params[0] & ~HOST_DEVICE_BIT); int n = *(int *)params[1];
    if (n < 0) asserted = 1;
    for (int i = 0; i < n; i++) data[i] += 1;
    for (int i = 0; (uintptr_t)f & SAY && i < n && saying < 64; i++) said[saying++] = data[i];
    return 0;
}
static CUresult captured(void *f, void *stream, void **params);
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh,
                        void *stream, void **params, void **extra) {
    CUresult r = captured(f, stream, params);
    return r != 500 ? r : launch(f, gx, gy, gz, bx, by, bz, sh, stream, params, extra);
}
CUresult cuLaunchKernel_ptsz(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh,
                        void *stream, void **params, void **extra) { return launch(f, gx, gy, gz, bx, by, bz, sh, stream, params, extra) + 0; }
// Graphs: nodes of every type the shim reads, each node's parameters kept by value as the driver
// keeps them, up to 4 dependencies each; an executable graph is a copy that remembers its source
// (a node keeps its index). A launch runs the nodes in the order they were added. Memory
// allocation nodes get their address when created; a conditional node runs its first body while
// (WHILE: at most 3 times) or if its condition is non-zero, or the body its value names (SWITCH);
// the condition starts at the handle's default at each launch, and a kernel node given a
// condition handle as its n sets the condition to 0 instead of adding.
typedef struct { void *func; unsigned grid[3], block[3], shared; void **params, **extra; void *kern, *ctx; } KernelNodeParams;
typedef struct { CUdeviceptr dst; size_t pitch; unsigned value, element; size_t width, height; } MemsetParams;
typedef struct { void (*fn)(void *); void *data; } HostParams;
typedef struct { char pool[88]; const void *access; size_t access_count; size_t bytes; CUdeviceptr dptr; } AllocParams;
typedef struct { uint64_t handle; int type; unsigned size; struct Graph **bodies; void *ctx; } ConditionalParams;
typedef struct { int type, reserved[3]; union { long long pad[29]; ConditionalParams conditional; }; long long reserved2; } NodeParams;
enum { KERNEL, MEMCPY, MEMSET, HOST, CHILD, EMPTY, WAIT_EVENT, EVENT_RECORD, ALLOC = 10, FREE = 11, CONDITIONAL = 13 };
typedef struct Node {
    int type; struct Node *deps[4]; size_t ndeps;
    KernelNodeParams launch; int *data; int64_t n; void *args[2];
    Copy3D copy; MemsetParams set; HostParams host; struct Graph *child; void *event; CUdeviceptr dptr; size_t bytes;
    ConditionalParams conditional; struct Graph *bodies[2];
} Node;
typedef struct Graph { Node nodes[16]; size_t count; struct Graph *source; } Graph;
static struct { uint64_t handle; unsigned value, fallback; } conditions[8];
static size_t condition_count;
static void keep(Node *node, const KernelNodeParams *p) {
    node->launch = *p; node->data = *(int **)p->params[0]; node->n = 0; memcpy(&node->n, p->params[1], second_size(p->func));
    node->args[0] = &node->data; node->args[1] = &node->n; node->launch.params = node->args; node->launch.extra = 0;
}
static CUresult add(Node **n, Graph *g, Node **deps, size_t ndeps, int type) {
    if (g->count == 16 || ndeps > 4) return 1;
    *n = &g->nodes[g->count++]; memset(*n, 0, sizeof **n); (*n)->type = type; (*n)->ndeps = ndeps;
    for (size_t i = 0; i < ndeps; i++) (*n)->deps[i] = deps[i];
    return 0;
}
CUresult cuGraphCreate(Graph **g, unsigned flags) { *g = calloc(1, sizeof **g); return 0; }
CUresult cuGraphAddKernelNode_v2(Node **n, Graph *g, Node **deps, size_t ndeps, const KernelNodeParams *p) {
    CUresult r = add(n, g, deps, ndeps, KERNEL); if (!r) keep(*n, p); return r;
}
CUresult cuGraphAddMemcpyNode(Node **n, Graph *g, Node **deps, size_t ndeps, const Copy3D *c, void *ctx) {
    CUresult r = add(n, g, deps, ndeps, MEMCPY); if (!r) (*n)->copy = *c; return r;
}
CUresult cuGraphAddMemsetNode(Node **n, Graph *g, Node **deps, size_t ndeps, const MemsetParams *p, void *ctx) {
    CUresult r = add(n, g, deps, ndeps, MEMSET); if (!r) (*n)->set = *p; return r;
}
CUresult cuGraphAddHostNode(Node **n, Graph *g, Node **deps, size_t ndeps, const HostParams *p) {
    CUresult r = add(n, g, deps, ndeps, HOST); if (!r) (*n)->host = *p; return r;
}
CUresult cuGraphAddChildGraphNode(Node **n, Graph *g, Node **deps, size_t ndeps, Graph *child) {
    CUresult r = add(n, g, deps, ndeps, CHILD); if (!r) (*n)->child = child; return r;
}
CUresult cuGraphAddEmptyNode(Node **n, Graph *g, Node **deps, size_t ndeps) { return add(n, g, deps, ndeps, EMPTY); }
CUresult cuGraphAddEventRecordNode(Node **n, Graph *g, Node **deps, size_t ndeps, void *e) {
    CUresult r = add(n, g, deps, ndeps, EVENT_RECORD); if (!r) (*n)->event = e; return r;
}
CUresult cuGraphAddEventWaitNode(Node **n, Graph *g, Node **deps, size_t ndeps, void *e) {
    CUresult r = add(n, g, deps, ndeps, WAIT_EVENT); if (!r) (*n)->event = e; return r;
}
CUresult cuGraphAddMemAllocNode(Node **n, Graph *g, Node **deps, size_t ndeps, AllocParams *p) {
    CUresult r = add(n, g, deps, ndeps, ALLOC);
    if (!r) { p->dptr = (*n)->dptr = (CUdeviceptr)calloc(1, p->bytes); (*n)->bytes = p->bytes; }
    return r;
}
CUresult cuGraphAddMemFreeNode(Node **n, Graph *g, Node **deps, size_t ndeps, CUdeviceptr p) {
    CUresult r = add(n, g, deps, ndeps, FREE); if (!r) (*n)->dptr = p; return r;
}
CUresult cuGraphConditionalHandleCreate(uint64_t *h, Graph *g, void *ctx, unsigned value, unsigned flags) {
    if (condition_count == 8) return 1;
    conditions[condition_count].handle = *h = 0x5e00 + condition_count; conditions[condition_count++].fallback = value;
    return 0;
}
// Only conditional nodes: the other types have calls of their own here.
CUresult cuGraphAddNode_v2(Node **n, Graph *g, Node **deps, const void *data, size_t ndeps, NodeParams *p) {
    if (p->type != CONDITIONAL || p->conditional.size > 2) return 1;
    CUresult r = add(n, g, deps, ndeps, CONDITIONAL);
    if (r) return r;
    (*n)->conditional = p->conditional;
    for (unsigned i = 0; i < p->conditional.size; i++) cuGraphCreate(&(*n)->bodies[i], 0);
    p->conditional.bodies = (*n)->conditional.bodies = (*n)->bodies;
    return 0;
}
CUresult cuGraphInstantiateWithFlags(Graph **exec, Graph *g, unsigned long long flags) {
    *exec = malloc(sizeof **exec); **exec = *g; (*exec)->source = g;
    for (size_t i = 0; i < g->count; i++) if (g->nodes[i].type == KERNEL) keep(&(*exec)->nodes[i], &g->nodes[i].launch);
    return 0;
}
CUresult cuGraphGetNodes(Graph *g, Node **nodes, size_t *count) {
    if (nodes) for (size_t i = 0; i < *count && i < g->count; i++) nodes[i] = &g->nodes[i];
    *count = g->count; return 0;
}
CUresult cuGraphGetEdges_v2(Graph *g, Node **from, Node **to, void *data, size_t *count) {
    size_t edges = 0;
    for (size_t i = 0; i < g->count; i++)
        for (size_t d = 0; d < g->nodes[i].ndeps; d++) {
            if (from && edges < *count) { from[edges] = g->nodes[i].deps[d]; to[edges] = &g->nodes[i]; }
            edges++;
        }
    *count = edges; return 0;
}
CUresult cuGraphNodeGetType(Node *n, int *type) { *type = n->type; return 0; }
CUresult cuGraphKernelNodeGetParams_v2(Node *n, KernelNodeParams *p) { *p = n->launch; return 0; }
CUresult cuGraphMemcpyNodeGetParams(Node *n, Copy3D *c) { *c = n->copy; return 0; }
CUresult cuGraphMemsetNodeGetParams(Node *n, MemsetParams *p) { *p = n->set; return 0; }
CUresult cuGraphHostNodeGetParams(Node *n, HostParams *p) { *p = n->host; return 0; }
CUresult cuGraphChildGraphNodeGetGraph(Node *n, Graph **g) { *g = n->child; return 0; }
CUresult cuGraphEventRecordNodeGetEvent(Node *n, void **e) { *e = n->event; return 0; }
CUresult cuGraphEventWaitNodeGetEvent(Node *n, void **e) { *e = n->event; return 0; }
CUresult cuGraphMemAllocNodeGetParams(Node *n, AllocParams *p) { memset(p, 0, sizeof *p); p->bytes = n->bytes; p->dptr = n->dptr; return 0; }
CUresult cuGraphMemFreeNodeGetParams(Node *n, CUdeviceptr *p) { *p = n->dptr; return 0; }
static Node *exec_node(Graph *exec, Node *n) { return &exec->nodes[n - exec->source->nodes]; }
CUresult cuGraphExecKernelNodeSetParams_v2(Graph *exec, Node *n, const KernelNodeParams *p) { keep(exec_node(exec, n), p); return 0; }
CUresult cuGraphExecMemsetNodeSetParams(Graph *exec, Node *n, const MemsetParams *p, void *ctx) { exec_node(exec, n)->set = *p; return 0; }
CUresult cuGraphExecMemcpyNodeSetParams(Graph *exec, Node *n, const Copy3D *c, void *ctx) { exec_node(exec, n)->copy = *c; return 0; }
CUresult cuGraphNodeSetEnabled(Graph *exec, Node *n, unsigned enabled) { exec_node(exec, n)->type = enabled ? n->type : EMPTY; return 0; }
CUresult cuGraphExecUpdate_v2(Graph *exec, Graph *g, void *info) {
    if (g->count != exec->count) return 1;
    for (size_t i = 0; i < g->count; i++) {
        exec->nodes[i] = g->nodes[i];
        if (g->nodes[i].type == KERNEL) keep(&exec->nodes[i], &g->nodes[i].launch);
    }
    return 0;
}
static unsigned *condition(uint64_t handle) {
    for (size_t i = 0; i < condition_count; i++) if (conditions[i].handle == handle) return &conditions[i].value;
    return 0;
}
static void run(Graph *g, void *stream) {
    for (size_t i = 0; i < g->count; i++) {
        Node *node = &g->nodes[i];
        unsigned *value;
        switch (node->type) {
        case KERNEL:
            if ((value = condition((uint64_t)node->n))) *value = 0;
            else launch(0, 1, 1, 1, 1, 1, 1, 0, stream, node->args, 0);
            break;
        case MEMCPY: cuMemcpy3D_v2(&node->copy); break;
        case MEMSET:
            for (size_t row = 0; row < node->set.height; row++)
                for (size_t e = 0; e < node->set.width; e++) memcpy((char *)node->set.dst + row * node->set.pitch + e * node->set.element, &node->set.value, node->set.element);
            break;
        case HOST: node->host.fn(node->host.data); break;
        case CHILD: run(node->child, stream); break;
        case CONDITIONAL:
            value = condition(node->conditional.handle);
            if (node->conditional.type == 2) { if (*value < node->conditional.size) run(node->bodies[*value], stream); }
            else for (int round = 0; *value && round < (node->conditional.type == 1 ? 3 : 1); round++) run(node->bodies[0], stream);
            break;
        }
    }
}
CUresult cuGraphLaunch(Graph *exec, void *stream) {
    for (size_t i = 0; i < condition_count; i++) conditions[i].value = conditions[i].fallback;
    run(exec, stream);
    return 0;
}
// Stream capture: launches on a capturing stream become kernel nodes of the capture's graph
// after the stream's last one; an event recorded there stands for that node, and a stream
// waiting for it joins the capture. While a capture goes on, synchronous legacy-stream work
// (the shim's old way of reading memory) invalidates it and fails with
// CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, as the real driver does when the capturing stream is blocking.
static Graph *capture_graph;
static int capture_invalid;
static struct { void *stream; Node *tail; } capture_streams[4];
static struct { void *event; Node *node; } capture_events[4];
static int capturing(void *stream, Node ***tail) {
    for (int i = 0; i < 4; i++)
        if (capture_graph && capture_streams[i].stream == stream) { if (tail) *tail = &capture_streams[i].tail; return 1; }
    return 0;
}
static CUresult implicit(void) {
    if (!capture_graph) return 0;
    capture_invalid = 1; return 906;
}
CUresult cuStreamBeginCaptureToGraph(void *s, Graph *g, Node **deps, const void *data, size_t n, int mode) {
    if (capture_graph) return 1;
    capture_graph = g; capture_invalid = 0; memset(capture_streams, 0, sizeof capture_streams); memset(capture_events, 0, sizeof capture_events);
    capture_streams[0].stream = s; return 0;
}
CUresult cuStreamBeginCapture_v2(void *s, int mode) { Graph *g; cuGraphCreate(&g, 0); return cuStreamBeginCaptureToGraph(s, g, 0, 0, 0, mode); }
CUresult cuStreamEndCapture(void *s, Graph **g) {
    if (!capturing(s, 0)) return 1;
    if (g) *g = capture_graph;
    capture_graph = 0;
    return capture_invalid ? 901 : 0;
}
CUresult cuStreamGetCaptureInfo_v3(void *s, int *status, uint64_t *id, Graph **g, const Node ***deps, const void **data, size_t *n) {
    *status = capturing(s, 0); if (id) *id = 7; return 0;
}
CUresult cuEventRecord(void *e, void *s) {
    Node **tail;
    if (capturing(s, &tail)) for (int i = 0; i < 4; i++) if (!capture_events[i].event || capture_events[i].event == e) {
        capture_events[i].event = e; capture_events[i].node = *tail; break;
    }
    return 0;
}
CUresult cuStreamWaitEvent(void *s, void *e, unsigned f) {
    for (int i = 0; i < 4 && capture_graph; i++) if (capture_events[i].event == e) {
        Node **tail;
        if (!capturing(s, &tail)) for (int j = 0; j < 4; j++) if (!capture_streams[j].stream) { capture_streams[j].stream = s; tail = &capture_streams[j].tail; break; }
        *tail = capture_events[i].node;
    }
    return 0;
}
CUresult cuGraphUpload(Graph *exec, void *stream) { return 0; }
static CUresult captured(void *f, void *stream, void **params) {
    Node **tail, *node;
    if (!capturing(stream, &tail)) return 500;
    KernelNodeParams p = {f, {1, 1, 1}, {32, 1, 1}, 0, params, 0, 0, 0};
    CUresult r = cuGraphAddKernelNode_v2(&node, capture_graph, tail, *tail ? 1 : 0, &p);
    if (!r) *tail = node;
    return r;
}
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status) {
    struct { const char *name; void *plain, *per_thread; } table[] = {
        {"cuMemAlloc", cuMemAlloc_v2, cuMemAlloc_v2}, {"cuMemFree", cuMemFree_v2, cuMemFree_v2},
        {"cuMemcpyHtoD", cuMemcpyHtoD_v2, cuMemcpyHtoD_v2}, {"cuMemcpyDtoH", cuMemcpyDtoH_v2, cuMemcpyDtoH_v2},
        {"cuMemsetD32", cuMemsetD32_v2, cuMemsetD32_v2}, {"cuStreamCreate", cuStreamCreate, cuStreamCreate},
        {"cuStreamSynchronize", cuStreamSynchronize, cuStreamSynchronize},
        {"cuModuleLoadData", cuModuleLoadData, cuModuleLoadData}, {"cuModuleGetFunction", cuModuleGetFunction, cuModuleGetFunction},
        {"cuLaunchKernel", cuLaunchKernel, cuLaunchKernel_ptsz}, {"cuMemcpy2D", cuMemcpy2D_v2, cuMemcpy2D_v2},
        {"cuMemsetD32Async", cuMemsetD32Async, cuMemsetD32Async}, {"cuEventRecord", cuEventRecord, cuEventRecord},
        {"cuStreamWaitEvent", cuStreamWaitEvent, cuStreamWaitEvent}, {"cuModuleLoad", cuModuleLoad, cuModuleLoad},
        {"cuGraphCreate", cuGraphCreate, cuGraphCreate}, {"cuGraphAddKernelNode", cuGraphAddKernelNode_v2, cuGraphAddKernelNode_v2},
        {"cuGraphInstantiate", cuGraphInstantiateWithFlags, cuGraphInstantiateWithFlags},
        {"cuGraphExecKernelNodeSetParams", cuGraphExecKernelNodeSetParams_v2, cuGraphExecKernelNodeSetParams_v2},
        {"cuGraphLaunch", cuGraphLaunch, cuGraphLaunch},
    };
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (!strcmp(table[i].name, symbol)) { *pfn = (flags & 2) ? table[i].per_thread : table[i].plain; if (status) *status = 1; return 0; }
    *pfn = 0; return 500;
}
// The shim's own reads: a non-blocking stream of its own, an event ordering it, copies on it,
// and the thread's capture mode exchanged around them.
CUresult cuEventCreate(void **e, unsigned flags) { *e = malloc(8); return 0; }
// The shim's marks of where streams stand before it waits (work here is done when submitted).
CUresult cuEventSynchronize(void *e) { return 0; }
CUresult cuEventDestroy_v2(void *e) { free(e); return 0; }
CUresult cuStreamGetCtx(void *s, void **c) { *c = current; return 0; }
CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, void *st) {
    if ((st == 0 || st == (void *)1) && implicit()) return 906;
    memcpy(d, (void *)s, n); return 0;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, void *st) {
    if ((st == 0 || st == (void *)1) && implicit()) return 906;
    memcpy((void *)d, s, n); return 0;
}
static int capture_mode;
CUresult cuThreadExchangeStreamCaptureMode(int *mode) { int old = capture_mode; capture_mode = *mode; *mode = old; return 0; }
