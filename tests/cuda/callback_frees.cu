// gpu-check-recordings: 20
// simpleCallback's pattern, which failed under load: worker threads each submit a copy in, a
// kernel and a copy back into pinned memory on a stream of their own, add a stream callback and
// end without waiting. Each callback starts a thread that checks the result, frees the memory
// (an implicit wait for the device) and destroys the stream, while other workers may still be
// submitting. Their copies must not close with the frees (their data had not arrived), and no
// destroyed stream may be waited for (the driver crashed).
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>
#include "check.h"

__global__ void add_one(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1;
}

const int WORKERS = 12;
const int N = 1 << 18;

struct Work {
    int id;
    int *host;
    int *device;
    cudaStream_t stream;
    // Set once the worker's last call on the stream returned: the stream is destroyed after it.
    std::atomic<bool> submitted{false};
};

static std::atomic<int> right{0}, finished{0};
static std::mutex finishers_lock;
static std::vector<std::thread> finishers;

static void finish(Work *work) {
    while (!work->submitted) std::this_thread::yield();
    bool ok = true;
    for (int i = 0; i < N && ok; i += 101) ok = work->host[i] == work->id + i + 1;
    right += ok;
    CHECK(cudaFree(work->device));
    CHECK(cudaFreeHost(work->host));
    CHECK(cudaStreamDestroy(work->stream));
    ++finished;
}

static void CUDART_CB done(cudaStream_t, cudaError_t status, void *data) {
    EXPECT(status == cudaSuccess, "callback status %d", status);
    std::lock_guard<std::mutex> hold(finishers_lock);
    finishers.emplace_back(finish, static_cast<Work *>(data));
}

static void submit(Work *work) {
    CHECK(cudaStreamCreate(&work->stream));
    CHECK(cudaMalloc(&work->device, N * sizeof(int)));
    CHECK(cudaHostAlloc(&work->host, N * sizeof(int), cudaHostAllocPortable));
    for (int i = 0; i < N; i++) work->host[i] = work->id + i;
    CHECK(cudaMemcpyAsync(work->device, work->host, N * sizeof(int), cudaMemcpyHostToDevice, work->stream));
    add_one<<<(N + 255) / 256, 256, 0, work->stream>>>(work->device, N);
    CHECK(cudaMemcpyAsync(work->host, work->device, N * sizeof(int), cudaMemcpyDeviceToHost, work->stream));
    CHECK(cudaStreamAddCallback(work->stream, done, work, 0));
    work->submitted = true;
}

int main() {
    std::vector<Work> works(WORKERS);
    std::vector<std::thread> submitters;
    for (int w = 0; w < WORKERS; w++) {
        works[w].id = w;
        submitters.emplace_back(submit, &works[w]);
    }
    for (auto &t : submitters) t.join();
    double deadline = seconds_now() + 60;
    while (finished < WORKERS) {
        EXPECT(seconds_now() < deadline, "%d of %d callbacks' threads finished in 60 s", finished.load(), WORKERS);
        std::this_thread::yield();
    }
    // Every finisher that counted itself is in the list: each was added under the lock as it started.
    std::lock_guard<std::mutex> hold(finishers_lock);
    for (auto &t : finishers) t.join();
    EXPECT(right == WORKERS, "%d of %d workers saw their results", right.load(), WORKERS);
    printf("callback_frees: %d workers, each result checked by a callback's thread\n", WORKERS);
    return 0;
}
