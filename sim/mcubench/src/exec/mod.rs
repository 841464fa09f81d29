//! Running firmware: the QEMU command line and process supervision ([`qemu`]), containment of
//! untrusted firmware ([`contain`]), and the TCG plugin that counts instructions and estimates
//! cycles ([`plugin`]: where it is, its arguments, its results).

pub mod contain;
pub mod plugin;
pub mod qemu;
