/* A memory-bound OpenCL loop: ITERATIONS rounds over a BUFFER_MB megabyte buffer, each reading a
 * small result back with a blocking read (a host synchronization per round). Prints its own time.
 * usage: big_buffer_loop [ITERATIONS] [BUFFER_MB] */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *source =
    "__kernel void sweep(__global uint *big, uint k) { size_t i = get_global_id(0); big[i] = big[i] * 3u + k; }\n"
    "__kernel void probe(__global const uint *big, __global uint *result, uint at) { result[0] = big[at]; }\n";

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    int iterations = argc > 1 ? atoi(argv[1]) : 50;
    size_t megabytes = argc > 2 ? (size_t)atoi(argv[2]) : 64;
    size_t count = megabytes * 1024 * 1024 / sizeof(cl_uint);
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    clGetPlatformIDs(1, &platform, NULL);
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL);
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    if (clBuildProgram(program, 1, &device, "", NULL, NULL) != CL_SUCCESS) return 2;
    cl_kernel sweep = clCreateKernel(program, "sweep", &err), probe = clCreateKernel(program, "probe", &err);
    cl_mem big = clCreateBuffer(context, CL_MEM_READ_WRITE, count * sizeof(cl_uint), NULL, &err);
    cl_mem result = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(cl_uint), NULL, &err);
    cl_uint zero = 0;
    clEnqueueFillBuffer(queue, big, &zero, sizeof zero, 0, count * sizeof(cl_uint), 0, NULL, NULL);
    clSetKernelArg(sweep, 0, sizeof big, &big);
    clSetKernelArg(probe, 0, sizeof big, &big);
    clSetKernelArg(probe, 1, sizeof result, &result);
    clFinish(queue);
    double start = now_s();
    cl_uint expected = 0, got = 0;
    for (int i = 0; i < iterations; i++) {
        cl_uint k = (cl_uint)i + 1, at = (cl_uint)(i * 7919) % (cl_uint)count;
        clSetKernelArg(sweep, 1, sizeof k, &k);
        clSetKernelArg(probe, 2, sizeof at, &at);
        clEnqueueNDRangeKernel(queue, sweep, 1, NULL, &count, NULL, 0, NULL, NULL);
        clEnqueueNDRangeKernel(queue, probe, 1, NULL, (size_t[]){1}, NULL, 0, NULL, NULL);
        clEnqueueReadBuffer(queue, result, CL_TRUE, 0, sizeof got, &got, 0, NULL, NULL);
        expected = expected * 3u + k;
        if (got != expected) {
            fprintf(stderr, "round %d: %u, expected %u\n", i, got, expected);
            return 1;
        }
    }
    printf("iterations %d buffer_mb %zu seconds %.4f\n", iterations, megabytes, now_s() - start);
    return 0;
}
