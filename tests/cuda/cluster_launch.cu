// Thread-block clusters as cuDNN's, cuBLAS's and CUTLASS's Hopper kernels launch them: a kernel
// with its cluster shape compiled in; one launched with a non-portable cluster of 16 blocks, which
// its function must first be allowed (cudaFuncSetAttribute), with a scheduling policy; one taking
// more dynamic shared memory than the default. The clusters' blocks read each other's shared
// memory (distributed shared memory), so a replay that launched them otherwise would differ.
#include <cooperative_groups.h>
#include "check.h"

namespace cg = cooperative_groups;

// Each block sums its rank's slice; block r of a cluster adds the sum of block (r + 1) % size.
__device__ void neighbour_sum(const float *in, float *out) {
    extern __shared__ float partial[];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank(), size = cluster.num_blocks();
    float value = in[blockIdx.x * blockDim.x + threadIdx.x];
    partial[threadIdx.x] = value;
    cluster.sync();
    float *neighbour = cluster.map_shared_rank(partial, (rank + 1) % size);
    out[blockIdx.x * blockDim.x + threadIdx.x] = value + neighbour[threadIdx.x] * (float)size;
    cluster.sync();
}

__global__ void __cluster_dims__(2, 1, 1) compiled_pairs(const float *in, float *out) { neighbour_sum(in, out); }

__global__ void wide_clusters(const float *in, float *out) { neighbour_sum(in, out); }

// Dynamic shared memory past the default 48 KB: every thread fills and reads back its part.
__global__ void large_shared(float *out, int words) {
    extern __shared__ float scratch[];
    for (int i = threadIdx.x; i < words; i += blockDim.x) scratch[i] = (float)(i % 97) + blockIdx.x;
    __syncthreads();
    float sum = 0;
    for (int i = threadIdx.x; i < words; i += blockDim.x) sum += scratch[words - 1 - i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

static double sum_of(const float *device, int n) {
    float *host = (float *)malloc(n * sizeof(float));
    CHECK(cudaMemcpy(host, device, n * sizeof(float), cudaMemcpyDeviceToHost));
    double sum = 0;
    for (int i = 0; i < n; i++) sum += host[i];
    free(host);
    return sum;
}

int main() {
    const int threads = 128, blocks = 64, n = threads * blocks;
    float *in, *out;
    CHECK(cudaMalloc(&in, n * sizeof(float)));
    CHECK(cudaMalloc(&out, n * sizeof(float)));
    float *host = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) host[i] = (float)(i % 31);
    CHECK(cudaMemcpy(in, host, n * sizeof(float), cudaMemcpyHostToDevice));
    size_t shared = threads * sizeof(float);

    compiled_pairs<<<blocks, threads, shared>>>(in, out);
    CHECK(cudaGetLastError());
    printf("compiled clusters of 2: sum %.1f\n", sum_of(out, n));

    CHECK(cudaFuncSetAttribute(wide_clusters, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    CHECK(cudaFuncSetAttribute(wide_clusters, cudaFuncAttributeClusterSchedulingPolicyPreference, cudaClusterSchedulingPolicySpread));
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = shared;
    cudaLaunchAttribute attribute;
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = 16;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&config, wide_clusters, (const float *)in, out));
    printf("launched clusters of 16: sum %.1f\n", sum_of(out, n));

    const int words = 24 * 1024;  // 96 KB
    CHECK(cudaFuncSetAttribute(large_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, words * (int)sizeof(float)));
    large_shared<<<blocks, threads, words * sizeof(float)>>>(out, words);
    CHECK(cudaGetLastError());
    printf("96 KB of dynamic shared memory: sum %.1f\n", sum_of(out, n));
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    free(host);
    return 0;
}
