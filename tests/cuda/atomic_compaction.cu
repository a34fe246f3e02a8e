// What NVIDIA's warpAggregatedAtomicsCG does: a kernel keeps the positive elements of an array,
// each at the slot an atomic counter hands out, so the output holds the same values in an order
// that changes from run to run. The replay's order is another outcome of that race: its values
// are compared, not their order (`reordered_bytes`).
#include <vector>
#include "check.h"

__global__ void keep_positive(const int *in, int n, int *out, int *count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] > 0) out[atomicAdd(count, 1)] = in[i];
}

int main() {
    const int n = 1 << 22;
    std::vector<int> host(n);
    long long want_sum = 0;
    int want_count = 0;
    for (int i = 0; i < n; i++) {
        host[i] = (i * 7919) % 2001 - 1000;
        if (host[i] > 0) want_sum += host[i], want_count++;
    }
    int *in, *out, *count;
    CHECK(cudaMalloc(&in, n * sizeof(int)));
    CHECK(cudaMalloc(&out, n * sizeof(int)));
    CHECK(cudaMalloc(&count, sizeof(int)));
    CHECK(cudaMemcpy(in, host.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(out, 0, n * sizeof(int)));
    CHECK(cudaMemset(count, 0, sizeof(int)));
    keep_positive<<<(n + 255) / 256, 256>>>(in, n, out, count);
    int got_count = 0;
    CHECK(cudaMemcpy(&got_count, count, sizeof got_count, cudaMemcpyDeviceToHost));
    std::vector<int> kept(got_count);
    CHECK(cudaMemcpy(kept.data(), out, got_count * sizeof(int), cudaMemcpyDeviceToHost));
    long long got_sum = 0;
    for (int value : kept) got_sum += value;
    EXPECT(got_count == want_count && got_sum == want_sum, "kept %d values summing to %lld, not %d and %lld", got_count, got_sum, want_count, want_sum);
    printf("atomic_compaction: %d positive values kept\n", got_count);
    return 0;
}
