/* Lists every platform and device the loader offers, with the infos a program chooses by, then runs
 * one kernel on every platform's first device. Under the shim it must print the same: with several
 * ICDs registered, each platform is its own driver's (an interposer that hands the loader one
 * driver's functions for all of them lists a platform twice, or drops one). */
#include "common.h"

static const char *source =
    "__kernel void square_plus(__global int *out, int add) {\n"
    "    int i = (int)get_global_id(0); out[i] = i * i + add; }\n";

static void print_platform_info(cl_platform_id platform, cl_platform_info param, const char *what) {
    char text[4096] = {0};
    CHECK(clGetPlatformInfo(platform, param, sizeof text - 1, text, NULL));
    printf("  %s: %s\n", what, text);
}

static void print_device_info(cl_device_id device, cl_device_info param, const char *what) {
    char text[8192] = {0};
    CHECK(clGetDeviceInfo(device, param, sizeof text - 1, text, NULL));
    printf("    %s: %s\n", what, text);
}

static long run_on(cl_platform_id platform, cl_device_id device, int add) {
    test_env env = {platform, device, CHECKED(clCreateContext(NULL, 1, &device, NULL, NULL, ERR))};
    cl_command_queue queue = open_queue(&env, 0);
    cl_program program = build_program(&env, source, "");
    cl_kernel kernel = make_kernel(program, "square_plus");
    int got[256];
    cl_mem out = make_buffer(&env, CL_MEM_WRITE_ONLY, sizeof got, NULL);
    CHECK(clSetKernelArg(kernel, 0, sizeof out, &out));
    CHECK(clSetKernelArg(kernel, 1, sizeof add, &add));
    size_t global = 256;
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    long sum = 0;
    for (int i = 0; i < 256; i++) sum += got[i];
    clReleaseMemObject(out);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(env.context);
    return sum;
}

int main(void) {
    cl_platform_id platforms[16];
    cl_uint count = 0;
    CHECK(clGetPlatformIDs(16, platforms, &count));
    printf("%u platforms\n", count);
    for (cl_uint p = 0; p < count && p < 16; p++) {
        printf("platform %u\n", p);
        print_platform_info(platforms[p], CL_PLATFORM_NAME, "name");
        print_platform_info(platforms[p], CL_PLATFORM_VENDOR, "vendor");
        print_platform_info(platforms[p], CL_PLATFORM_VERSION, "version");
        print_platform_info(platforms[p], CL_PLATFORM_EXTENSIONS, "extensions");
        cl_device_id devices[16];
        cl_uint devices_count = 0;
        CHECK(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 16, devices, &devices_count));
        for (cl_uint d = 0; d < devices_count && d < 16; d++) {
            printf("  device %u\n", d);
            print_device_info(devices[d], CL_DEVICE_NAME, "name");
            print_device_info(devices[d], CL_DEVICE_VERSION, "version");
            print_device_info(devices[d], CL_DRIVER_VERSION, "driver");
            print_device_info(devices[d], CL_DEVICE_EXTENSIONS, "extensions");
            cl_platform_id owner = NULL;
            CHECK(clGetDeviceInfo(devices[d], CL_DEVICE_PLATFORM, sizeof owner, &owner, NULL));
            printf("    belongs to its platform: %s\n", owner == platforms[p] ? "yes" : "no");
        }
        printf("  sum on device 0: %ld\n", run_on(platforms[p], devices[0], (int)p + 1));
    }
    return 0;
}
