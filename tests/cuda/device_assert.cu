// What NVIDIA's simpleAssert does: a kernel asserts on the device for some of its threads, and
// the synchronization after it fails with cudaErrorAssert, which the program expects. A window
// before it succeeded. The replay reproduces the failure in the same segment and stops there.
#include <cassert>
#include "check.h"

__global__ void scale(int *data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= 2;
}

__global__ void checked(const int *data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) assert(data[i] < 2 * n - 2);
}

int main() {
    const int n = 1024;
    int *data, host[n];
    for (int i = 0; i < n; i++) host[i] = i;
    CHECK(cudaMalloc(&data, sizeof host));
    CHECK(cudaMemcpy(data, host, sizeof host, cudaMemcpyHostToDevice));
    scale<<<n / 256, 256>>>(data, n);
    CHECK(cudaMemcpy(host, data, sizeof host, cudaMemcpyDeviceToHost));
    checked<<<n / 256, 256>>>(data, n);
    cudaError_t status = cudaDeviceSynchronize();
    EXPECT(status == cudaErrorAssert, "the synchronization returned %s, not cudaErrorAssert", cudaGetErrorName(status));
    printf("device_assert: host[%d] = %d; the asserting kernel's synchronization returned %s\n", n - 1, host[n - 1], cudaGetErrorName(status));
    return 0;
}
