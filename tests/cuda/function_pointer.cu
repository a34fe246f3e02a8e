// What NVIDIA's simpleCUFFT_callback does: the program reads device function pointers from
// `__device__` variables (cudaMemcpyFromSymbol) and hands them back to kernels, by value, in a
// structure, and in a table in device memory. They point into the loaded module, which the
// replay's driver loads elsewhere: the replay must pass its own module's addresses.
#include <vector>
#include "check.h"

typedef float (*Operation)(float);

__device__ float twice(float x) { return 2.0f * x; }
__device__ float square(float x) { return x * x; }
__device__ Operation twice_pointer = twice;
__device__ Operation square_pointer = square;

struct Step {
    Operation operation;
    float offset;
};

__global__ void apply(Operation operation, float *data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = operation(data[i]);
}

__global__ void apply_step(Step step, float *data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = step.operation(data[i]) + step.offset;
}

__global__ void apply_table(const Operation *table, float *data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = table[i % 2](data[i]);
}

int main() {
    const int n = 1 << 16;
    Operation operations[2];
    CHECK(cudaMemcpyFromSymbol(&operations[0], twice_pointer, sizeof(Operation)));
    CHECK(cudaMemcpyFromSymbol(&operations[1], square_pointer, sizeof(Operation)));
    std::vector<float> host(n);
    for (int i = 0; i < n; i++) host[i] = float(i % 7);
    float *data;
    Operation *table;
    CHECK(cudaMalloc(&data, n * sizeof(float)));
    CHECK(cudaMalloc(&table, sizeof operations));
    CHECK(cudaMemcpy(data, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(table, operations, sizeof operations, cudaMemcpyHostToDevice));
    const int blocks = (n + 255) / 256;
    apply<<<blocks, 256>>>(operations[0], data, n);
    apply_step<<<blocks, 256>>>(Step{operations[1], 1.0f}, data, n);
    apply_table<<<blocks, 256>>>(table, data, n);
    CHECK(cudaMemcpy(host.data(), data, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        float x = 2.0f * float(i % 7);
        x = x * x + 1.0f;
        x = i % 2 ? x * x : 2.0f * x;
        EXPECT(host[i] == x, "element %d: %f, not %f", i, host[i], x);
    }
    printf("function_pointer: %d elements through three device function pointers\n", n);
    return 0;
}
