//! ARMv6-M has no FAULTMASK: the `lockup` bin needs to know.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(armv6m)");
    if std::env::var("TARGET").unwrap_or_default().starts_with("thumbv6m") {
        println!("cargo:rustc-cfg=armv6m");
    }
}
