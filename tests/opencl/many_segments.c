/* A long launch-bound loop, as training loops are: each of SEGMENTS iterations (argument 1,
 * default 100) launches `advance` nine times, ping-ponging two buffers with a new constant each
 * launch, then `reduce` into a 16-byte result that a blocking read brings back. Every iteration
 * is one segment of 10 launches and a read, and all iterations are one family patched with the
 * constants. The synthetic traces of `trace-format/examples/synthetic_trace.rs` are built to
 * look like its recording. Self-checking: exits 1 on a wrong result. */
#include "common.h"

#define N 256
#define STEPS 9
static const char *source =
    "__kernel void advance(__global uint *dst, __global const uint *src, uint k) {\n"
    "    size_t i = get_global_id(0); dst[i] = src[i] * 3u + k + (uint)i; }\n"
    "__kernel void reduce(__global uint *r, __global const uint *src, uint n) {\n"
    "    size_t j = get_global_id(0); uint s = 0;\n"
    "    for (uint i = (uint)j; i < n; i += 4u) s += src[i];\n"
    "    r[j] = s; }\n";

int main(int argc, char **argv) {
    long segments = argc > 1 ? atol(argv[1]) : 100;
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, NULL);
    cl_kernel step = make_kernel(program, "advance");
    cl_kernel reduce = make_kernel(program, "reduce");
    cl_uint host[2][N], result[4], want[4];
    for (cl_uint i = 0; i < N; i++) host[0][i] = host[1][i] = i;
    cl_mem buffers[2];
    for (int b = 0; b < 2; b++) buffers[b] = make_buffer(&env, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host[b], host[b]);
    cl_mem r = make_buffer(&env, CL_MEM_READ_WRITE, sizeof result, NULL);
    cl_uint n = N;
    CHECK(clSetKernelArg(reduce, 0, sizeof(cl_mem), &r));
    CHECK(clSetKernelArg(reduce, 2, sizeof n, &n));
    size_t global = N, lanes = 4;
    for (long segment = 0; segment < segments; segment++) {
        for (int s = 0; s < STEPS; s++) {
            cl_uint k = (cl_uint)(segment * 16 + s);
            int src = s % 2, dst = 1 - src;
            CHECK(clSetKernelArg(step, 0, sizeof(cl_mem), &buffers[dst]));
            CHECK(clSetKernelArg(step, 1, sizeof(cl_mem), &buffers[src]));
            CHECK(clSetKernelArg(step, 2, sizeof k, &k));
            CHECK(clEnqueueNDRangeKernel(queue, step, 1, NULL, &global, NULL, 0, NULL, NULL));
            for (cl_uint i = 0; i < N; i++) host[dst][i] = host[src][i] * 3u + k + i;
        }
        CHECK(clSetKernelArg(reduce, 1, sizeof(cl_mem), &buffers[STEPS % 2]));
        CHECK(clEnqueueNDRangeKernel(queue, reduce, 1, NULL, &lanes, NULL, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(queue, r, CL_TRUE, 0, sizeof result, result, 0, NULL, NULL));
        for (cl_uint j = 0; j < 4; j++) {
            want[j] = 0;
            for (cl_uint i = j; i < N; i += 4) want[j] += host[STEPS % 2][i];
            if (result[j] != want[j]) {
                fprintf(stderr, "segment %ld: r[%u] is %u, expected %u\n", segment, j, result[j], want[j]);
                return 1;
            }
        }
    }
    printf("many_segments: %ld segments, last r = %u %u %u %u\n", segments, result[0], result[1], result[2], result[3]);
    return 0;
}
