// Shared by the CUDA test programs that call the driver API: its error check.
#pragma once
#include <cuda.h>
#include <cstdio>
#include <cstdlib>

#define CHECK_DRIVER(call)                                                        \
    do {                                                                          \
        CUresult status_ = (call);                                                \
        if (status_ != CUDA_SUCCESS) {                                            \
            const char *name_ = "?";                                              \
            cuGetErrorName(status_, &name_);                                      \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, name_); \
            exit(1);                                                              \
        }                                                                         \
    } while (0)
