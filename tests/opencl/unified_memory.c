/* Unified shared memory (cl_intel_unified_shared_memory), as Intel's SYCL runtime uses it on OpenCL:
 * host, device and shared allocations reached through the extension's functions; copies, a memset,
 * a fill, migration and advice; kernel arguments by pointer, one pointing into an allocation; host
 * writes into shared and host memory between launches; a structure by value holding a USM address;
 * a table of USM addresses in host USM that a kernel reads them from; blocking frees. Needs a device with the
 * extension (Intel's CPU runtime). */
#include "common.h"
#include <CL/cl_ext.h>

#define N 1024
static const char *source =
    "__kernel void axpy(__global float *y, __global const float *x, float a) {\n"
    "    size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }\n"
    "__kernel void add_into(__global float *out, __global const float *a, __global const float *b) {\n"
    "    size_t i = get_global_id(0); out[i] = a[i] + b[i]; }\n"
    "typedef struct { ulong scale; ulong data; uint count; uint step; } strided;\n"
    "__kernel void gather(strided in, __global float *out) {\n"
    "    size_t i = get_global_id(0); __global const float *data = (__global const float *)in.data;\n"
    "    out[i] = (float)in.scale * data[(i * in.step) % in.count]; }\n"
    "__kernel void through_table(__global const ulong *table, __global float *out) {\n"
    "    size_t i = get_global_id(0); out[i] = ((__global const float *)table[i % 2])[i] + 1.0f; }\n";

/* A structure passed by value that holds a USM address, as SYCL's kernels take dpnp's strided
 * indexers: the replay must write its own allocation's address there. */
typedef struct {
    cl_ulong scale;
    cl_ulong data;
    cl_uint count;
    cl_uint step;
} strided;

#define EXTENSION(type, name) type name = (type)lookup(env.platform, #name)

