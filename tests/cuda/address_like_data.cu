// Data that looks like addresses. NVIDIA's mergeSort sample sorts 32-bit keys; two keys near
// 0x7fd0 read as one 64-bit word can lie inside one of the program's own buffers, and a replay
// that placed the buffers elsewhere rewrote such words as if they were pointers, so the sort came
// out different (now and then: it depended on where the replay's allocations landed). Here the
// keys are built to form words inside their own buffer, and a kernel computes on them as keys:
// the replay must give it the keys the program copied. Buffers go where the program had them,
// so no word needs rewriting.
#include <vector>
#include "check.h"

__global__ void sum_keys(const unsigned *keys, size_t n, unsigned long long *sum) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(sum, (unsigned long long)keys[i]);
}

int main() {
    const size_t n = 1 << 20;
    unsigned *keys;
    unsigned long long *sum;
    CHECK(cudaMalloc(&keys, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&sum, sizeof(unsigned long long)));
    // Pairs (low, high) of the addresses 16 bytes apart through the buffer: a progression of
    // words inside it, as a pointer array would be.
    unsigned long long base = (unsigned long long)keys;
    std::vector<unsigned> host(n);
    unsigned long long want = 0;
    for (size_t i = 0; i < n; i += 2) {
        unsigned long long word = base + 16 * (i / 2 % (n / 8));
        host[i] = (unsigned)word;
        host[i + 1] = (unsigned)(word >> 32);
        want += host[i] + (unsigned long long)host[i + 1];
    }
    CHECK(cudaMemcpy(keys, host.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(sum, 0, sizeof(unsigned long long)));
    sum_keys<<<(n + 255) / 256, 256>>>(keys, n, sum);
    unsigned long long got = 0;
    CHECK(cudaMemcpy(&got, sum, sizeof got, cudaMemcpyDeviceToHost));
    EXPECT(got == want, "the keys sum to %llu, not %llu", got, want);
    printf("address_like_data: %zu keys summed as the host did\n", n);
    return 0;
}
