/* Two sub-buffers, the halves of one buffer, each given its own kernel; the parent is read. */
#include "common.h"

#define HALF 256
static const char *source =
    "__kernel void set_to(__global float *v, float value) {\n"
    "    size_t i = get_global_id(0); v[i] = value + (float)i; }\n";

static cl_mem half_of(cl_mem parent, size_t index) {
    cl_buffer_region region = {index * HALF * sizeof(float), HALF * sizeof(float)};
    return CHECKED(clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, ERR));
}

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, NULL);
    cl_kernel low_kernel = make_kernel(program, "set_to"), high_kernel = make_kernel(program, "set_to");
    cl_mem parent = make_buffer(&env, CL_MEM_READ_WRITE, 2 * HALF * sizeof(float), NULL);
    cl_mem low = half_of(parent, 0), high = half_of(parent, 1);
    float low_value = 10.0f, high_value = -100.0f;
    CHECK(clSetKernelArg(low_kernel, 0, sizeof(cl_mem), &low));
    CHECK(clSetKernelArg(low_kernel, 1, sizeof(float), &low_value));
    CHECK(clSetKernelArg(high_kernel, 0, sizeof(cl_mem), &high));
    CHECK(clSetKernelArg(high_kernel, 1, sizeof(float), &high_value));
    size_t global = HALF;
    CHECK(clEnqueueNDRangeKernel(queue, low_kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueNDRangeKernel(queue, high_kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
    float got[2 * HALF], want[2 * HALF];
    for (int i = 0; i < HALF; i++) {
        want[i] = low_value + (float)i;
        want[HALF + i] = high_value + (float)i;
    }
    CHECK(clEnqueueReadBuffer(queue, parent, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    expect_floats("parent", got, want, 2 * HALF);
    printf("sub-buffers: sum of parent = %.1f\n", float_sum(got, 2 * HALF));
    CHECK(clReleaseMemObject(low));
    CHECK(clReleaseMemObject(high));
    return 0;
}
