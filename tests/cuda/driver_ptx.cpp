// gpu-check-flags: -lcuda
// gpu-check-args: $IMAGES/kernels.ptx
// A driver-API program: loads kernels.ptx (built by the check with nvcc -ptx, path in argv[1])
// with cuModuleLoadData, launches `scale` and `add` with cuLaunchKernel, uses 16- and 32-bit memsets.
#include "check_driver.h"
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>


int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: driver_ptx KERNELS.ptx\n");
        return 2;
    }
    std::ifstream file(argv[1]);
    std::stringstream text;
    text << file.rdbuf();
    std::string ptx = text.str();
    CHECK_DRIVER(cuInit(0));
    CUdevice device;
    CHECK_DRIVER(cuDeviceGet(&device, 0));
    CUcontext context;
    CHECK_DRIVER(cuDevicePrimaryCtxRetain(&context, device));
    CHECK_DRIVER(cuCtxSetCurrent(context));
    CUmodule module;
    CHECK_DRIVER(cuModuleLoadData(&module, ptx.c_str()));
    CUfunction scale, add;
    CHECK_DRIVER(cuModuleGetFunction(&scale, module, "scale"));
    CHECK_DRIVER(cuModuleGetFunction(&add, module, "add"));

    unsigned n = 1 << 12;
    CUdeviceptr a, b, sum;
    CHECK_DRIVER(cuMemAlloc(&a, n * 4));
    CHECK_DRIVER(cuMemAlloc(&b, n * 4));
    CHECK_DRIVER(cuMemAlloc(&sum, n * 4));
    std::vector<float> host(n, 1.5f);
    CHECK_DRIVER(cuMemcpyHtoD(a, host.data(), n * 4));
    CHECK_DRIVER(cuMemsetD32(b, 0x40000000u, n));  // 2.0f
    CUstream stream;
    CHECK_DRIVER(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    float factor = 4.0f;
    void *scale_args[] = {&a, &factor, &n};
    CHECK_DRIVER(cuLaunchKernel(scale, n / 128, 1, 1, 128, 1, 1, 0, stream, scale_args, nullptr));
    void *add_args[] = {&a, &b, &sum, &n};
    CHECK_DRIVER(cuLaunchKernel(add, n / 128, 1, 1, 128, 1, 1, 0, stream, add_args, nullptr));
    CHECK_DRIVER(cuMemsetD16Async(b, 0, n * 2, stream));
    CHECK_DRIVER(cuMemcpyDtoHAsync(host.data(), sum, n * 4, stream));
    CHECK_DRIVER(cuStreamSynchronize(stream));
    for (float v : host)
        if (v != 8.0f) {
            fprintf(stderr, "sum = %f, expected 8\n", v);
            return 1;
        }
    printf("driver_ptx: sum = %.1f\n", host[0]);
    return 0;
}
