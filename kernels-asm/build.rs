//! Assembles the kernels of the target architecture and tells
//! `triskel-kernels` (through the `links` metadata `DEP_TRISKEL_KERNELS_ASM_BACKENDS`)
//! which backends it got.

use std::path::PathBuf;

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

/// Every source file of an architecture's folder: the assembly files, then
/// the headers they include. A package or copy missing any one of them is
/// incomplete, and building it must fail rather than drop a backend.
fn sources_of(arch: &str) -> (&'static [&'static str], &'static [&'static str]) {
    match arch {
        "x86_64" => (
            &["avx2.S", "avx512.S", "ifma.S"],
            &["common.inc", "entry.inc"],
        ),
        "aarch64" => (
            &[
                "keyswitch.S",
                "mulmod.S",
                "neon.S",
                "ntt.S",
                "sve.S",
                "vector.S",
            ],
            &["common.h"],
        ),
        _ => (&[], &[]),
    }
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
    let (assembly, headers) = sources_of(&arch);
    let missing: Vec<&str> = assembly
        .iter()
        .chain(headers)
        .copied()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    if !missing.is_empty() {
        panic!(
            "{} lacks {missing:?}: this copy of triskel-kernels-asm is incomplete \
             (the {arch} backends {backends:?} need every file)",
            dir.display()
        );
    }
    let files: Vec<PathBuf> = assembly.iter().map(|f| dir.join(f)).collect();
    cc::Build::new()
        .files(&files)
        .include(&dir)
        .compile("triskel_kernels_asm");
    announce(backends);
}
