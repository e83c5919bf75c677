//! Assembles the kernels of the target architecture and tells
//! `triskel-kernels` (through the `links` metadata `DEP_TRISKEL_KERNELS_ASM_BACKENDS`)
//! which backends it got.

use std::path::{Path, PathBuf};

/// The backends each architecture's folder implements.
fn backends_of(arch: &str) -> &'static [&'static str] {
    match arch {
        "x86_64" => &["avx512", "avx512ifma", "avx2"],
        "aarch64" => &["aarch64", "sve", "neon"],
        _ => &[],
    }
}

/// True for targets whose objects are ELF with SysV calling conventions,
/// which is what the assembly is written for.
fn elf_sysv(os: &str) -> bool {
    matches!(
        os,
        "linux"
            | "android"
            | "freebsd"
            | "netbsd"
            | "openbsd"
            | "dragonfly"
            | "illumos"
            | "solaris"
    )
}

fn assembly_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "S"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn announce(backends: &[&str]) {
    let list = backends.join(",");
    println!("cargo:backends={list}");
    println!("cargo:rustc-env=TRISKEL_ASM_BACKENDS={list}");
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").expect("set by cargo");
    let os = std::env::var("CARGO_CFG_TARGET_OS").expect("set by cargo");
    let dir = root.join(&arch);
    println!("cargo:rerun-if-changed={}", dir.display());
    let backends = backends_of(&arch);
    if backends.is_empty() {
        announce(&[]);
        return;
    }
    if !elf_sysv(&os) {
        println!(
            "cargo:warning=triskel-kernels-asm: the {arch} assembly is written for ELF/SysV targets, \
             not {os}; this build has only the portable C kernels"
        );
        announce(&[]);
        return;
    }
    let files = assembly_in(&dir);
    if files.is_empty() {
        panic!(
            "{} holds no assembly: this copy of triskel-kernels-asm is incomplete \
             (the {arch} backends {backends:?} would be missing)",
            dir.display()
        );
    }
    cc::Build::new()
        .files(&files)
        .include(&dir)
        .compile("triskel_kernels_asm");
    announce(backends);
}
