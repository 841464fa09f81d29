//! Test firmware for trait-object calls (sim/stack/tests/stack_vtable.rs builds it with rustc
//! alone for thumbv7m-none-eabi, opt-level 2, linked by dyn_calls.ld). Four vtables: two of
//! `Shape` (`area` in slot 3) and two of `core::fmt::Write` (`write_str`, `write_char`,
//! `write_fmt` in slots 3, 4, 5). Hand-checked call sites:
//! - `total_area`: `s.area()` on each `&dyn Shape` of a slice (`ldr r0, [r6, #8]!; ldr r1,
//!   [r6, #4]; ldr r1, [r1, #12]; blx r1`): slot 3;
//! - `Log::line`: `self.out.write_str(..)` twice on the `&mut dyn Write` field (`ldrd r4, r0,
//!   [r0]; ldr r5, [r0, #12]`): slot 3;
//! - `emit`: `write!(out, ..)` on a `&mut dyn Write` argument (r0, r1): `write_fmt`, slot 5;
//! - core's own: `Formatter::pad_integral` writes through `Formatter.buf`, its `write_prefix`
//!   through the `(buf, vtable)` pair it takes as arguments.
#![no_std]
#![no_main]
use core::fmt::{self, Write};
use core::hint::black_box;

pub struct Count(usize);
impl Write for Count {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}
pub struct Buf([u8; 64], usize);
impl Write for Buf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for &b in s.as_bytes() {
            if self.1 < 64 { self.0[self.1] = b; self.1 += 1; }
        }
        Ok(())
    }
}
pub trait Shape {
    fn area(&self) -> u32;
}
pub struct Square(u32);
pub struct Rect(u32, u32);
impl Shape for Square {
    fn area(&self) -> u32 { self.0 * self.0 }
}
impl Shape for Rect {
    fn area(&self) -> u32 { black_box([self.0; 40]).iter().sum::<u32>() * self.1 }
}
/// A logger holding a `&mut dyn Write`: its writes load the fat pointer from the struct.
pub struct Log<'a> { pub out: &'a mut dyn Write }
impl Log<'_> {
    #[inline(never)]
    pub fn line(&mut self, s: &str) { let _ = self.out.write_str(s); let _ = self.out.write_str("\n"); }
}
#[inline(never)]
#[no_mangle]
pub fn total_area(shapes: &[&dyn Shape]) -> u32 {
    shapes.iter().map(|s| s.area()).sum()
}
#[inline(never)]
#[no_mangle]
pub fn emit(out: &mut dyn Write, x: u32) -> bool {
    write!(out, "{x}").is_ok()
}
#[no_mangle]
pub extern "C" fn Reset() -> ! {
    let (a, b) = (Square(3), Rect(2, 5));
    let shapes: [&dyn Shape; 2] = [black_box(&a), black_box(&b)];
    let n = total_area(black_box(&shapes));
    let mut c = Count(0);
    let mut buf = Buf([0; 64], 0);
    let outs: [&mut dyn Write; 2] = [&mut c, &mut buf];
    for o in outs {
        emit(o, n);
        Log { out: o }.line("x");
    }
    loop { black_box(n); }
}
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! { loop {} }
#[link_section = ".isr_vector"]
#[no_mangle]
pub static VECTORS: [unsafe extern "C" fn() -> !; 1] = [Reset];
