// gpu-check-flags: -lcuda
// gpu-check-args: $IMAGES/kernels.ptx
// A driver-API program: loads kernels.ptx (built by the check with nvcc -ptx, path in argv[1])
// with cuModuleLoadData, launches `scale` and `add` with cuLaunchKernel, uses 16- and 32-bit memsets.
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define DRV(call)                                                         \
    do {                                                                  \
        CUresult r_ = (call);                                             \
        if (r_ != CUDA_SUCCESS) {                                         \
            const char *name_ = "?";                                      \
            cuGetErrorName(r_, &name_);                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, name_); \
            exit(1);                                                      \
        }                                                                 \
    } while (0)

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: driver_ptx KERNELS.ptx\n");
        return 2;
    }
    std::ifstream file(argv[1]);
    std::stringstream text;
    text << file.rdbuf();
    std::string ptx = text.str();
    DRV(cuInit(0));
    CUdevice device;
    DRV(cuDeviceGet(&device, 0));
    CUcontext context;
    DRV(cuDevicePrimaryCtxRetain(&context, device));
    DRV(cuCtxSetCurrent(context));
    CUmodule module;
    DRV(cuModuleLoadData(&module, ptx.c_str()));
    CUfunction scale, add;
    DRV(cuModuleGetFunction(&scale, module, "scale"));
    DRV(cuModuleGetFunction(&add, module, "add"));

    unsigned n = 1 << 12;
    CUdeviceptr a, b, sum;
    DRV(cuMemAlloc(&a, n * 4));
    DRV(cuMemAlloc(&b, n * 4));
    DRV(cuMemAlloc(&sum, n * 4));
    std::vector<float> host(n, 1.5f);
    DRV(cuMemcpyHtoD(a, host.data(), n * 4));
    DRV(cuMemsetD32(b, 0x40000000u, n));  // 2.0f
    CUstream stream;
    DRV(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    float factor = 4.0f;
    void *scale_args[] = {&a, &factor, &n};
    DRV(cuLaunchKernel(scale, n / 128, 1, 1, 128, 1, 1, 0, stream, scale_args, nullptr));
    void *add_args[] = {&a, &b, &sum, &n};
    DRV(cuLaunchKernel(add, n / 128, 1, 1, 128, 1, 1, 0, stream, add_args, nullptr));
    DRV(cuMemsetD16Async(b, 0, n * 2, stream));
    DRV(cuMemcpyDtoHAsync(host.data(), sum, n * 4, stream));
    DRV(cuStreamSynchronize(stream));
    for (float v : host)
        if (v != 8.0f) {
            fprintf(stderr, "sum = %f, expected 8\n", v);
            return 1;
        }
    printf("driver_ptx: sum = %.1f\n", host[0]);
    return 0;
}
