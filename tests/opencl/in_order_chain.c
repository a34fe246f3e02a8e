/* An in-order queue running a chain of kernels: y = s*x, w = 2*y, z = w + y (so z = 3*s*x).
 * Every kernel is linear in s, so doubling s doubles z (the replay tests patch s). */
#include "common.h"

#define N 1024
static const char *source =
    "__kernel void scale(__global float *y, __global const float *x, float s) {\n"
    "    size_t i = get_global_id(0); y[i] = s * x[i]; }\n"
    "__kernel void twice(__global float *w, __global const float *y) {\n"
    "    size_t i = get_global_id(0); w[i] = 2.0f * y[i]; }\n"
    "__kernel void add(__global float *z, __global const float *w, __global const float *y) {\n"
    "    size_t i = get_global_id(0); z[i] = w[i] + y[i]; }\n";

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, "-cl-std=CL1.2");
    cl_kernel scale = make_kernel(program, "scale"), twice = make_kernel(program, "twice"),
              add = make_kernel(program, "add");
    size_t bytes = N * sizeof(float);
    cl_mem x = make_buffer(&env, CL_MEM_READ_ONLY, bytes, NULL), y = make_buffer(&env, CL_MEM_READ_WRITE, bytes, NULL),
           w = make_buffer(&env, CL_MEM_READ_WRITE, bytes, NULL), z = make_buffer(&env, CL_MEM_WRITE_ONLY, bytes, NULL);
    float host_x[N], want[N], got[N];
    for (int i = 0; i < N; i++) {
        host_x[i] = (float)i;
        want[i] = 4.5f * (float)i;
    }
    float s = 1.5f;
    CHECK(clEnqueueWriteBuffer(queue, x, CL_FALSE, 0, bytes, host_x, 0, NULL, NULL));
    CHECK(clSetKernelArg(scale, 0, sizeof(cl_mem), &y));
    CHECK(clSetKernelArg(scale, 1, sizeof(cl_mem), &x));
    CHECK(clSetKernelArg(scale, 2, sizeof(float), &s));
    CHECK(clSetKernelArg(twice, 0, sizeof(cl_mem), &w));
    CHECK(clSetKernelArg(twice, 1, sizeof(cl_mem), &y));
    CHECK(clSetKernelArg(add, 0, sizeof(cl_mem), &z));
    CHECK(clSetKernelArg(add, 1, sizeof(cl_mem), &w));
    CHECK(clSetKernelArg(add, 2, sizeof(cl_mem), &y));
    size_t global = N;
    CHECK(clEnqueueNDRangeKernel(queue, scale, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueNDRangeKernel(queue, twice, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueNDRangeKernel(queue, add, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(queue, z, CL_FALSE, 0, bytes, got, 0, NULL, NULL));
    CHECK(clFinish(queue));
    expect_floats("z", got, want, N);
    printf("in-order chain: sum of z = %.1f\n", float_sum(got, N));
    return 0;
}
