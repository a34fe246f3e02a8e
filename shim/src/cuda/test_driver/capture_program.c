// A program that captures a blocking stream into a graph while another stream works: a kernel on
// the other stream during the capture uses memory nothing used before (the shim reads it then,
// and must not touch the legacy stream to do so, or the capture is invalidated); a third stream
// joins the capture through an event and leaves it through another (its kernel is the graph's);
// a second capture goes into a graph the program made (cuStreamBeginCaptureToGraph). It prints
// what ending each capture returned, then the data.
#include "driver.h"
int main(void) {
    if (!open_driver()) return 2;
    F(cuModuleLoadData, void **, const void *);
    F(cuModuleGetFunction, void **, void *, const char *);
    F(cuMemAlloc_v2, CUdeviceptr *, size_t);
    F(cuMemcpyHtoD_v2, CUdeviceptr, const void *, size_t);
    F(cuMemcpyDtoH_v2, void *, CUdeviceptr, size_t);
    F(cuStreamCreate, void **, unsigned);
    F(cuStreamSynchronize, void *);
    F(cuEventRecord, void *, void *);
    F(cuStreamWaitEvent, void *, void *, unsigned);
    F(cuStreamBeginCapture_v2, void *, int);
    F(cuStreamBeginCaptureToGraph, void *, void *, const void *, const void *, size_t, int);
    F(cuStreamEndCapture, void *, void **);
    F(cuGraphCreate, void **, unsigned);
    F(cuGraphInstantiateWithFlags, void **, void *, unsigned long long);
    F(cuGraphLaunch, void *, void *);
    void *module, *function;
    cuModuleLoadData(&module, ".version 9.0\n.target sm_90\n.visible .entry add1() { ret; }\n");
    cuModuleGetFunction(&function, module, "add1");
    CUdeviceptr a, b, c;
    int host[3][16] = {{0}};
    cuMemAlloc_v2(&a, sizeof host[0]);
    cuMemAlloc_v2(&b, sizeof host[1]);
    cuMemAlloc_v2(&c, sizeof host[2]);
    cuMemcpyHtoD_v2(a, host[0], sizeof host[0]);
    cuMemcpyHtoD_v2(b, host[1], sizeof host[1]);
    void *working, *capturing, *joining, *forked = (void *)0xe1, *joined = (void *)0xe2, *graph, *exec;
    cuStreamCreate(&working, 1);
    cuStreamCreate(&capturing, 0);
    cuStreamCreate(&joining, 0);
    add1(function, working, a, 16);
    cuStreamBeginCapture_v2(capturing, 0);
    add1(function, capturing, b, 4);
    add1(function, working, c, 8);
    cuEventRecord(forked, capturing);
    cuStreamWaitEvent(joining, forked, 0);
    add1(function, joining, b, 8);
    cuEventRecord(joined, joining);
    cuStreamWaitEvent(capturing, joined, 0);
    int first = cuStreamEndCapture(capturing, &graph);
    cuStreamSynchronize(working);
    cuGraphInstantiateWithFlags(&exec, graph, 0);
    cuGraphLaunch(exec, capturing);
    cuStreamSynchronize(capturing);
    // The second capture: into a graph made beforehand.
    void *made, *made_exec, *ended;
    cuGraphCreate(&made, 0);
    cuStreamBeginCaptureToGraph(joining, made, 0, 0, 0, 0);
    add1(function, joining, c, 2);
    int second = cuStreamEndCapture(joining, &ended);
    cuGraphInstantiateWithFlags(&made_exec, made, 0);
    cuGraphLaunch(made_exec, joining);
    cuStreamSynchronize(joining);
    cuMemcpyDtoH_v2(host[0], a, sizeof host[0]);
    cuMemcpyDtoH_v2(host[1], b, sizeof host[1]);
    cuMemcpyDtoH_v2(host[2], c, sizeof host[2]);
    printf("captures ended with %d %d\n", first, second);
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 16; j++) printf("%d ", host[i][j]);
        printf("\n");
    }
    return 0;
}
