// Shared by the CUDA test programs: error checks and the timing line gpu-check reads.
// Every program prints deterministic results; lines starting with "time:" are the only ones
// allowed to differ between runs.
#pragma once
#include <chrono>
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                          \
    do {                                                                                     \
        cudaError_t status_ = (call);                                                        \
        if (status_ != cudaSuccess) {                                                        \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(status_)); \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

#define EXPECT(cond, ...)                 \
    do {                                  \
        if (!(cond)) {                    \
            fprintf(stderr, __VA_ARGS__); \
            fprintf(stderr, "\n");        \
            exit(1);                      \
        }                                 \
    } while (0)

static inline double seconds_now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
