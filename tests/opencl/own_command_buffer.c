/* A program that builds its own cl_khr_command_buffer (two kernels ordered by a sync point) and
 * enqueues it three times, waiting for each (a buffer without simultaneous use may not be pending
 * twice); the shim records each submission as a sub-graph. Only the calls whose
 * signatures are the same in every revision of the extension are used. */
#include "common.h"
#include <CL/cl_ext.h>

#define N 200
static const char *source =
    "__kernel void add_one(__global float *v) { v[get_global_id(0)] += 1.0f; }\n"
    "__kernel void twice(__global float *v) { v[get_global_id(0)] *= 2.0f; }\n";

static int has_command_buffers(cl_device_id device) {
    char extensions[8192] = {0};
    CHECK(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof extensions - 1, extensions, NULL));
    return strstr(extensions, "cl_khr_command_buffer ") != NULL;
}

int main(void) {
    test_env env = open_env();
    if (!has_command_buffers(env.device)) {
        printf("own command buffer: the device has no cl_khr_command_buffer\n");
        return 0;
    }
    clCreateCommandBufferKHR_fn create = LOOK_UP(env.platform, clCreateCommandBufferKHR);
    clCommandNDRangeKernelKHR_fn command_kernel = LOOK_UP(env.platform, clCommandNDRangeKernelKHR);
    clFinalizeCommandBufferKHR_fn finalize = LOOK_UP(env.platform, clFinalizeCommandBufferKHR);
    clEnqueueCommandBufferKHR_fn enqueue = LOOK_UP(env.platform, clEnqueueCommandBufferKHR);
    clReleaseCommandBufferKHR_fn release = LOOK_UP(env.platform, clReleaseCommandBufferKHR);

    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, NULL);
    cl_kernel add_one = make_kernel(program, "add_one"), twice = make_kernel(program, "twice");
    float host[N], want[N], got[N];
    for (int i = 0; i < N; i++) host[i] = want[i] = (float)(i % 10);
    cl_mem v = make_buffer(&env, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host);
    CHECK(clSetKernelArg(add_one, 0, sizeof(cl_mem), &v));
    CHECK(clSetKernelArg(twice, 0, sizeof(cl_mem), &v));

    cl_command_buffer_khr buffer = CHECKED(create(1, &queue, NULL, ERR));
    size_t global = N;
    cl_sync_point_khr added;
    CHECK(command_kernel(buffer, NULL, NULL, add_one, 1, NULL, &global, NULL, 0, NULL, &added, NULL));
    CHECK(command_kernel(buffer, NULL, NULL, twice, 1, NULL, &global, NULL, 1, &added, NULL, NULL));
    CHECK(finalize(buffer));
    for (int run = 0; run < 3; run++) {
        CHECK(enqueue(0, NULL, buffer, 0, NULL, NULL));
        CHECK(clFinish(queue));
        for (int i = 0; i < N; i++) want[i] = (want[i] + 1.0f) * 2.0f;
    }
    CHECK(clEnqueueReadBuffer(queue, v, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    expect_floats("v", got, want, N);
    printf("own command buffer: sum = %.1f\n", float_sum(got, N));
    CHECK(release(buffer));
    return 0;
}
