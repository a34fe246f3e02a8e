// gpu-check-recordings: 20
// Worker threads, each with its own stream: each copies its input in, runs kernels, copies the
// result back into pinned memory and adds a stream callback that checks the result on the host;
// then it synchronizes its stream. Windows follow each thread's synchronizations (issue 11: one
// 400 KB state differed).
#include <atomic>
#include <thread>
#include <vector>
#include "check.h"

__global__ void scale(float *x, int n, float by) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * by + 1.0f;
}

struct Work {
    float *host;
    int n;
    float by;
    int rounds;
    std::atomic<int> *checked;
};

static void CUDART_CB check_result(cudaStream_t, cudaError_t status, void *data) {
    Work *work = static_cast<Work *>(data);
    bool right = status == cudaSuccess;
    for (int i = 0; i < work->n && right; i += 97) {
        float want = static_cast<float>(i % 13);
        for (int r = 0; r < work->rounds; r++) want = want * work->by + 1.0f;
        right = work->host[i] == want;
    }
    if (right) ++*work->checked;
}

int main() {
    const int threads = 4, n = 100 * 1024, rounds = 8;
    std::atomic<int> checked{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; t++) {
        workers.emplace_back([&, t] {
            cudaStream_t stream;
            CHECK(cudaStreamCreate(&stream));
            Work work{nullptr, n, 1.0f + t, rounds, &checked};
            float *device;
            CHECK(cudaMallocHost(&work.host, n * sizeof(float)));
            CHECK(cudaMalloc(&device, n * sizeof(float)));
            for (int i = 0; i < n; i++) work.host[i] = static_cast<float>(i % 13);
            CHECK(cudaMemcpyAsync(device, work.host, n * sizeof(float), cudaMemcpyHostToDevice, stream));
            for (int r = 0; r < rounds; r++) scale<<<(n + 255) / 256, 256, 0, stream>>>(device, n, work.by);
            CHECK(cudaMemcpyAsync(work.host, device, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
            CHECK(cudaStreamAddCallback(stream, check_result, &work, 0));
            CHECK(cudaStreamSynchronize(stream));
            CHECK(cudaFree(device));
            CHECK(cudaFreeHost(work.host));
            CHECK(cudaStreamDestroy(stream));
        });
    }
    for (auto &worker : workers) worker.join();
    EXPECT(checked == threads, "%d of %d threads' callbacks found their results right", checked.load(), threads);
    printf("worker_threads: %d threads, each result checked by its stream callback\n", threads);
    return 0;
}
