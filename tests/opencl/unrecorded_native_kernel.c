/* A program whose trace is partial: it runs a native kernel (clEnqueueNativeKernel, host code the
 * shim cannot record). The native kernel touches no memory the OpenCL kernel uses, so a replay's
 * results equal the recording; the verdict must still say that the trace left work out. Without
 * native kernels it says so and exits 0. */
#include "common.h"

#define N 256
static const char *source =
    "__kernel void twice(__global float *out, __global const float *in) {\n"
    "    size_t i = get_global_id(0); out[i] = 2.0f * in[i]; }\n";

static void count_call(void *counter) { ++**(int **)counter; }

int main(void) {
    test_env env = open_env();
    cl_device_exec_capabilities capabilities = 0;
    CHECK(clGetDeviceInfo(env.device, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof capabilities, &capabilities, NULL));
    if (!(capabilities & CL_EXEC_NATIVE_KERNEL)) {
        printf("unrecorded native kernel: the device runs no native kernels\n");
        return 0;
    }
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, "");
    cl_kernel kernel = make_kernel(program, "twice");
    size_t bytes = N * sizeof(float), global = N;
    float host[N], got[N];
    for (int i = 0; i < N; i++) host[i] = (float)(i % 13);
    cl_mem in = make_buffer(&env, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, host);
    cl_mem out = make_buffer(&env, CL_MEM_WRITE_ONLY, bytes, NULL);
    CHECK(clSetKernelArg(kernel, 0, sizeof out, &out));
    CHECK(clSetKernelArg(kernel, 1, sizeof in, &in));
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
    int calls = 0, *counter = &calls;
    CHECK(clEnqueueNativeKernel(queue, count_call, &counter, sizeof counter, 0, NULL, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, bytes, got, 0, NULL, NULL));
    CHECK(clFinish(queue));
    printf("unrecorded native kernel: sum = %.1f, native calls = %d\n", float_sum(got, N), calls);
    return 0;
}
