// Test double for libcuda (there is no GPU here), built as libcuda.so.1 for the shim's CUDA
// interception test: "device" memory is host memory and work runs at once. cuGetProcAddress_v2
// hands out the per-thread-stream variant of cuLaunchKernel for flag 2, as the real driver does.
// Host memory's device pointers differ from its host pointers (HOST_DEVICE_BIT set), as without
// unified addressing; kernels clear the bit. A context created is current until destroyed.
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
typedef int CUresult;
typedef uint64_t CUdeviceptr;
#define HOST_DEVICE_BIT (1ull << 62)
static void *current = (void *)0xc0;
CUresult cuCtxGetCurrent(void **c) { *c = current; return 0; }
CUresult cuCtxCreate_v4(void **c, void *params, unsigned flags, int d) { *c = current = malloc(8); return 0; }
CUresult cuCtxDestroy_v2(void *c) { if (c == current) current = (void *)0xc0; free(c); return 0; }
CUresult cuCtxGetDevice(int *d) { *d = 0; return 0; }
CUresult cuDeviceGetName(char *n, int len, int d) { strncpy(n, "Fake GPU", len); return 0; }
CUresult cuDeviceGetAttribute(int *v, int a, int d) { *v = a == 75 ? 9 : 0; return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuPointerGetAttribute(void *d, int a, CUdeviceptr p) { return 1; }
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) { *p = (CUdeviceptr)malloc(n); return 0; }
CUresult cuMemFree_v2(CUdeviceptr p) { free((void *)p); return 0; }
CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, void *s) { *p = (CUdeviceptr)malloc(n); return 0; }
CUresult cuMemFreeAsync(CUdeviceptr p, void *s) { free((void *)p); return 0; }
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, void *st) { memmove((void *)d, (void *)s, n); return 0; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { memcpy((void *)d, s, n); return 0; }
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { memcpy(d, (void *)s, n); return 0; }
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
CUresult cuStreamSynchronize(void *s) { return 0; }
// The first query of a stream finds its work still running.
static int stream_queries;
CUresult cuStreamQuery(void *s) { return stream_queries++ == 0 ? 600 : 0; }
CUresult cuEventQuery(void *e) { return 0; }
CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags) { *p = malloc(n); return 0; }
CUresult cuMemFreeHost(void *p) { free(p); return 0; }
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
CUresult cuEventRecord(void *e, void *s) { return 0; }
CUresult cuStreamWaitEvent(void *s, void *e, unsigned f) { return 0; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuModuleLoadData(void **m, const void *image) { *m = (void *)0xa00; return 0; }
CUresult cuModuleLoad(void **m, const char *path) { *m = (void *)0xb00; return 0; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) { *f = (char *)m + 0x500; return 0; }
CUresult cuFuncGetParamInfo(void *f, size_t i, size_t *o, size_t *s) {
    if (i > 1) return 1;
    *o = i * 8; *s = i == 0 ? 8 : 4; return 0;
}
static CUresult launch(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh,
                       void *stream, void **params, void **extra) {
    int *data = (int *)(*(CUdeviceptr *)params[0] & ~HOST_DEVICE_BIT); int n = *(int *)params[1];
    for (int i = 0; i < n; i++) data[i] += 1;
    return 0;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh,
                        void *stream, void **params, void **extra) { return launch(f, gx, gy, gz, bx, by, bz, sh, stream, params, extra); }
CUresult cuLaunchKernel_ptsz(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh,
                        void *stream, void **params, void **extra) { return launch(f, gx, gy, gz, bx, by, bz, sh, stream, params, extra) + 0; }
// Graphs of kernel nodes, each node's launch kept by value as the driver keeps it; a node
// depends on at most one other; an executable graph is a copy that remembers its source.
typedef struct { void *func; unsigned grid[3], block[3], shared; void **params, **extra; void *kern, *ctx; } KernelNodeParams;
typedef struct Node { KernelNodeParams launch; int *data; int n; void *args[2]; struct Node *after; } Node;
typedef struct Graph { Node nodes[4]; size_t count; struct Graph *source; } Graph;
static void keep(Node *node, const KernelNodeParams *p) {
    node->launch = *p; node->data = *(int **)p->params[0]; node->n = *(int *)p->params[1];
    node->args[0] = &node->data; node->args[1] = &node->n; node->launch.params = node->args; node->launch.extra = 0;
}
CUresult cuGraphCreate(Graph **g, unsigned flags) { *g = calloc(1, sizeof **g); return 0; }
CUresult cuGraphAddKernelNode_v2(Node **n, Graph *g, Node **deps, size_t ndeps, const KernelNodeParams *p) {
    if (g->count == 4 || ndeps > 1) return 1;
    *n = &g->nodes[g->count++]; keep(*n, p); (*n)->after = ndeps ? deps[0] : 0; return 0;
}
CUresult cuGraphInstantiateWithFlags(Graph **exec, Graph *g, unsigned long long flags) {
    *exec = malloc(sizeof **exec); **exec = *g; (*exec)->source = g;
    for (size_t i = 0; i < g->count; i++) keep(&(*exec)->nodes[i], &g->nodes[i].launch);
    return 0;
}
CUresult cuGraphGetNodes(Graph *g, Node **nodes, size_t *count) {
    if (nodes) for (size_t i = 0; i < *count && i < g->count; i++) nodes[i] = &g->nodes[i];
    *count = g->count; return 0;
}
CUresult cuGraphGetEdges_v2(Graph *g, Node **from, Node **to, void *data, size_t *count) {
    size_t edges = 0;
    for (size_t i = 0; i < g->count; i++) if (g->nodes[i].after) {
        if (from && edges < *count) { from[edges] = g->nodes[i].after; to[edges] = &g->nodes[i]; }
        edges++;
    }
    *count = edges; return 0;
}
CUresult cuGraphNodeGetType(Node *n, int *type) { *type = 0; return 0; }
CUresult cuGraphKernelNodeGetParams_v2(Node *n, KernelNodeParams *p) { *p = n->launch; return 0; }
CUresult cuGraphExecKernelNodeSetParams_v2(Graph *exec, Node *n, const KernelNodeParams *p) {
    keep(&exec->nodes[n - exec->source->nodes], p); return 0;
}
CUresult cuGraphLaunch(Graph *exec, void *stream) {
    for (size_t i = 0; i < exec->count; i++) launch(0, 1, 1, 1, 1, 1, 1, 0, stream, exec->nodes[i].args, 0);
    return 0;
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
