/* y = SCALE * x + 1, with SCALE a build-time constant compiled into the kernel (default 2). The
 * regression runner's test builds it with another SCALE to stand for a changed kernel: the program
 * still checks itself, but its results and trace differ from a baseline built with the default. */
#include "common.h"

#ifndef SCALE
#define SCALE 2
#endif
#define N 1024
#define STRINGIFY(x) #x
#define TEXT(x) STRINGIFY(x)
static const char *source =
    "__kernel void scaled(__global float *y, __global const float *x) {\n"
    "    size_t i = get_global_id(0); y[i] = SCALE * x[i] + 1.0f; }\n";

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, "-DSCALE=" TEXT(SCALE) ".0f");
    cl_kernel kernel = make_kernel(program, "scaled");
    size_t bytes = N * sizeof(float), global = N;
    float host_x[N], want[N], got[N];
    for (int i = 0; i < N; i++) {
        host_x[i] = (float)(i % 64);
        want[i] = SCALE * host_x[i] + 1.0f;
    }
    cl_mem x = make_buffer(&env, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, host_x);
    cl_mem y = make_buffer(&env, CL_MEM_WRITE_ONLY, bytes, NULL);
    CHECK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &y));
    CHECK(clSetKernelArg(kernel, 1, sizeof(cl_mem), &x));
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(queue, y, CL_TRUE, 0, bytes, got, 0, NULL, NULL));
    expect_floats("y", got, want, N);
    printf("scaled: sum of y = %.1f\n", float_sum(got, N));
    return 0;
}
