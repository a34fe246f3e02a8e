/* An out-of-order queue whose four kernels are joined only by events, as a diamond:
 * a: p = x + 1; b: q = 2*p (waits a); c: r = p*p (waits a); d: out = q + r (waits b and c). */
#include "common.h"

#define N 512
static const char *source =
    "__kernel void stage_a(__global float *p, __global const float *x) {\n"
    "    size_t i = get_global_id(0); p[i] = x[i] + 1.0f; }\n"
    "__kernel void stage_b(__global float *q, __global const float *p) {\n"
    "    size_t i = get_global_id(0); q[i] = 2.0f * p[i]; }\n"
    "__kernel void stage_c(__global float *r, __global const float *p) {\n"
    "    size_t i = get_global_id(0); r[i] = p[i] * p[i]; }\n"
    "__kernel void stage_d(__global float *out, __global const float *q, __global const float *r) {\n"
    "    size_t i = get_global_id(0); out[i] = q[i] + r[i]; }\n";

static cl_event launch(cl_command_queue queue, cl_kernel kernel, cl_uint waits, const cl_event *wait_list) {
    size_t global = N;
    cl_event done;
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, waits, wait_list, &done));
    return done;
}

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    cl_program program = build_program(&env, source, NULL);
    cl_kernel a = make_kernel(program, "stage_a"), b = make_kernel(program, "stage_b"),
              c = make_kernel(program, "stage_c"), d = make_kernel(program, "stage_d");
    size_t bytes = N * sizeof(float);
    float host_x[N], want[N], got[N];
    for (int i = 0; i < N; i++) {
        host_x[i] = (float)(i % 17);
        float p = host_x[i] + 1.0f;
        want[i] = 2.0f * p + p * p;
    }
    cl_mem x = make_buffer(&env, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, host_x);
    cl_mem p = make_buffer(&env, CL_MEM_READ_WRITE, bytes, NULL), q = make_buffer(&env, CL_MEM_READ_WRITE, bytes, NULL),
           r = make_buffer(&env, CL_MEM_READ_WRITE, bytes, NULL), out = make_buffer(&env, CL_MEM_WRITE_ONLY, bytes, NULL);
    CHECK(clSetKernelArg(a, 0, sizeof(cl_mem), &p));
    CHECK(clSetKernelArg(a, 1, sizeof(cl_mem), &x));
    CHECK(clSetKernelArg(b, 0, sizeof(cl_mem), &q));
    CHECK(clSetKernelArg(b, 1, sizeof(cl_mem), &p));
    CHECK(clSetKernelArg(c, 0, sizeof(cl_mem), &r));
    CHECK(clSetKernelArg(c, 1, sizeof(cl_mem), &p));
    CHECK(clSetKernelArg(d, 0, sizeof(cl_mem), &out));
    CHECK(clSetKernelArg(d, 1, sizeof(cl_mem), &q));
    CHECK(clSetKernelArg(d, 2, sizeof(cl_mem), &r));
    cl_event done_a = launch(queue, a, 0, NULL);
    cl_event done_b = launch(queue, b, 1, &done_a);
    cl_event done_c = launch(queue, c, 1, &done_a);
    cl_event joined[2] = {done_b, done_c};
    cl_event done_d = launch(queue, d, 2, joined);
    CHECK(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, bytes, got, 1, &done_d, NULL));
    expect_floats("out", got, want, N);
    printf("diamond: sum of out = %.1f\n", float_sum(got, N));
    return 0;
}
