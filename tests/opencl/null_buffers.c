/* What hashcat's trace revealed, and OpenCL-CTS test_profiling's: kernels given null buffers both
 * ways OpenCL allows (a pointer to a null cl_mem, as hashcat passes its unused buffers, and a
 * null arg_value), in rounds between host synchronizations so that graph replay records them
 * into command buffers (PoCL's clone of such a kernel crashed when launched), and a launch of a
 * global size of 0, which runs nothing (OpenCL 2.1). */
#include "common.h"

#define N 256
#define ROUNDS 4
static const char *source =
    "__kernel void pick(__global float *out, __global const float *a, __global const float *b, float fallback) {\n"
    "    size_t i = get_global_id(0);\n"
    "    out[i] = (a ? a[i] : fallback) + (b ? b[i] : 2.0f * fallback);\n"
    "}\n";

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, NULL);
    cl_kernel pick = make_kernel(program, "pick");
    float host[N], want[N], got[N];
    for (int i = 0; i < N; i++) host[i] = (float)(i % 7);
    cl_mem out = make_buffer(&env, CL_MEM_READ_WRITE, sizeof got, NULL);
    cl_mem a = make_buffer(&env, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof host, host);
    cl_mem none = NULL;
    size_t global = N, nothing = 0;
    double total = 0;
    CHECK(clSetKernelArg(pick, 0, sizeof(cl_mem), &out));
    for (int round = 0; round < ROUNDS; round++) {
        float fallback = (float)(round + 1);
        /* Even rounds: no buffers at all; odd rounds: `a`, and `b` null. */
        CHECK(clSetKernelArg(pick, 1, sizeof(cl_mem), round % 2 ? &a : &none));
        CHECK(clSetKernelArg(pick, 2, sizeof(cl_mem), NULL));
        CHECK(clSetKernelArg(pick, 3, sizeof fallback, &fallback));
        CHECK(clEnqueueNDRangeKernel(queue, pick, 1, NULL, &global, NULL, 0, NULL, NULL));
        CHECK(clEnqueueNDRangeKernel(queue, pick, 1, NULL, &nothing, NULL, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
        for (int i = 0; i < N; i++) want[i] = (round % 2 ? host[i] : fallback) + 2.0f * fallback;
        expect_floats("out", got, want, N);
        total += float_sum(got, N);
    }
    printf("null buffers: total = %.1f\n", total);
    return 0;
}
