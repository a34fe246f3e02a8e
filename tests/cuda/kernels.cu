// Kernels for driver-API programs, built with -cubin, -fatbin and -ptx and loaded with
// cuModuleLoadData. extern "C" keeps their names unmangled for cuModuleGetFunction.

extern "C" __global__ void scale(float *data, float factor, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}

extern "C" __global__ void add(const float *a, const float *b, float *sum, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) sum[i] = a[i] + b[i];
}

// A global the host reads with cuModuleGetGlobal: how many elements `count_positive` saw above 0.
__device__ unsigned positives;

extern "C" __global__ void count_positive(const float *data, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && data[i] > 0.0f) atomicAdd(&positives, 1u);
}
