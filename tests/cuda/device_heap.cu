// What NVIDIA's newdelete does: the program raises the device heap (cudaLimitMallocHeapSize) and
// kernels allocate more than the default 8 MB from it. The replay must set the same limit, or
// the kernel's malloc returns null and the results differ.
#include "check.h"

__global__ void fill_from_heap(unsigned *out, size_t words) {
    unsigned *scratch = (unsigned *)malloc(words * sizeof(unsigned));
    if (!scratch) {
        out[0] = 0xdead;
        return;
    }
    for (size_t i = 0; i < words; i++) scratch[i] = (unsigned)(i * 2654435761u);
    unsigned sum = 0;
    for (size_t i = 0; i < words; i += 4096) sum += scratch[i];
    out[0] = sum;
    free(scratch);
}

int main() {
    const size_t words = (48u << 20) / sizeof(unsigned);
    CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 96u << 20));
    unsigned *out;
    CHECK(cudaMalloc(&out, sizeof(unsigned)));
    fill_from_heap<<<1, 1>>>(out, words);
    unsigned got = 0;
    CHECK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
    unsigned want = 0;
    for (size_t i = 0; i < words; i += 4096) want += (unsigned)(i * 2654435761u);
    EXPECT(got == want, "the heap gave %x, not %x", got, want);
    printf("device_heap: 48 MB from a 96 MB device heap, sum %u\n", got);
    return 0;
}
