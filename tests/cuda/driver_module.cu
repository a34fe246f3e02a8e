// gpu-check-args: $IMAGES/kernels.fatbin
// A driver-API program: loads the module image named on its command line (kernels.cu built as
// PTX, cubin or fatbin) with cuModuleLoadData, launches its kernels with cuLaunchKernel and reads
// a module global. Driver functions come from cudaGetDriverEntryPointByVersion, so the program
// links without libcuda. Exits non-zero on a CUDA error or a wrong result.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

static void check_runtime(cudaError_t status, const char *what) {
    if (status != cudaSuccess) {
        fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
        exit(1);
    }
}

static void check_driver(CUresult status, const char *what) {
    if (status != CUDA_SUCCESS) {
        fprintf(stderr, "%s: CUresult %d\n", what, int(status));
        exit(1);
    }
}

template <typename Function> static Function *driver_function(const char *name) {
    void *function = nullptr;
    cudaDriverEntryPointQueryResult found;
    check_runtime(cudaGetDriverEntryPointByVersion(name, &function, 13000, cudaEnableDefault, &found), name);
    if (found != cudaDriverEntryPointSuccess) {
        fprintf(stderr, "driver has no %s\n", name);
        exit(1);
    }
    return reinterpret_cast<Function *>(function);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s MODULE_IMAGE (kernels.ptx, .cubin or .fatbin)\n", argv[0]);
        return 2;
    }
    std::ifstream file(argv[1], std::ios::binary);
    if (!file) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 2;
    }
    std::vector<char> image((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    image.push_back('\0');  // PTX is loaded as NUL-terminated text.

    // The runtime makes the device's primary context current for the driver calls below.
    check_runtime(cudaFree(nullptr), "initialise the runtime");
    auto load = driver_function<decltype(cuModuleLoadData)>("cuModuleLoadData");
    auto get_function = driver_function<decltype(cuModuleGetFunction)>("cuModuleGetFunction");
    auto get_global = driver_function<decltype(cuModuleGetGlobal)>("cuModuleGetGlobal");
    auto launch = driver_function<decltype(cuLaunchKernel)>("cuLaunchKernel");
    auto unload = driver_function<decltype(cuModuleUnload)>("cuModuleUnload");

    CUmodule module;
    CUfunction add, scale, count_positive;
    check_driver(load(&module, image.data()), "cuModuleLoadData");
    check_driver(get_function(&add, module, "add"), "add");
    check_driver(get_function(&scale, module, "scale"), "scale");
    check_driver(get_function(&count_positive, module, "count_positive"), "count_positive");
    CUdeviceptr positives;
    size_t positives_size;
    check_driver(get_global(&positives, &positives_size, module, "positives"), "positives");

    unsigned n = 1000;
    const size_t bytes = n * sizeof(float);
    std::vector<float> a(n), b(n), sum(n);
    for (unsigned i = 0; i < n; i++) {
        a[i] = float(i) - 500.0f;
        b[i] = 0.5f;
    }
    float *da, *db, *dsum;
    check_runtime(cudaMalloc(&da, bytes), "cudaMalloc");
    check_runtime(cudaMalloc(&db, bytes), "cudaMalloc");
    check_runtime(cudaMalloc(&dsum, bytes), "cudaMalloc");
    check_runtime(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice), "upload a");
    check_runtime(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice), "upload b");
    check_runtime(cudaMemset(reinterpret_cast<void *>(positives), 0, positives_size), "clear positives");

    float factor = 2.0f;
    void *add_args[] = {&da, &db, &dsum, &n};
    void *scale_args[] = {&dsum, &factor, &n};
    void *count_args[] = {&dsum, &n};
    const unsigned threads = 128, blocks = (n + threads - 1) / threads;
    check_driver(launch(add, blocks, 1, 1, threads, 1, 1, 0, nullptr, add_args, nullptr), "launch add");
    check_driver(launch(scale, blocks, 1, 1, threads, 1, 1, 0, nullptr, scale_args, nullptr), "launch scale");
    check_driver(launch(count_positive, blocks, 1, 1, threads, 1, 1, 0, nullptr, count_args, nullptr),
                 "launch count_positive");
    unsigned positive_count;
    check_runtime(cudaMemcpy(sum.data(), dsum, bytes, cudaMemcpyDeviceToHost), "download sum");
    check_runtime(cudaMemcpy(&positive_count, reinterpret_cast<void *>(positives), sizeof positive_count,
                             cudaMemcpyDeviceToHost),
                  "download positives");

    unsigned expected_positives = 0;
    for (unsigned i = 0; i < n; i++) {
        float expected = 2.0f * (a[i] + b[i]);
        expected_positives += expected > 0.0f;
        if (sum[i] != expected) {
            fprintf(stderr, "sum[%u] = %f, expected %f\n", i, sum[i], expected);
            return 1;
        }
    }
    if (positive_count != expected_positives) {
        fprintf(stderr, "positives = %u, expected %u\n", positive_count, expected_positives);
        return 1;
    }
    check_driver(unload(module), "cuModuleUnload");
    check_runtime(cudaFree(da), "cudaFree");
    check_runtime(cudaFree(db), "cudaFree");
    check_runtime(cudaFree(dsum), "cudaFree");
    printf("driver_module %s: %u elements correct, %u positive\n", argv[1], n, positive_count);
    return 0;
}
