/* Reaches OpenCL only through dlopen("libOpenCL.so.1") and dlsym(handle, ...): it is not linked
 * against the loader. Every OpenCL name below is redirected to a pointer looked up at start. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define OPENCL_FUNCTIONS(X)                                                                           \
    X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clCreateContext)                    \
    X(clCreateCommandQueueWithProperties) X(clCreateProgramWithSource) X(clBuildProgram)              \
    X(clGetProgramBuildInfo) X(clCreateKernel) X(clCreateBuffer) X(clSetKernelArg)                    \
    X(clEnqueueWriteBuffer) X(clEnqueueNDRangeKernel) X(clEnqueueReadBuffer) X(clFinish)
#define DECLARE(name) static __typeof__(name) *dl_##name;
OPENCL_FUNCTIONS(DECLARE)
#define REDIRECT(name) dl_##name
#define clGetPlatformIDs REDIRECT(clGetPlatformIDs)
#define clGetPlatformInfo REDIRECT(clGetPlatformInfo)
#define clGetDeviceIDs REDIRECT(clGetDeviceIDs)
#define clCreateContext REDIRECT(clCreateContext)
#define clCreateCommandQueueWithProperties REDIRECT(clCreateCommandQueueWithProperties)
#define clCreateProgramWithSource REDIRECT(clCreateProgramWithSource)
#define clBuildProgram REDIRECT(clBuildProgram)
#define clGetProgramBuildInfo REDIRECT(clGetProgramBuildInfo)
#define clCreateKernel REDIRECT(clCreateKernel)
#define clCreateBuffer REDIRECT(clCreateBuffer)
#define clSetKernelArg REDIRECT(clSetKernelArg)
#define clEnqueueWriteBuffer REDIRECT(clEnqueueWriteBuffer)
#define clEnqueueNDRangeKernel REDIRECT(clEnqueueNDRangeKernel)
#define clEnqueueReadBuffer REDIRECT(clEnqueueReadBuffer)
#define clFinish REDIRECT(clFinish)
#include "common.h"

#define N 512
static const char *source =
    "__kernel void blend(__global float *out, __global const float *a, float t) {\n"
    "    size_t i = get_global_id(0); out[i] = (1.0f - t) * a[i] + t * (float)i; }\n";

static void load_opencl(void) {
    void *loader = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (loader == NULL) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        exit(2);
    }
#define LOOK_UP(name)                                                                                 \
    dl_##name = (__typeof__(dl_##name))dlsym(loader, #name);                                            \
    if (dl_##name == NULL) {                                                                          \
        fprintf(stderr, "dlsym(%s) found nothing\n", #name);                                         \
        exit(2);                                                                                      \
    }
    OPENCL_FUNCTIONS(LOOK_UP)
}

int main(void) {
    load_opencl();
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, NULL);
    cl_kernel blend = make_kernel(program, "blend");
    float host[N], want[N], got[N], t = 0.25f;
    for (int i = 0; i < N; i++) {
        host[i] = (float)(i % 3);
        want[i] = (1.0f - t) * host[i] + t * (float)i;
    }
    cl_mem a = make_buffer(&env, CL_MEM_READ_ONLY, sizeof host, NULL), out = make_buffer(&env, CL_MEM_WRITE_ONLY, sizeof got, NULL);
    CHECK(clEnqueueWriteBuffer(queue, a, CL_FALSE, 0, sizeof host, host, 0, NULL, NULL));
    CHECK(clSetKernelArg(blend, 0, sizeof(cl_mem), &out));
    CHECK(clSetKernelArg(blend, 1, sizeof(cl_mem), &a));
    CHECK(clSetKernelArg(blend, 2, sizeof t, &t));
    size_t global = N;
    CHECK(clEnqueueNDRangeKernel(queue, blend, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(queue, out, CL_FALSE, 0, sizeof got, got, 0, NULL, NULL));
    CHECK(clFinish(queue));
    expect_floats("out", got, want, N);
    printf("dlopen loader: sum = %.1f\n", float_sum(got, N));
    return 0;
}
