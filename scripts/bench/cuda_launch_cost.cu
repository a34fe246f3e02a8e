// What a recorded launch costs the program's thread on a GPU, apart from the GPU's own pace: per
// window, the time to submit LAUNCHES tiny kernels, then, once the GPU surely finished (a sleep of
// 20 µs per launch), the time of the stream synchronization, where the shim closes the window.
// Prints the median and best window of each, in ns per launch. The GPU runs one such kernel after
// another in about 3.4 µs (H200), so 1000 launches fill its queue and submitting waits for it:
// 100 per window keep the submission the host's own time.
//   nvcc -arch=sm_90 -O2 -o cuda_launch_cost scripts/bench/cuda_launch_cost.cu
//   ./cuda_launch_cost [WINDOWS [LAUNCHES]]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

__global__ void bump(int *x, int by) { x[threadIdx.x] += by; }

static double now_ns() { return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int main(int argc, char **argv) {
    const int windows = argc > 1 ? atoi(argv[1]) : 20, launches = argc > 2 ? atoi(argv[2]) : 100;
    int *x;
    cudaStream_t s;
    if (cudaMalloc(&x, 32 * sizeof(int)) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess) return 2;
    cudaMemset(x, 0, 32 * sizeof(int));
    cudaStreamSynchronize(s);
    std::vector<double> submit, close;
    for (int window = 0; window < windows; window++) {
        double started = now_ns();
        for (int l = 0; l < launches; l++) bump<<<1, 32, 0, s>>>(x, (l & 1) + 1);
        double submitted = now_ns();
        std::this_thread::sleep_for(std::chrono::microseconds(20 * launches));
        double waiting = now_ns();
        if (cudaStreamSynchronize(s) != cudaSuccess) return 3;
        double done = now_ns();
        submit.push_back((submitted - started) / launches);
        close.push_back((done - waiting) / launches);
    }
    auto median = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
    printf("submit_ns_per_launch %.1f best %.1f\n", median(submit), *std::min_element(submit.begin(), submit.end()));
    printf("close_ns_per_launch %.1f best %.1f\n", median(close), *std::min_element(close.begin(), close.end()));
    return 0;
}
