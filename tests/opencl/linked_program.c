/* A program linked from separately compiled units, as OpenCL-CTS progvar_prog_scope_misc does:
 * both units include a header (an input header of clCompileProgram) that defines a type, each is
 * compiled with its own options, one goes into a library first (-create-library), a third has no
 * headers and goes in as a compiled object created from its binary, and the kernel calls functions
 * of the others. Rebuilding the units as one source redefines the type, so
 * the replay must compile and link them as the program did. */
#include "common.h"

#define N 256
static const char *header_source = "typedef struct { uchar tag; uint index; } item_t;\nfloat weight_of(item_t item);\n";
static const char *helper_source = "#include \"shared/item.h\"\nfloat weight_of(item_t item) { return (float)item.index * FACTOR + item.tag; }\n";
static const char *bias_source = "float bias(void) { return 0.25f; }\n";
static const char *kernel_source =
    "#include \"shared/item.h\"\n"
    "float bias(void);\n"
    "__kernel void weigh(__global float *v) {\n"
    "    item_t item = { 3, (uint)get_global_id(0) };\n"
    "    v[get_global_id(0)] += weight_of(item) + bias();\n"
    "}\n";

static cl_program compiled(test_env *env, const char *source, const char *options, cl_program header) {
    cl_program program = CHECKED(clCreateProgramWithSource(env->context, 1, &source, NULL, ERR));
    const char *name = "shared/item.h";
    if (header)
        CHECK(clCompileProgram(program, 1, &env->device, options, 1, &header, &name, NULL, NULL));
    else
        CHECK(clCompileProgram(program, 1, &env->device, options, 0, NULL, NULL, NULL, NULL));
    return program;
}

int main(void) {
    test_env env = open_env();
    cl_command_queue queue = open_queue(&env, 0);
    cl_program header = CHECKED(clCreateProgramWithSource(env.context, 1, &header_source, NULL, ERR));
    cl_program helper = compiled(&env, helper_source, "-DFACTOR=0.5f", header);
    cl_program kernels = compiled(&env, kernel_source, "", header);
    cl_program bias_object = compiled(&env, bias_source, "-cl-fast-relaxed-math", NULL);
    /* The third unit goes in as a compiled object created from its binary. */
    size_t size;
    CHECK(clGetProgramInfo(bias_object, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL));
    unsigned char *binary = malloc(size);
    CHECK(clGetProgramInfo(bias_object, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL));
    const unsigned char *binaries[1] = {binary};
    cl_program bias = CHECKED(clCreateProgramWithBinary(env.context, 1, &env.device, &size, binaries, NULL, ERR));
    free(binary);
    cl_program library = CHECKED(clLinkProgram(env.context, 1, &env.device, "-create-library", 1, &helper, NULL, NULL, ERR));
    cl_program inputs[3] = {library, kernels, bias};
    cl_program linked = CHECKED(clLinkProgram(env.context, 1, &env.device, "", 3, inputs, NULL, NULL, ERR));
    cl_kernel weigh = make_kernel(linked, "weigh");
    float host[N], want[N], got[N];
    for (int i = 0; i < N; i++) {
        host[i] = (float)(i % 9);
        want[i] = host[i] + (float)i * 0.5f + 3.0f + 0.25f;
    }
    cl_mem v = make_buffer(&env, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host);
    CHECK(clSetKernelArg(weigh, 0, sizeof(cl_mem), &v));
    size_t global = N;
    CHECK(clEnqueueNDRangeKernel(queue, weigh, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(queue, v, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    expect_floats("v", got, want, N);
    printf("linked program: sum %.1f\n", float_sum(got, N));
    return 0;
}