int main(void) {
    test_env env = open_env();
    EXTENSION(clHostMemAllocINTEL_fn, clHostMemAllocINTEL);
    EXTENSION(clDeviceMemAllocINTEL_fn, clDeviceMemAllocINTEL);
    EXTENSION(clSharedMemAllocINTEL_fn, clSharedMemAllocINTEL);
    EXTENSION(clMemBlockingFreeINTEL_fn, clMemBlockingFreeINTEL);
    EXTENSION(clMemFreeINTEL_fn, clMemFreeINTEL);
    EXTENSION(clSetKernelArgMemPointerINTEL_fn, clSetKernelArgMemPointerINTEL);
    EXTENSION(clEnqueueMemcpyINTEL_fn, clEnqueueMemcpyINTEL);
    EXTENSION(clEnqueueMemFillINTEL_fn, clEnqueueMemFillINTEL);
    EXTENSION(clEnqueueMemsetINTEL_fn, clEnqueueMemsetINTEL);
    EXTENSION(clEnqueueMigrateMemINTEL_fn, clEnqueueMigrateMemINTEL);
    EXTENSION(clEnqueueMemAdviseINTEL_fn, clEnqueueMemAdviseINTEL);
    if (!clHostMemAllocINTEL || !clDeviceMemAllocINTEL || !clSharedMemAllocINTEL || !clMemBlockingFreeINTEL || !clMemFreeINTEL ||
        !clSetKernelArgMemPointerINTEL || !clEnqueueMemcpyINTEL || !clEnqueueMemFillINTEL || !clEnqueueMemsetINTEL ||
        !clEnqueueMigrateMemINTEL || !clEnqueueMemAdviseINTEL) {
        fprintf(stderr, "the platform lacks cl_intel_unified_shared_memory\n");
        return 2;
    }
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, "");
    cl_kernel axpy = make_kernel(program, "axpy"), add_into = make_kernel(program, "add_into");
    size_t bytes = N * sizeof(float);
    float *x = CHECKED(clDeviceMemAllocINTEL(env.context, env.device, NULL, bytes, 0, ERR));
    float *y = CHECKED(clSharedMemAllocINTEL(env.context, env.device, NULL, bytes, 0, ERR));
    float *h = CHECKED(clHostMemAllocINTEL(env.context, NULL, 2 * bytes, 0, ERR));
    float host_x[N];
    for (int i = 0; i < N; i++) host_x[i] = (float)i;
    CHECK(clEnqueueMemcpyINTEL(queue, CL_FALSE, x, host_x, bytes, 0, NULL, NULL));
    float one = 1.0f;
    CHECK(clEnqueueMemFillINTEL(queue, y, &one, sizeof one, bytes, 0, NULL, NULL));
    CHECK(clEnqueueMemsetINTEL(queue, h, 0, 2 * bytes, 0, NULL, NULL));
    CHECK(clEnqueueMigrateMemINTEL(queue, y, bytes, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL));
    /* The extension defines no advice values; a device's refusal passes through unchanged. */
    printf("advice 0: %d\n", clEnqueueMemAdviseINTEL(queue, y, bytes, 0, 0, NULL, NULL));
    size_t global = N;
    float a = 0.5f;
    CHECK(clSetKernelArgMemPointerINTEL(axpy, 0, y));
    CHECK(clSetKernelArgMemPointerINTEL(axpy, 1, x));
    CHECK(clSetKernelArg(axpy, 2, sizeof a, &a));
    cl_event done;
    CHECK(clEnqueueNDRangeKernel(queue, axpy, 1, NULL, &global, NULL, 0, NULL, &done));
    CHECK(clWaitForEvents(1, &done));
    clReleaseEvent(done);
    /* The host reads and writes shared and host memory directly between launches. */
    double shared_sum = 0;
    for (int i = 0; i < N; i++) shared_sum += y[i];
    for (int i = 0; i < N; i++) y[i] += 2.0f;
    for (int i = 0; i < N; i++) h[N + i] = (float)(i % 7);
    /* The second half of the host allocation: an argument pointing into it. */
    CHECK(clSetKernelArgMemPointerINTEL(add_into, 0, h));
    CHECK(clSetKernelArgMemPointerINTEL(add_into, 1, y));
    CHECK(clSetKernelArgMemPointerINTEL(add_into, 2, h + N));
    CHECK(clEnqueueNDRangeKernel(queue, add_into, 1, NULL, &global, NULL, 0, NULL, NULL));
    float got[N];
    CHECK(clEnqueueMemcpyINTEL(queue, CL_TRUE, got, h, bytes, 0, NULL, NULL));
    for (int i = 0; i < N; i++) {
        float want = 0.5f * (float)i + 1.0f + 2.0f + (float)(i % 7);
        if (got[i] != want) {
            fprintf(stderr, "got[%d] = %f, want %f\n", i, got[i], want);
            return 1;
        }
    }
    /* Every third element of the device allocation x, through an address inside a structure. */
    cl_kernel gather = make_kernel(program, "gather");
    strided in = {3, (cl_ulong)(uintptr_t)x, N, 3};
    CHECK(clSetKernelArg(gather, 0, sizeof in, &in));
    CHECK(clSetKernelArgMemPointerINTEL(gather, 1, y));
    CHECK(clEnqueueNDRangeKernel(queue, gather, 1, NULL, &global, NULL, 0, NULL, NULL));
    float gathered[N];
    CHECK(clEnqueueMemcpyINTEL(queue, CL_TRUE, gathered, y, bytes, 0, NULL, NULL));
    for (int i = 0; i < N; i++) {
        float want = 3.0f * (float)((i * 3) % N);
        if (gathered[i] != want) {
            fprintf(stderr, "gathered[%d] = %f, want %f\n", i, gathered[i], want);
            return 1;
        }
    }
    /* Addresses in data: a table of USM pointers the host writes into host USM. */
    cl_kernel through_table = make_kernel(program, "through_table");
    cl_ulong *table = CHECKED(clHostMemAllocINTEL(env.context, NULL, 2 * sizeof(cl_ulong), 0, ERR));
    table[0] = (cl_ulong)(uintptr_t)x;
    table[1] = (cl_ulong)(uintptr_t)h;
    CHECK(clSetKernelArgMemPointerINTEL(through_table, 0, table));
    CHECK(clSetKernelArgMemPointerINTEL(through_table, 1, y));
    CHECK(clEnqueueNDRangeKernel(queue, through_table, 1, NULL, &global, NULL, 0, NULL, NULL));
    float through[N];
    CHECK(clEnqueueMemcpyINTEL(queue, CL_TRUE, through, y, bytes, 0, NULL, NULL));
    for (int i = 0; i < N; i++) {
        float want = (i % 2 == 0 ? (float)i : got[i]) + 1.0f;
        if (through[i] != want) {
            fprintf(stderr, "through[%d] = %f, want %f\n", i, through[i], want);
            return 1;
        }
    }
    CHECK(clMemBlockingFreeINTEL(env.context, table));
    printf("unified memory: shared sum after axpy = %.1f, sum of results = %.1f, gathered %.1f, through a table %.1f\n", shared_sum,
           float_sum(got, N), float_sum(gathered, N), float_sum(through, N));
    CHECK(clMemBlockingFreeINTEL(env.context, x));
    CHECK(clMemBlockingFreeINTEL(env.context, y));
    CHECK(clFinish(queue));
    CHECK(clMemFreeINTEL(env.context, h));
    return 0;
}
