//! The CUDA test programs build with the pip nvcc 13.0 for sm_90 (no GPU needed), and the shim reads
//! the size of every kind of module image those builds produce from the image's own headers.
//! Needs `. scripts/env.sh` (REPRISE_NVCC and the link flags of scripts/cuda-env.sh).

use shim::cuda::image::{image_at, image_in, ImageError, ImageKind, ModuleImage};
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::process::Command;

const KERNELS: &str = "kernels.cu";

fn cuda_sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("cuda")
}

/// A fresh directory for one test's build outputs.
fn output_dir(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cuda_compile")
        .join(test);
    // A leftover from an earlier run may be absent; creating the directory is what must work.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the build directory");
    dir
}

/// Runs the pip nvcc for sm_90; fails the test with nvcc's own output if it fails.
fn nvcc(args: &[&str], source: &Path, output: &Path) {
    let nvcc = std::env::var("REPRISE_NVCC").unwrap_or_else(|_| "nvcc".into());
    let result = Command::new(&nvcc)
        .arg("-arch=sm_90")
        .args(args)
        .arg(source)
        .arg("-o")
        .arg(output)
        .output()
        .unwrap_or_else(|error| {
            panic!("cannot run {nvcc} ({error}): run scripts/setup.sh, then `. scripts/env.sh`")
        });
    assert!(
        result.status.success(),
        "nvcc {args:?} {} failed: {}\n{}",
        source.display(),
        result.status,
        String::from_utf8_lossy(&result.stderr)
    );
}

/// Every program of tests/cuda (each `.cu` and `.cpp` file but the kernels loaded through the driver API).
fn programs() -> Vec<PathBuf> {
    let entries = std::fs::read_dir(cuda_sources()).expect("read tests/cuda");
    let mut programs: Vec<PathBuf> = entries
        .map(|entry| entry.expect("list tests/cuda").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "cu" || ext == "cpp"))
        .filter(|path| !path.ends_with(KERNELS))
        .collect();
    programs.sort();
    programs
}

