// gpu-check-env: REPRISE_HOST_WRITES=watch
// The host writes pinned and managed memory directly while kernels use it (as NVIDIA's
// p2pBandwidthLatencyTest and cudaGraphsPerfScaling do): a kernel waits on a flag in pinned
// memory that the host sets after launching it, and between windows the host rewrites a few
// pages of a large pinned input. The replay must see the flag set (no timeout) and the new
// input, and the shim keeps only the pages the host wrote (REPRISE_HOST_WRITES=watch). Libraries
// (NPP) register a local variable as pinned memory to copy a count into: its page is part of the
// stack, where the kernel pushes signal frames, and protecting it ended 1 run in 4 of NVIDIA's
// watershedSegmentationNPP sample.
#include "check.h"
#include <alloca.h>

// Waits until the host sets *flag, or about a second of clocks; notes a timeout.
__global__ void wait_for_host(volatile int *flag, int *timed_out) {
    long long start = clock64();
    while (*flag == 0) {
        if (clock64() - start > 2000000000LL) {
            *timed_out = 1;
            return;
        }
    }
    *timed_out = 0;
}

__global__ void sum_pages(const int *input, size_t pages, int *sums) {
    size_t page = blockIdx.x;
    int sum = 0;
    for (size_t i = threadIdx.x; i < 1024; i += blockDim.x) sum += input[page * 1024 + i];
    atomicAdd(&sums[page], sum);
}

// A count copied into a registered local, `shift` bytes further down the stack each call.
static int __attribute__((noinline)) count_on_the_stack(const int *sums, size_t shift, cudaStream_t stream) {
    volatile char *pad = (volatile char *)alloca(shift + 1);
    pad[0] = 0;
    int count = -1;
    CHECK(cudaHostRegister(&count, sizeof count, cudaHostRegisterDefault));
    CHECK(cudaMemcpyAsync(&count, sums, sizeof count, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaHostUnregister(&count));
    return count;
}

int main() {
    const size_t pages = 256;
    int *flag, *timed_out, *input, *sums, *managed;
    CHECK(cudaHostAlloc(&flag, 4096, cudaHostAllocDefault));
    CHECK(cudaMallocHost(&timed_out, sizeof(int)));
    CHECK(cudaMallocHost(&input, pages * 4096));
    CHECK(cudaMalloc(&sums, pages * sizeof(int)));
    CHECK(cudaMallocManaged(&managed, 4096));
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (size_t i = 0; i < pages * 1024; i++) input[i] = 1;
    for (int i = 0; i < 1024; i++) managed[i] = 0;
    int host_sums[pages];
    for (int round = 0; round < 4; round++) {
        // The latch: the kernel starts, then the host releases it.
        *flag = 0;
        wait_for_host<<<1, 1, 0, stream>>>(flag, timed_out);
        *flag = 1;
        CHECK(cudaStreamSynchronize(stream));
        EXPECT(*timed_out == 0, "round %d: the kernel missed the host's flag", round);
        // A few pages of the input change between windows; the rest stays.
        for (int i = 0; i < 1024; i++) input[(round * 7 % pages) * 1024 + i] = round + 2;
        managed[round] = round * 10;
        CHECK(cudaMemsetAsync(sums, 0, pages * sizeof(int), stream));
        sum_pages<<<pages, 128, 0, stream>>>(input, pages, sums);
        sum_pages<<<1, 128, 0, stream>>>(managed, 1, sums);
        CHECK(cudaMemcpyAsync(host_sums, sums, sizeof host_sums, cudaMemcpyDeviceToHost, stream));
        CHECK(cudaStreamSynchronize(stream));
        // Page 0 was rewritten with 2s in round 0; the managed page holds 0, 10, ..., 10 * round.
        int want = 1024 * 2 + 5 * round * (round + 1);
        EXPECT(host_sums[0] == want, "round %d: sum of page 0 is %d, not %d", round, host_sums[0], want);
    }
    for (size_t shift = 0; shift < 4096; shift += 128) {
        int count = count_on_the_stack(sums, shift, stream);
        EXPECT(count == host_sums[0], "a count on the stack is %d, not %d", count, host_sums[0]);
    }
    printf("host_writes: page sums %d %d %d, no timeout\n", host_sums[0], host_sums[7], host_sums[14]);
    return 0;
}
