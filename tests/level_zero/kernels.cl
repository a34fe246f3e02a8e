/* The kernels of the Level Zero test programs, compiled to SPIR-V at test time with
 * clang-15 -cl-std=CL2.0 -target spir64 and llvm-spirv-15 ($REPRISE_TEST_SPIRV names the result). */

kernel void vector_add(global const float *a, global const float *b, global float *c) {
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}

kernel void scale(global int *x, int factor) {
    size_t i = get_global_id(0);
    x[i] *= factor;
}

kernel void add_into(global const int *from, global int *to) {
    size_t i = get_global_id(0);
    to[i] += from[i];
}

/* out[i] = base + i over the launch, which may start at a global offset. */
kernel void iota(global int *out, int base) {
    size_t i = get_global_id(0);
    out[i] = base + (int)i;
}

/* Each group sums its items through local memory; out[group] = the sum. */
kernel void group_sums(global const int *in, global int *out, local int *scratch) {
    size_t local_id = get_local_id(0);
    scratch[local_id] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (local_id == 0) {
        int sum = 0;
        for (size_t k = 0; k < get_local_size(0); k++) sum += scratch[k];
        out[get_group_id(0)] = sum;
    }
}
