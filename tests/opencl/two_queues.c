/* Two in-order queues ordered across each other by events, a marker and barriers:
 * queue 1: a = a + 1 (event e1); queue 2: marker waiting on e1, b = 3*a, barrier (event e2);
 * queue 1: barrier waiting on e2, c = a + b. So c = 4*(x + 1). */
#include "common.h"

#define N 256
static const char *source =
    "__kernel void increment(__global float *a) { a[get_global_id(0)] += 1.0f; }\n"
    "__kernel void triple(__global float *b, __global const float *a) {\n"
    "    size_t i = get_global_id(0); b[i] = 3.0f * a[i]; }\n"
    "__kernel void sum(__global float *c, __global const float *a, __global const float *b) {\n"
    "    size_t i = get_global_id(0); c[i] = a[i] + b[i]; }\n";

int main(void) {
    test_env env = open_env();
    cl_command_queue first = open_queue(&env, 0), second = open_queue(&env, 0);
    cl_program program = build_program(&env, source, NULL);
    cl_kernel increment = make_kernel(program, "increment"), triple = make_kernel(program, "triple"),
              sum = make_kernel(program, "sum");
    size_t bytes = N * sizeof(float), global = N;
    float host_x[N], want[N], got[N];
    for (int i = 0; i < N; i++) {
        host_x[i] = (float)(i % 7);
        want[i] = 4.0f * (host_x[i] + 1.0f);
    }
    cl_mem a = make_buffer(&env, CL_MEM_READ_WRITE, bytes, NULL), b = make_buffer(&env, CL_MEM_READ_WRITE, bytes, NULL),
           c = make_buffer(&env, CL_MEM_READ_WRITE, bytes, NULL);
    CHECK(clSetKernelArg(increment, 0, sizeof(cl_mem), &a));
    CHECK(clSetKernelArg(triple, 0, sizeof(cl_mem), &b));
    CHECK(clSetKernelArg(triple, 1, sizeof(cl_mem), &a));
    CHECK(clSetKernelArg(sum, 0, sizeof(cl_mem), &c));
    CHECK(clSetKernelArg(sum, 1, sizeof(cl_mem), &a));
    CHECK(clSetKernelArg(sum, 2, sizeof(cl_mem), &b));

    CHECK(clEnqueueWriteBuffer(first, a, CL_FALSE, 0, bytes, host_x, 0, NULL, NULL));
    cl_event incremented, marked, tripled;
    CHECK(clEnqueueNDRangeKernel(first, increment, 1, NULL, &global, NULL, 0, NULL, &incremented));
    CHECK(clEnqueueMarkerWithWaitList(second, 1, &incremented, &marked));
    CHECK(clEnqueueNDRangeKernel(second, triple, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueBarrierWithWaitList(second, 0, NULL, &tripled));
    CHECK(clFlush(second));
    CHECK(clEnqueueBarrierWithWaitList(first, 1, &tripled, NULL));
    CHECK(clEnqueueNDRangeKernel(first, sum, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(first, c, CL_TRUE, 0, bytes, got, 0, NULL, NULL));
    CHECK(clFinish(second));
    expect_floats("c", got, want, N);
    printf("two queues: sum of c = %.1f\n", float_sum(got, N));
    CHECK(clReleaseEvent(incremented));
    CHECK(clReleaseEvent(marked));
    CHECK(clReleaseEvent(tripled));
    return 0;
}
