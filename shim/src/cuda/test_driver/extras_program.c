// Driver calls beyond streams and device memory, each followed by kernels (add1(data, n) adds 1
// to n ints): memory of a created context, used and then destroyed with the context; pinned host
// memory reached through its device pointer; a module variable (asked for twice); a range mapped
// with the virtual memory calls; a 3D copy of a box out of a host volume; peer copies within a
// device and to a context of another device; stream and event queries polled until the work is
// done; stream-ordered scratch memory allocated, used and freed twice in one window. A limit (the
// device heap's size) is set first.
#include "driver.h"
int main(void) {
    if (!open_driver()) return 2;
    F(cuModuleLoadData, void **, const void *);
    F(cuModuleGetFunction, void **, void *, const char *);
    F(cuModuleGetGlobal_v2, CUdeviceptr *, size_t *, void *, const char *);
    F(cuCtxCreate_v4, void **, void *, unsigned, int);
    F(cuCtxDestroy_v2, void *);
    F(cuCtxGetCurrent, void **);
    F(cuMemAlloc_v2, CUdeviceptr *, size_t);
    F(cuMemcpyHtoD_v2, CUdeviceptr, const void *, size_t);
    F(cuMemHostAlloc, void **, size_t, unsigned);
    F(cuMemHostGetDevicePointer_v2, CUdeviceptr *, void *, unsigned);
    F(cuMemFreeHost, void *);
    F(cuMemAddressReserve, CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
    F(cuMemCreate, unsigned long long *, size_t, const void *, unsigned long long);
    F(cuMemMap, CUdeviceptr, size_t, size_t, unsigned long long, unsigned long long);
    F(cuMemSetAccess, CUdeviceptr, size_t, const void *, size_t);
    F(cuMemUnmap, CUdeviceptr, size_t);
    F(cuMemcpy3D_v2, const void *);
    F(cuMemcpyPeer, CUdeviceptr, void *, CUdeviceptr, void *, size_t);
    F(cuStreamCreate, void **, unsigned);
    F(cuStreamQuery, void *);
    F(cuEventRecord, void *, void *);
    F(cuEventQuery, void *);
    F(cuMemAllocAsync, CUdeviceptr *, size_t, void *);
    F(cuMemFreeAsync, CUdeviceptr, void *);
    F(cuMemsetD32Async, CUdeviceptr, unsigned, size_t, void *);
    F(cuMemcpyDtoDAsync_v2, CUdeviceptr, CUdeviceptr, size_t, void *);
    F(cuCtxSynchronize, void);
    F(cuCtxSetLimit, int, size_t);
    void *module, *function;
    cuCtxSetLimit(2 /* CU_LIMIT_MALLOC_HEAP_SIZE */, 128 << 20);
    cuModuleLoadData(&module, ".version 9.0\n.target sm_90\n.visible .global .align 4 .b8 counter[16];\n.visible .entry add1() { ret; }\n");
    cuModuleGetFunction(&function, module, "add1");

    void *context;
    cuCtxCreate_v4(&context, 0, 0, 0);
    CUdeviceptr a;
    int zeros[4] = {0};
    cuMemAlloc_v2(&a, sizeof zeros);
    cuMemcpyHtoD_v2(a, zeros, sizeof zeros);
    add1(function, 0, a, 4);
    cuCtxDestroy_v2(context);
    // The destroyed context's address is no memory any more (n = 0: nothing is touched).
    add1(function, 0, a, 0);

    int *host;
    CUdeviceptr host_device;
    cuMemHostAlloc((void **)&host, 4 * sizeof(int), 2);
    for (int i = 0; i < 4; i++) host[i] = 10 + i;
    cuMemHostGetDevicePointer_v2(&host_device, host, 0);
    add1(function, 0, host_device + 4, 3);

    CUdeviceptr counter, again;
    size_t counter_size;
    cuModuleGetGlobal_v2(&counter, &counter_size, module, "counter");
    cuModuleGetGlobal_v2(&again, 0, module, "counter");
    add1(function, 0, counter, 2);

    CUdeviceptr mapped;
    unsigned long long handle;
    cuMemAddressReserve(&mapped, 64, 0, 0, 0);
    cuMemCreate(&handle, 64, 0, 0);
    cuMemMap(mapped, 64, 0, handle, 0);
    cuMemSetAccess(mapped, 64, 0, 0);
    memset((void *)mapped, 0, 64);
    add1(function, 0, mapped + 8, 2);

    // A 2 x 2 x 2 int box at (1, 1, 0) of a 4 x 3 x 2 int host volume, packed on the device.
    int volume[24];
    for (int i = 0; i < 24; i++) volume[i] = i;
    CUdeviceptr box, peer;
    cuMemAlloc_v2(&box, 8 * sizeof(int));
    cuMemAlloc_v2(&peer, 8 * sizeof(int));
    struct { size_t sx, sy, sz, slod; int st; const void *sh; CUdeviceptr sd; void *sa, *r0; size_t sp, srows;
             size_t dx, dy, dz, dlod; int dt; void *dh; CUdeviceptr dd; void *da, *r1; size_t dp, drows;
             size_t w, h, d; } copy = {4, 1, 0, 0, 1, volume, 0, 0, 0, 16, 3, 0, 0, 0, 0, 2, 0, box, 0, 0, 8, 2, 8, 2, 2};
    cuMemcpy3D_v2(&copy);
    void *here;
    cuCtxGetCurrent(&here);
    cuMemcpyPeer(peer, here, box, here, 8 * sizeof(int));
    cuMemcpyPeer(peer, (void *)0xd1, box, here, 8 * sizeof(int));

    void *stream;
    int polls = 0;
    cuStreamCreate(&stream, 0);
    while (cuStreamQuery(stream) == 600) polls++;
    add1(function, 0, mapped, 1);
    void *event = (void *)0xe0;
    cuEventRecord(event, 0);
    while (cuEventQuery(event) == 600) polls++;
    // The window goes on across the frees and ends at the synchronization.
    for (int round = 0; round < 2; round++) {
        CUdeviceptr scratch;
        cuMemAllocAsync(&scratch, 4 * sizeof(int), 0);
        cuMemsetD32Async(scratch, 7 + round, 4, 0);
        add1(function, 0, scratch, 4);
        cuMemcpyDtoDAsync_v2(box + round * 4 * sizeof(int), scratch, 4 * sizeof(int), 0);
        cuMemFreeAsync(scratch, 0);
    }
    cuCtxSynchronize();
    int *words = (int *)mapped, *variable = (int *)counter;
    int *peer_words = (int *)peer;
    printf("host %d %d %d %d variable %d %d %s mapped %d %d %d polls %d peer %d %d %d %d %d %d %d %d ordered %d %d\n", host[0], host[1],
           host[2], host[3], variable[0], variable[1], again == counter ? "same" : "other", words[0], words[2], words[3], polls,
           peer_words[0], peer_words[1], peer_words[2], peer_words[3], peer_words[4], peer_words[5], peer_words[6], peer_words[7],
           ((int *)box)[0], ((int *)box)[4]);
    cuMemUnmap(mapped, 64);
    cuMemFreeHost(host);
    return 0;
}
