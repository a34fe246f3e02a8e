// Two streams fork and join through events: each stream adds one half of two vectors, the
// second half waits for the first stream's upload, and a final kernel on the first stream scales
// the whole sum once both halves are done. Exits non-zero on a CUDA error or a wrong result.
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                     \
    do {                                                                                \
        cudaError_t status = (call);                                                    \
        if (status != cudaSuccess) {                                                    \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(status)); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

__global__ void add(const float *a, const float *b, float *sum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) sum[i] = a[i] + b[i];
}

__global__ void scale(float *data, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}

int main() {
    const int n = 1 << 16, half = n / 2, threads = 256;
    const size_t bytes = n * sizeof(float);
    std::vector<float> a(n), b(n), sum(n);
    for (int i = 0; i < n; i++) {
        a[i] = float(i);
        b[i] = float(2 * i);
    }
    float *da, *db, *dsum;
    CHECK(cudaMalloc(&da, bytes));
    CHECK(cudaMalloc(&db, bytes));
    CHECK(cudaMalloc(&dsum, bytes));

    cudaStream_t first, second;
    cudaEvent_t uploaded, second_done;
    CHECK(cudaStreamCreateWithFlags(&first, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&second, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&uploaded, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&second_done, cudaEventDisableTiming));

    // Fork: the first stream uploads everything, the second waits for it.
    CHECK(cudaMemcpyAsync(da, a.data(), bytes, cudaMemcpyHostToDevice, first));
    CHECK(cudaMemcpyAsync(db, b.data(), bytes, cudaMemcpyHostToDevice, first));
    CHECK(cudaEventRecord(uploaded, first));
    CHECK(cudaStreamWaitEvent(second, uploaded, 0));
    add<<<(half + threads - 1) / threads, threads, 0, first>>>(da, db, dsum, half);
    add<<<(half + threads - 1) / threads, threads, 0, second>>>(da + half, db + half, dsum + half, half);
    CHECK(cudaGetLastError());
    // Join: the scale on the first stream waits for the second stream's half.
    CHECK(cudaEventRecord(second_done, second));
    CHECK(cudaStreamWaitEvent(first, second_done, 0));
    scale<<<(n + threads - 1) / threads, threads, 0, first>>>(dsum, 0.5f, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(sum.data(), dsum, bytes, cudaMemcpyDeviceToHost, first));
    CHECK(cudaStreamSynchronize(first));

    for (int i = 0; i < n; i++) {
        float expected = 0.5f * (a[i] + b[i]);
        if (sum[i] != expected) {
            fprintf(stderr, "sum[%d] = %f, expected %f\n", i, sum[i], expected);
            return 1;
        }
    }
    CHECK(cudaEventDestroy(uploaded));
    CHECK(cudaEventDestroy(second_done));
    CHECK(cudaStreamDestroy(first));
    CHECK(cudaStreamDestroy(second));
    CHECK(cudaFree(da));
    CHECK(cudaFree(db));
    CHECK(cudaFree(dsum));
    printf("vector_add_streams: %d elements correct\n", n);
    return 0;
}
