//! The cuda-samples check (`scripts/cuda_samples.py`, run by `scripts/gpu-check.sh --samples`) on a
//! small tree laid out as NVIDIA's: which samples are left out, the nvcc flags read from each
//! CMakeLists.txt, a build with the pip nvcc (the sample and the fatbin it loads, next to links to
//! its data), the trimmed copy `pack` makes, and the table of a run (here, without a GPU).
//! Needs `. scripts/env.sh` (REPRISE_NVCC and its link flags), as `cuda_compile` does.

use end_to_end::binaries::{replayer, shim_library, workspace_root};
use std::path::Path;
use std::process::{Command, Output};

const CMAKE: &str = r#"include_directories(../../../Common)
add_executable(tiny tiny.cu)
target_compile_options(tiny PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>)
set_target_properties(tiny PROPERTIES CUDA_SEPARABLE_COMPILATION ON)
target_link_libraries(tiny PRIVATE
    CUDA::cudart
)
set(CUDA_FATBIN_FILE "${CMAKE_CURRENT_BINARY_DIR}/tiny_kernel64.fatbin")
set(CUDA_KERNEL_SOURCE "${CMAKE_CURRENT_SOURCE_DIR}/tiny_kernel.cu")
"#;

const PROGRAM: &str = r#"#include <cstdio>
#include "helper_tiny.h"
__global__ void set(int *x) { x[0] = TINY; }
int main() {
    int *x;
    if (cudaMalloc(&x, sizeof(int)) != cudaSuccess) { printf("Result = FAIL (no device)\n"); return 1; }
    set<<<1, 1>>>(x);
    int host = 0;
    cudaMemcpy(&host, x, sizeof host, cudaMemcpyDeviceToHost);
    printf("Result = %s\n", host == TINY ? "PASS" : "FAIL");
    return host == TINY ? 0 : 1;
}
"#;

/// Common/ with a header and shared data; 0_Introduction/tiny, built and loading a fatbin;
/// 5_Domain_Specific/simpleGL, which needs a display.
fn samples_tree(root: &Path) {
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create the directory");
        std::fs::write(path, text).expect("write the file");
    };
    write("Common/helper_tiny.h", "#define TINY 3\n");
    write("Common/data/shared.raw", "shared\n");
    write("Samples/0_Introduction/tiny/CMakeLists.txt", CMAKE);
    write("Samples/0_Introduction/tiny/tiny.cu", PROGRAM);
    write("Samples/0_Introduction/tiny/tiny_kernel.cu", "extern \"C\" __global__ void k(int *x) { x[0] = 1; }\n");
    write("Samples/0_Introduction/tiny/data/input.txt", "input\n");
    write("Samples/0_Introduction/tiny/doc/tiny.doc", "documentation\n");
    write("Samples/5_Domain_Specific/simpleGL/CMakeLists.txt", "add_executable(simpleGL simpleGL.cu)\n");
}

fn samples_script(args: &[&Path]) -> Output {
    Command::new("python3").arg(workspace_root().join("scripts/cuda_samples.py")).args(args).output().expect("python3 starts")
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

#[test]
fn samples_are_listed_built_packed_and_tabled() {
    let scratch = tempfile::Builder::new().prefix("reprise-samples-").tempdir().expect("a scratch directory");
    let (root, work, out, packed) = (scratch.path().join("cuda-samples"), scratch.path().join("work"), scratch.path().join("out"), scratch.path().join("packed"));
    samples_tree(&root);

    let listed = samples_script(&[Path::new("list"), &root]);
    assert_eq!(
        String::from_utf8_lossy(&listed.stdout),
        "0_Introduction/tiny: -rdc=true --extended-lambda -cudart shared\n5_Domain_Specific/simpleGL: excluded, needs a display (OpenGL/GLUT)\n"
    );

    let nvcc = std::env::var("REPRISE_NVCC").unwrap_or_else(|_| "nvcc".into());
    let built = samples_script(&[Path::new("build"), &root, &work, Path::new("--nvcc"), Path::new(&nvcc)]);
    assert!(built.status.success(), "{}", text(&built));
    let place = work.join("tiny");
    for made in ["tiny", "tiny_kernel64.fatbin"] {
        assert!(place.join(made).is_file(), "{made} was not built: {}", text(&built));
    }
    // Run from there, the sample finds its data, the shared data and its sources where it looks.
    for linked in ["data/input.txt", "shared.raw", "tiny_kernel.cu"] {
        assert!(place.join(linked).exists(), "{linked} is not reachable from the run directory");
    }

    let packed_run = samples_script(&[Path::new("pack"), &root, &packed]);
    assert!(packed_run.status.success(), "{}", text(&packed_run));
    assert!(packed.join("Samples/0_Introduction/tiny/data/input.txt").is_file());
    assert!(packed.join("Common/helper_tiny.h").is_file());
    assert!(!packed.join("Samples/0_Introduction/tiny/doc").exists(), "documents are left out");
    assert!(!packed.join("Samples/5_Domain_Specific").exists(), "samples left out are not copied");

    let bin = shim_library().parent().expect("the shim's directory").to_path_buf();
    assert_eq!(replayer().parent(), Some(bin.as_path()));
    let ran = samples_script(&[Path::new("run"), &root, &work, &bin, &out, Path::new("--timeout"), Path::new("60")]);
    let table = std::fs::read_to_string(out.join("samples.md")).unwrap_or_else(|_| panic!("no table: {}", text(&ran)));
    assert!(table.starts_with("| sample | native | shim | graph | eager | reason |\n"), "{table}");
    assert!(table.contains("| 5_Domain_Specific/simpleGL | excluded |  |  |  | needs a display (OpenGL/GLUT) |"), "{table}");
    // The sample ran twice with the same exit code and result lines (with or without a GPU).
    let row = table.lines().find(|line| line.starts_with("| 0_Introduction/tiny |")).expect("a row for the sample");
    assert!(row.contains("| same |"), "{row}");
    assert!(out.join("samples/tiny.native.out").is_file() && out.join("samples.json").is_file());
}
