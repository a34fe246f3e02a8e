/* A launch-bound OpenCL program: ITERATIONS windows of LAUNCHES tiny kernels, each preceded by a
 * clSetKernelArg, with a clFinish per window. Prints its own time per launch and per iteration.
 * usage: launches LAUNCHES ITERATIONS */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *source = "__kernel void bump(__global int *x, int by) { x[get_global_id(0)] += by; }\n";

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
    int launches = argc > 1 ? atoi(argv[1]) : 1000;
    int iterations = argc > 2 ? atoi(argv[2]) : 10;
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    clGetPlatformIDs(1, &platform, NULL);
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL);
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    if (clBuildProgram(program, 1, &device, "", NULL, NULL) != CL_SUCCESS) return 2;
    cl_kernel kernel = clCreateKernel(program, "bump", &err);
    int zero[64] = {0};
    cl_mem x = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, zero, &err);
    clSetKernelArg(kernel, 0, sizeof x, &x);
    clFinish(queue); /* segment 0: set-up only */

    size_t global = 64;
    double start = now_us();
    for (int i = 0; i < iterations; i++) {
        for (int l = 0; l < launches; l++) {
            int by = (l & 1) ? 1 : 2;
            clSetKernelArg(kernel, 1, sizeof by, &by);
            clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL);
        }
        clFinish(queue);
    }
    double took = now_us() - start;
    int result[64];
    clEnqueueReadBuffer(queue, x, CL_TRUE, 0, sizeof result, result, 0, NULL, NULL);
    long expected = (long)iterations * (launches / 2 * 3 + (launches % 2) * 2);
    if (result[0] != expected) {
        fprintf(stderr, "x[0] = %d, expected %ld\n", result[0], expected);
        return 1;
    }
    printf("launches %d iterations %d us_per_launch %.3f us_per_iteration %.1f\n", launches, iterations,
           took / ((double)launches * iterations), took / iterations);
    return 0;
}
