// What NVIDIA's batchCUBLAS does: each test allocates its matrices anew, and the driver hands
// back the addresses the previous test freed; an array of pointers to them goes to the device,
// and a batched kernel writes through it. The replay places such objects apart, so a recorded
// address in data lies in several of them: the one meant is the one in use then.
#include <vector>
#include "check.h"

__global__ void scale_each(float *const *matrices, int n, float factor) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float *matrix = matrices[blockIdx.y];
    if (i < n) matrix[i] = matrix[i] * factor + blockIdx.y;
}

int main() {
    const int count = 10;
    int reused = 0;
    std::vector<float *> before;
    for (int round = 0; round < 4; round++) {
        // Sizes alternate, as single and double precision tests do.
        const int n = (round % 2 ? 2 : 1) * 16384;
        std::vector<float *> matrices(count);
        std::vector<float> host(n);
        for (int m = 0; m < count; m++) {
            CHECK(cudaMalloc(&matrices[m], n * sizeof(float)));
            for (int i = 0; i < n; i++) host[i] = float((i + m * 7 + round * 13) % 101);
            CHECK(cudaMemcpy(matrices[m], host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
            for (float *old : before) reused += old == matrices[m];
        }
        float **array;
        CHECK(cudaMalloc(&array, count * sizeof(float *)));
        CHECK(cudaMemcpy(array, matrices.data(), count * sizeof(float *), cudaMemcpyHostToDevice));
        scale_each<<<dim3((n + 255) / 256, count), 256>>>(array, n, 2.0f);
        for (int m = 0; m < count; m++) {
            CHECK(cudaMemcpy(host.data(), matrices[m], n * sizeof(float), cudaMemcpyDeviceToHost));
            for (int i = 0; i < n; i++) {
                float want = float((i + m * 7 + round * 13) % 101) * 2.0f + m;
                EXPECT(host[i] == want, "round %d, matrix %d, element %d: %f, not %f", round, m, i, host[i], want);
            }
        }
        before = matrices;
        for (float *matrix : matrices) CHECK(cudaFree(matrix));
        CHECK(cudaFree(array));
    }
    EXPECT(reused > 0, "the driver gave no freed address back: nothing here is reused");
    printf("reused_addresses: 4 rounds of %d matrices, every element as computed\n", count);
    return 0;
}