/// The nvcc flags a program's `// gpu-check-flags:` line gives (what scripts/gpu-check.sh uses).
fn build_flags(source: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(source).expect("read a CUDA program");
    text.lines()
        .find_map(|line| line.strip_prefix("// gpu-check-flags: "))
        .map(|flags| flags.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

#[test]
fn every_program_links_with_static_and_shared_cudart_and_embeds_readable_fatbins() {
    let out = output_dir("programs");
    let programs = programs();
    assert!(
        !programs.is_empty(),
        "no CUDA programs in {}",
        cuda_sources().display()
    );
    let includes = cuda_sources();
    for source in programs {
        let stem = source
            .file_stem()
            .expect("a .cu file has a stem")
            .to_string_lossy()
            .into_owned();
        let flags = build_flags(&source);
        let mut args: Vec<&str> = flags.iter().map(String::as_str).collect();
        args.extend(["-I", includes.to_str().expect("a UTF-8 path")]);
        // cuBLAS's headers are not in the pip compiler wheels: that program is built on the GPU machine only.
        if flags.iter().any(|flag| flag == "-lcublas") {
            eprintln!("{stem}: needs cuBLAS, which scripts/gpu-check.sh builds on the GPU machine");
            continue;
        }
        // libcuda exists only on the GPU machine: such programs are compiled, not linked, here.
        if flags.iter().any(|flag| flag.starts_with("-l")) {
            let object = out.join(format!("{stem}.o"));
            let compile_only: Vec<&str> = args.iter().copied().filter(|a| !a.starts_with("-l")).chain(["-c"]).collect();
            nvcc(&compile_only, &source, &object);
            continue;
        }
        for cudart in ["static", "shared"] {
            let binary = out.join(format!("{stem}-{cudart}"));
            let mut link = args.clone();
            link.retain(|a| *a != "-cudart" && *a != "shared" && *a != "static");
            link.extend(["-cudart", cudart]);
            nvcc(&link, &source, &binary);
            let linked = std::fs::read(&binary).expect("read the linked program");
            let needs_shared_cudart = contains(&linked, b"libcudart.so.13");
            assert_eq!(
                needs_shared_cudart,
                cudart == "shared",
                "{stem} built with -cudart {cudart}"
            );
            assert_fatbins_fill_section(&embedded_fatbins(&binary));
        }
    }
}

/// The `.nv_fatbin` section of a linked program: the fatbins of its translation units (and of
/// the static cudart), one after another.
fn embedded_fatbins(binary: &Path) -> Vec<u8> {
    let section = binary.with_extension("nv_fatbin");
    let dumped = Command::new("objcopy")
        .args(["-O", "binary", "--only-section=.nv_fatbin"])
        .arg(binary)
        .arg(&section)
        .status()
        .expect("run objcopy (binutils)");
    assert!(
        dumped.success(),
        "objcopy cannot dump .nv_fatbin of {}",
        binary.display()
    );
    std::fs::read(&section).expect("read the dumped .nv_fatbin section")
}

/// Reading fatbins one after another, each at the next 8-byte boundary, ends exactly at the
/// section's end: every size read from a header is right.
fn assert_fatbins_fill_section(section: &[u8]) {
    let mut offset = 0;
    let mut count = 0;
    while offset < section.len() {
        let image = image_in(&section[offset..]).expect("a fatbin in .nv_fatbin");
        assert_eq!(
            image.kind,
            ImageKind::Fatbin,
            "at offset {offset} of .nv_fatbin"
        );
        offset = (offset + image.bytes.len()).next_multiple_of(8);
        count += 1;
    }
    assert_eq!(offset, section.len(), "fatbins overrun .nv_fatbin");
    assert!(count > 0, "empty .nv_fatbin");
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// kernels.cu built as `-cubin`, `-fatbin` and `-ptx`; PTX gets the NUL the driver expects.
struct Images {
    cubin: Vec<u8>,
    fatbin: Vec<u8>,
    ptx: Vec<u8>,
}

fn build_kernel_images(test: &str) -> Images {
    let out = output_dir(test);
    let source = cuda_sources().join(KERNELS);
    let build = |kind: &str| {
        let path = out.join(format!("kernels.{kind}"));
        nvcc(&[&format!("-{kind}")], &source, &path);
        std::fs::read(&path).expect("read the built image")
    };
    Images {
        cubin: build("cubin"),
        fatbin: build("fatbin"),
        ptx: build("ptx"),
    }
}

fn with_nul(text: &[u8]) -> Vec<u8> {
    let mut terminated = text.to_vec();
    terminated.push(0);
    terminated
}

/// The image read from a slice and from its address: the same kind, the same bytes, in place.
fn read_both(bytes: &[u8]) -> ModuleImage<'_> {
    let from_slice = image_in(bytes).expect("read the image from its bytes");
    // SAFETY: `bytes` holds a whole image (or PTX with its NUL) and outlives the result.
    let from_memory =
        unsafe { image_at(bytes.as_ptr().cast()) }.expect("read the image from memory");
    assert_eq!(from_slice, from_memory);
    assert_eq!(from_memory.bytes.as_ptr(), bytes.as_ptr());
    from_memory
}

#[test]
fn image_sizes_read_from_headers_match_the_built_files() {
    let images = build_kernel_images("sizes");

    let fatbin = read_both(&images.fatbin);
    assert_eq!(fatbin.kind, ImageKind::Fatbin);
    assert_eq!(fatbin.bytes.len(), images.fatbin.len());

    let cubin = read_both(&images.cubin);
    assert_eq!(cubin.kind, ImageKind::Cubin);
    assert_eq!(cubin.bytes.len(), images.cubin.len());

    let ptx_with_nul = with_nul(&images.ptx);
    let ptx = read_both(&ptx_with_nul);
    assert_eq!(ptx.kind, ImageKind::Ptx);
    assert_eq!(ptx.bytes, images.ptx.as_slice());

    // Images followed by other bytes, as in a program's memory, end where their headers say.
    for image in [&images.fatbin, &images.cubin] {
        let mut followed = image.clone();
        followed.extend_from_slice(&[0xAB; 4096]);
        assert_eq!(read_both(&followed).bytes, image.as_slice());
    }
}

/// `fatbinary_section.h`'s `__fatBinC_Wrapper_t`, as nvcc embeds it in host programs.
#[repr(C)]
struct FatbinWrapper {
    magic: u32,
    version: u32,
    data: *const u8,
    filename_or_fatbins: *const c_void,
}

#[test]
fn a_fatbin_wrapper_leads_to_its_fatbin() {
    let images = build_kernel_images("wrapper");
    let wrapper = FatbinWrapper {
        magic: 0x4662_43B1,
        version: 1,
        data: images.fatbin.as_ptr(),
        filename_or_fatbins: std::ptr::null(),
    };
    // SAFETY: the wrapper and the fatbin it points at outlive the result.
    let image =
        unsafe { image_at((&wrapper as *const FatbinWrapper).cast()) }.expect("follow the wrapper");
    assert_eq!(image.kind, ImageKind::Fatbin);
    assert_eq!(image.bytes.as_ptr(), images.fatbin.as_ptr());
    assert_eq!(image.bytes.len(), images.fatbin.len());

    // SAFETY: as above; the wrapper's bytes are readable.
    let wrapper_bytes = unsafe {
        std::slice::from_raw_parts(
            (&wrapper as *const FatbinWrapper).cast::<u8>(),
            size_of::<FatbinWrapper>(),
        )
    };
    assert_eq!(image_in(wrapper_bytes), Err(ImageError::WrapperInSlice));

    let to_cubin = FatbinWrapper {
        data: images.cubin.as_ptr(),
        ..wrapper
    };
    // SAFETY: as above.
    let error = unsafe { image_at((&to_cubin as *const FatbinWrapper).cast()) };
    assert!(matches!(error, Err(ImageError::Malformed(_))), "{error:?}");
    let to_null = FatbinWrapper {
        data: std::ptr::null(),
        ..to_cubin
    };
    // SAFETY: as above.
    assert_eq!(
        unsafe { image_at((&to_null as *const FatbinWrapper).cast()) },
        Err(ImageError::NullAddress)
    );
}

fn is_truncated(result: Result<ModuleImage<'_>, ImageError>) -> bool {
    matches!(result, Err(ImageError::Truncated { .. }))
}

fn is_malformed(result: Result<ModuleImage<'_>, ImageError>) -> bool {
    matches!(result, Err(ImageError::Malformed(_)))
}

fn patched(image: &[u8], offset: usize, bytes: &[u8]) -> Vec<u8> {
    let mut copy = image.to_vec();
    copy[offset..offset + bytes.len()].copy_from_slice(bytes);
    copy
}

#[test]
fn truncated_and_corrupt_headers_are_rejected() {
    let Images { cubin, fatbin, ptx } = build_kernel_images("corrupt");

    // Fatbin: cut anywhere, a header size below the header's own, a size past the limit.
    assert!(is_truncated(image_in(&fatbin[..fatbin.len() - 1])));
    assert!(is_truncated(image_in(&fatbin[..10])));
    assert!(is_malformed(image_in(&patched(
        &fatbin,
        6,
        &4u16.to_le_bytes()
    ))));
    assert_eq!(
        image_in(&patched(&fatbin, 8, &u64::MAX.to_le_bytes())),
        Err(ImageError::TooLarge)
    );

    // Cubin: cut in the ELF header or at the end, or with either header table moved past the end.
    assert!(is_truncated(image_in(&cubin[..40])));
    assert!(is_truncated(image_in(&cubin[..cubin.len() - 1])));
    let past_the_end = (cubin.len() as u64).to_le_bytes();
    assert!(is_truncated(image_in(&patched(
        &cubin,
        0x20,
        &past_the_end
    ))));
    assert!(is_truncated(image_in(&patched(
        &cubin,
        0x28,
        &past_the_end
    ))));
    assert_eq!(
        image_in(&patched(&cubin, 0x28, &u64::MAX.to_le_bytes())),
        Err(ImageError::TooLarge)
    );
    // Not a little-endian ELF64; section header entries smaller than an ELF64 section header.
    assert!(is_malformed(image_in(&patched(&cubin, 4, &[1]))));
    assert!(is_malformed(image_in(&patched(&cubin, 5, &[2]))));
    assert!(is_malformed(image_in(&patched(
        &cubin,
        0x3A,
        &16u16.to_le_bytes()
    ))));

    // PTX: text with no NUL.
    assert!(is_malformed(image_in(&ptx)));
    assert_eq!(image_in(b"\0").map(|image| image.bytes.len()), Ok(0));
    // SAFETY: NULL is what is being tested.
    assert_eq!(
        unsafe { image_at(std::ptr::null()) },
        Err(ImageError::NullAddress)
    );
}

#[test]
fn every_cut_of_a_real_image_is_truncated_and_no_corruption_panics() {
    let Images { cubin, fatbin, ptx } = build_kernel_images("cuts");
    for image in [&cubin, &fatbin] {
        for len in 0..image.len() {
            assert!(
                is_truncated(image_in(&image[..len])),
                "cut at {len} of {}",
                image.len()
            );
        }
    }
    assert!(is_truncated(image_in(&[])));

    // Overwrite a few bytes, often in the headers, with pseudo-random values: the answer may be an
    // error, never a panic, and an image found is self-contained (its bytes alone read the same).
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for image in [&cubin, &fatbin, &with_nul(&ptx)] {
        for _ in 0..20_000 {
            let mut corrupt = image.clone();
            for _ in 0..1 + next() % 4 {
                let anywhere = next();
                let offset = if anywhere % 2 == 0 {
                    anywhere % 128
                } else {
                    anywhere >> 1
                };
                let offset = offset as usize % corrupt.len();
                corrupt[offset] = next() as u8;
            }
            if let Ok(found) = image_in(&corrupt) {
                let alone = match found.kind {
                    ImageKind::Ptx => with_nul(found.bytes),
                    ImageKind::Cubin | ImageKind::Fatbin => found.bytes.to_vec(),
                };
                assert_eq!(image_in(&alone), Ok(found));
            }
        }
    }
}

/// The replayer's own kernels (PTX it loads with cuModuleLoadData) assemble for sm_90.
#[test]
fn the_replayers_own_ptx_kernels_assemble() {
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("../replayer/src/cuda");
    let mut kernels: Vec<PathBuf> = std::fs::read_dir(&sources)
        .expect("read replayer/src/cuda")
        .map(|entry| entry.expect("list replayer/src/cuda").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "ptx"))
        .collect();
    kernels.sort();
    assert_eq!(kernels.len(), 2, "{kernels:?}");
    let out = output_dir("replayer_ptx");
    for kernel in kernels {
        let cubin = out.join(kernel.with_extension("cubin").file_name().expect("a file name"));
        nvcc(&["-cubin"], &kernel, &cubin);
        assert!(cubin.metadata().is_ok_and(|meta| meta.len() > 0), "{}", cubin.display());
    }
}

/// The replayer finds the variables a module defines in device memory (not its constants) in
/// nvcc's cubins and fatbins, whose ELF entries nvcc stores uncompressed, or zstd-compressed with
/// `-Xfatbin -compress-all` (as PyTorch and NVIDIA's libraries are built): a kernel may count in
/// one the program never names, which each replay run then starts again from its loaded value.
#[test]
fn module_variables_are_found_in_cubins_and_fatbins() {
    let dir = output_dir("module_variables");
    let source = dir.join("variables.cu");
    let kernel = "__device__ int g_counter;\n__device__ float g_table[4] = {1, 2, 3, 4};\n__constant__ int c_value = 3;\n\
                  static __device__ int s_hidden = 5;\n\
                  __global__ void bump(int *out) { out[0] = atomicAdd(&g_counter, 1) + (int)g_table[1] + c_value + s_hidden++; }\n";
    std::fs::write(&source, kernel).expect("write the kernel");
    let (cubin, fatbin) = (trace_format::ImageKind::Cubin, trace_format::ImageKind::Fatbin);
    for (flags, kind) in [(&["-cubin"][..], cubin), (&["-fatbin"], fatbin), (&["-fatbin", "-Xfatbin", "-compress-all"], fatbin)] {
        let image = dir.join(format!("variables{}", flags.concat()));
        nvcc(flags, &source, &image);
        let bytes = std::fs::read(&image).expect("read the image");
        let mut names = replayer::cuda::image_variables::names(kind, &bytes);
        names.sort();
        assert_eq!(names, ["g_counter", "g_table", "s_hidden"], "{flags:?}");
    }
}
