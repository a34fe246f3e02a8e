/* Per-work-group sums through local memory: one buffer passed as a local argument, one declared
 * in the kernel, so both kinds of local memory are recorded. */
#include "common.h"

#define GROUP 64
#define GROUPS 16
static const char *source =
    "#define GROUP 64\n"
    "__kernel void group_sums(__global float *sums, __global const float *x, __local float *scratch) {\n"
    "    __local float doubled[GROUP];\n"
    "    size_t l = get_local_id(0);\n"
    "    scratch[l] = x[get_global_id(0)];\n"
    "    doubled[l] = 2.0f * scratch[l];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (size_t stride = GROUP / 2; stride > 0; stride /= 2) {\n"
    "        if (l < stride) doubled[l] += doubled[l + stride];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    if (l == 0) sums[get_group_id(0)] = doubled[0];\n"
    "}\n";

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, NULL);
    cl_kernel kernel = make_kernel(program, "group_sums");
    float host_x[GROUP * GROUPS], want[GROUPS] = {0}, got[GROUPS];
    for (int i = 0; i < GROUP * GROUPS; i++) {
        host_x[i] = (float)(i % 5);
        want[i / GROUP] += 2.0f * host_x[i];
    }
    cl_mem x = make_buffer(&env, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof host_x, host_x);
    cl_mem sums = make_buffer(&env, CL_MEM_WRITE_ONLY, sizeof got, NULL);
    CHECK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &sums));
    CHECK(clSetKernelArg(kernel, 1, sizeof(cl_mem), &x));
    CHECK(clSetKernelArg(kernel, 2, GROUP * sizeof(float), NULL));
    size_t global = GROUP * GROUPS, local = GROUP;
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(queue, sums, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    expect_floats("sums", got, want, GROUPS);
    printf("local memory: total = %.1f\n", float_sum(got, GROUPS));
    return 0;
}
