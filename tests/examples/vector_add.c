/* The README's example: c = a + s*b, then c *= 2, on the first OpenCL device.
 * Self-checking; prints a checksum and exits non-zero on a wrong result. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4096
#define CHECK(call)                                                          \
    do {                                                                     \
        cl_int err_ = (call);                                                \
        if (err_ != CL_SUCCESS) {                                            \
            fprintf(stderr, "%s failed: %d\n", #call, err_);                 \
            exit(2);                                                         \
        }                                                                    \
    } while (0)

static const char *source =
    "__kernel void axpy(__global const float *a, __global const float *b,\n"
    "                   __global float *c, float s) {\n"
    "    size_t i = get_global_id(0);\n"
    "    c[i] = a[i] + s * b[i];\n"
    "}\n"
    "__kernel void twice(__global float *c) { c[get_global_id(0)] *= 2.0f; }\n";

int main(void) {
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    CHECK(err);

    static float a[N], b[N], c[N];
    for (int i = 0; i < N; i++) {
        a[i] = (float)i;
        b[i] = (float)(N - i);
    }
    cl_mem da = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
    CHECK(err);
    cl_mem db = clCreateBuffer(context, CL_MEM_READ_ONLY, sizeof b, NULL, &err);
    CHECK(err);
    cl_mem dc = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof c, NULL, &err);
    CHECK(err);
    CHECK(clEnqueueWriteBuffer(queue, db, CL_FALSE, 0, sizeof b, b, 0, NULL, NULL));

    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(program, 1, &device, "-cl-std=CL1.2", NULL, NULL));
    cl_kernel axpy = clCreateKernel(program, "axpy", &err);
    CHECK(err);
    cl_kernel twice = clCreateKernel(program, "twice", &err);
    CHECK(err);
    float s = 0.5f;
    CHECK(clSetKernelArg(axpy, 0, sizeof da, &da));
    CHECK(clSetKernelArg(axpy, 1, sizeof db, &db));
    CHECK(clSetKernelArg(axpy, 2, sizeof dc, &dc));
    CHECK(clSetKernelArg(axpy, 3, sizeof s, &s));
    CHECK(clSetKernelArg(twice, 0, sizeof dc, &dc));

    size_t global = N;
    CHECK(clEnqueueNDRangeKernel(queue, axpy, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueNDRangeKernel(queue, twice, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL));

    double checksum = 0;
    for (int i = 0; i < N; i++) {
        float expected = 2.0f * (a[i] + s * b[i]);
        if (c[i] != expected) {
            fprintf(stderr, "c[%d] = %f, expected %f\n", i, c[i], expected);
            return 1;
        }
        checksum += c[i];
    }
    printf("vector_add: %d elements, checksum %.1f\n", N, checksum);

    clReleaseKernel(axpy);
    clReleaseKernel(twice);
    clReleaseProgram(program);
    clReleaseMemObject(da);
    clReleaseMemObject(db);
    clReleaseMemObject(dc);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return 0;
}
