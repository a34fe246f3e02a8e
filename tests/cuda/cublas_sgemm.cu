// gpu-check-flags: -lcublas
// One cuBLAS SGEMM: C = A * B with small integer-valued matrices, so the result is exact.
#include "check.h"
#include <cublas_v2.h>
#include <vector>

int main() {
    const int n = 64;
    std::vector<float> a(n * n), b(n * n), c(n * n);
    for (int i = 0; i < n * n; i++) {
        a[i] = (float)(i % 7);
        b[i] = (float)(i % 5);
    }
    float *da, *db, *dc;
    CHECK(cudaMalloc(&da, n * n * 4));
    CHECK(cudaMalloc(&db, n * n * 4));
    CHECK(cudaMalloc(&dc, n * n * 4));
    CHECK(cudaMemcpy(da, a.data(), n * n * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b.data(), n * n * 4, cudaMemcpyHostToDevice));
    cublasHandle_t handle;
    EXPECT(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
    float one = 1.0f, zero = 0.0f;
    EXPECT(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, da, n, db, n, &zero, dc, n) == CUBLAS_STATUS_SUCCESS,
           "cublasSgemm");
    CHECK(cudaMemcpy(c.data(), dc, n * n * 4, cudaMemcpyDeviceToHost));
    double checksum = 0;
    for (int col = 0; col < n; col++)
        for (int row = 0; row < n; row++) {
            float want = 0;
            for (int k = 0; k < n; k++) want += a[k * n + row] * b[col * n + k];
            EXPECT(c[col * n + row] == want, "c[%d,%d] = %f, expected %f", row, col, c[col * n + row], want);
            checksum += want;
        }
    cublasDestroy(handle);
    printf("cublas_sgemm: checksum %.0f\n", checksum);
    return 0;
}
