/* What clpeak revealed: the program's results never reach the host. A kernel writes a buffer the
 * program releases while the kernel may still run, without reading it; the shim waits for that
 * kernel and keeps the buffer's final contents, so the replay has something to compare. */
#include "common.h"

#define N 4096
static const char *source =
    "__kernel void ramp(__global float *out, float step) { size_t i = get_global_id(0); out[i] = step * (float)i; }\n";

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, NULL);
    cl_kernel ramp = make_kernel(program, "ramp");
    cl_mem out = make_buffer(&env, CL_MEM_READ_WRITE, N * sizeof(float), NULL);
    float step = 0.5f;
    CHECK(clSetKernelArg(ramp, 0, sizeof(cl_mem), &out));
    CHECK(clSetKernelArg(ramp, 1, sizeof(float), &step));
    size_t global = N;
    CHECK(clEnqueueNDRangeKernel(queue, ramp, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clReleaseMemObject(out));
    CHECK(clFinish(queue));
    printf("release unread: a ramp of %d values written and released unread\n", N);
    CHECK(clReleaseKernel(ramp));
    return 0;
}
