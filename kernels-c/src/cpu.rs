//! What the CPU is and what it can do, for `triskel info` and bench reports.

/// The CPU model as the operating system names it (Linux: /proc/cpuinfo),
/// or the architecture when it does not say.
pub fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |key: &str| {
        info.lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == key))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    if let Some(model) = field("model name") {
        return model;
    }
    // AArch64 Linux names no model; the MIDR part number identifies the core.
    match (field("CPU implementer"), field("CPU part")) {
        (Some(imp), Some(part)) => {
            let core = match (imp.as_str(), part.as_str()) {
                ("0x41", "0xd0c") => "Neoverse N1",
                ("0x41", "0xd40") => "Neoverse V1",
                ("0x41", "0xd4f") => "Neoverse V2",
                ("0x41", "0xd49") => "Neoverse N2",
                _ => "unknown core",
            };
            format!(
                "{} {core} (implementer {imp}, part {part})",
                std::env::consts::ARCH
            )
        }
        _ => std::env::consts::ARCH.to_string(),
    }
}

/// The SIMD features relevant to triskel that this CPU reports.
pub fn cpu_features() -> Vec<&'static str> {
    #[allow(unused_mut)]
    let mut found = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        macro_rules! probe {
            ($($f:tt),*) => {$(if std::arch::is_x86_feature_detected!($f) { found.push($f); })*};
        }
        probe!(
            "avx2",
            "fma",
            "bmi2",
            "avx512f",
            "avx512dq",
            "avx512vl",
            "avx512bw",
            "avx512ifma",
            "avx512vbmi"
        );
    }
    #[cfg(target_arch = "aarch64")]
    {
        macro_rules! probe {
            ($($f:tt),*) => {$(if std::arch::is_aarch64_feature_detected!($f) { found.push($f); })*};
        }
        probe!("neon", "sve", "sve2");
    }
    found
}
