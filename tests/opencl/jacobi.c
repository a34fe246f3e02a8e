/* Jacobi-style relaxation: every iteration runs the same kernel from one buffer into the other
 * with a new weight, reads the result and ends with clFinish; then the buffers swap. A replay sees
 * one segment per iteration, all alike but for the swapped buffers and the weight. */
#include "common.h"

#define N 256
#define ITERATIONS 12
static const char *source =
    "__kernel void relax(__global float *next, __global const float *current, float weight) {\n"
    "    size_t i = get_global_id(0), n = get_global_size(0);\n"
    "    float left = i > 0 ? current[i - 1] : 0.0f, right = i + 1 < n ? current[i + 1] : 0.0f;\n"
    "    next[i] = (1.0f - weight) * current[i] + weight * 0.5f * (left + right); }\n";

static void relax_on_host(float *next, const float *current, float weight) {
    for (int i = 0; i < N; i++) {
        float left = i > 0 ? current[i - 1] : 0.0f, right = i + 1 < N ? current[i + 1] : 0.0f;
        next[i] = (1.0f - weight) * current[i] + weight * 0.5f * (left + right);
    }
}

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, NULL);
    cl_kernel relax = make_kernel(program, "relax");
    float start[N], want[N], expected_next[N], got[N];
    for (int i = 0; i < N; i++) start[i] = want[i] = (i % 32 == 0) ? 100.0f : 0.0f;
    cl_mem buffers[2] = {make_buffer(&env, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof start, start),
                         make_buffer(&env, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof start, start)};
    size_t global = N;
    for (int iteration = 0; iteration < ITERATIONS; iteration++) {
        float weight = 0.5f + 0.03f * (float)iteration;
        cl_mem current = buffers[iteration % 2], next = buffers[(iteration + 1) % 2];
        CHECK(clSetKernelArg(relax, 0, sizeof(cl_mem), &next));
        CHECK(clSetKernelArg(relax, 1, sizeof(cl_mem), &current));
        CHECK(clSetKernelArg(relax, 2, sizeof weight, &weight));
        CHECK(clEnqueueNDRangeKernel(queue, relax, 1, NULL, &global, NULL, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(queue, next, CL_FALSE, 0, sizeof got, got, 0, NULL, NULL));
        CHECK(clFinish(queue));
        relax_on_host(expected_next, want, weight);
        memcpy(want, expected_next, sizeof want);
    }
    /* The device may fuse multiply-adds the host does not: a looser tolerance. */
    expect_close("relaxed", got, want, N, 1e-4f);
    printf("jacobi: %d iterations, sum = %.2f, centre of first peak = %.3f\n", ITERATIONS, float_sum(got, N), got[0]);
    return 0;
}
