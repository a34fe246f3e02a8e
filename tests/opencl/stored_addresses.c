/* Kernels that store addresses, as OpenCL-CTS kernel_memory_alignment_* does: where a buffer, a
 * constant and a local variable lie, which the host checks for alignment. The replay's memory
 * lies elsewhere, so those words differ from the recording by where memory lies, not by what ran;
 * the sums beside them must still equal the recording. */
#include "common.h"
#include <stdint.h>

#define N 64
static const char *source =
    "__constant float4 table[4] = {(float4)(1.0f), (float4)(2.0f), (float4)(3.0f), (float4)(4.0f)};\n"
    "__kernel void where(__global ulong *out, __global const float4 *in, __local float4 *scratch) {\n"
    "    size_t i = get_global_id(0);\n"
    "    scratch[get_local_id(0)] = in[i] + table[i % 4];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    float4 v = scratch[get_local_id(0)];\n"
    "    out[4 * i] = (ulong)&in[i];\n"
    "    out[4 * i + 1] = (ulong)&table[i % 4];\n"
    "    out[4 * i + 2] = (ulong)&scratch[get_local_id(0)];\n"
    "    out[4 * i + 3] = (ulong)(v.x + v.y + v.z + v.w);\n"
    "}\n";

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_kernel where = make_kernel(build_program(&env, source, NULL), "where");
    float host[4 * N];
    for (int i = 0; i < 4 * N; i++)
        host[i] = (float)(i % 5);
    cl_mem in = make_buffer(&env, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof host, host);
    cl_mem out = make_buffer(&env, CL_MEM_WRITE_ONLY, 4 * N * sizeof(cl_ulong), NULL);
    CHECK(clSetKernelArg(where, 0, sizeof(cl_mem), &out));
    CHECK(clSetKernelArg(where, 1, sizeof(cl_mem), &in));
    CHECK(clSetKernelArg(where, 2, 16 * sizeof(cl_float4), NULL));
    size_t global = N, local = 16;
    CHECK(clEnqueueNDRangeKernel(queue, where, 1, NULL, &global, &local, 0, NULL, NULL));
    cl_ulong got[4 * N];
    CHECK(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    unsigned long long sum = 0;
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < 3; k++)
            if (got[4 * i + k] % 16 != 0) {
                fprintf(stderr, "item %d: address %d (0x%llx) is not 16-byte aligned\n", i, k, (unsigned long long)got[4 * i + k]);
                return 1;
            }
        sum += got[4 * i + 3];
    }
    printf("stored addresses: all aligned; sum %llu\n", sum);
    return 0;
}
