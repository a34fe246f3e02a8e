/* A user event gates a kernel and a read; the host completes it after enqueueing. */
#include "common.h"

#define N 128
static const char *source =
    "__kernel void cube(__global float *v) { size_t i = get_global_id(0); v[i] = v[i] * v[i] * v[i]; }\n";

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, NULL);
    cl_kernel cube = make_kernel(program, "cube");
    float host[N], want[N], got[N];
    for (int i = 0; i < N; i++) {
        host[i] = (float)(i % 9) - 4.0f;
        want[i] = host[i] * host[i] * host[i];
    }
    cl_mem v = make_buffer(&env, CL_MEM_READ_WRITE, sizeof host, NULL);
    cl_event gate = CHECKED(clCreateUserEvent(env.context, ERR));
    CHECK(clEnqueueWriteBuffer(queue, v, CL_FALSE, 0, sizeof host, host, 1, &gate, NULL));
    CHECK(clSetKernelArg(cube, 0, sizeof(cl_mem), &v));
    size_t global = N;
    cl_event cubed;
    CHECK(clEnqueueNDRangeKernel(queue, cube, 1, NULL, &global, NULL, 1, &gate, &cubed));
    CHECK(clEnqueueReadBuffer(queue, v, CL_FALSE, 0, sizeof got, got, 1, &cubed, NULL));
    CHECK(clFlush(queue));
    CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
    CHECK(clFinish(queue));
    expect_floats("v", got, want, N);
    printf("user event: sum of cubes = %.1f\n", float_sum(got, N));
    CHECK(clReleaseEvent(gate));
    CHECK(clReleaseEvent(cubed));
    return 0;
}
