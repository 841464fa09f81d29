//! Timing of the static stack analyzer (a benchmark command, not a test):
//!
//! ```text
//! cargo run --release -p mcubench-stack --example stack_bench [-- [--runs N] [ELF...]]
//! ```
//!
//! Prints, for each ELF, the functions, instructions decoded, `.text` size and the wall time
//! of [`analyze`] (best of N runs, default 5) for
//! - (a) the largest Thumb firmware ELF under `firmware/target` (build outputs: every
//!   `<triple>/<profile>/<bin>`; build one with `cargo build --release` in `firmware/` or
//!   `mcubench run` first), or the ELFs given on the command line;
//! - (b) a synthetic ELF with more than 1 MiB of `.text`: generated C (thousands of functions
//!   with calls between them, switches that become TBB/TBH tables, function-pointer tables,
//!   local arrays, some floating point) compiled with `arm-none-eabi-gcc -mcpu=cortex-m4
//!   -mthumb -O2`, a minimal linker script and a vector table (reset and SysTick roots). It is
//!   generated deterministically and cached in the system temp directory.
//!
//! Target: under 1 s per ELF.

use std::cell::Cell;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use mcubench_elf::ElfImage;
use mcubench_stack::{Frame, InsnSource, StackOptions, analyze, analyze_with};
use mcubench_thumb::{Arch, DecodeError, Decoder, Insn};

/// Counts the instructions the analyzer asks the decoder for.
struct Counting {
    decoder: Decoder,
    insns: Cell<usize>,
}

impl InsnSource for Counting {
    fn decode_block(&self, addr: u32, bytes: &[u8]) -> Vec<Result<Insn, DecodeError>> {
        let out = InsnSource::decode_block(&self.decoder, addr, bytes);
        self.insns.set(self.insns.get() + out.iter().filter(|r| r.is_ok()).count());
        out
    }
}

/// Architecture and FPU from the path's target triple (C ELFs: Cortex-M4F).
fn arch_of(path: &Path) -> (Arch, bool) {
    let p = path.to_string_lossy();
    if p.contains("thumbv6m") {
        (Arch::V6M, false)
    } else if p.contains("thumbv7m") {
        (Arch::V7M, false)
    } else if p.contains("thumbv8m.main") {
        (Arch::V8MMain, p.contains("eabihf"))
    } else {
        (Arch::V7EM, !p.contains("thumbv7em-none-eabi/"))
    }
}

fn text_size(image: &ElfImage) -> u64 {
    image.sections().iter().filter(|s| s.exec && s.alloc && !s.nobits).map(|s| s.size).sum()
}

fn bench(label: &str, path: &Path, runs: usize) {
    let image = ElfImage::read(path).unwrap_or_else(|e| panic!("{e}"));
    let (arch, fpu) = arch_of(path);
    let options = StackOptions { arch, fpu, ..StackOptions::default() };
    let counting = Counting { decoder: Decoder::new(arch, fpu).expect("decoder"), insns: Cell::new(0) };
    let report = analyze_with(&image, &options, &counting);
    let mut best = Duration::MAX;
    for _ in 0..runs {
        let t = Instant::now();
        let again = analyze(&image, &options).expect("decoder");
        best = best.min(t.elapsed());
        assert_eq!(again.functions.len(), report.functions.len());
    }
    let known = report.functions.iter().filter(|f| matches!(f.frame, Frame::Known { .. })).count();
    let calls: usize = report.functions.iter().map(|f| f.calls.len()).sum();
    println!("{label}: {}", path.display());
    println!(
        "  {arch:?}{}: {} functions ({known} with a known frame), {} instructions decoded, {calls} call sites, \
         .text {} B ({:.2} MiB)",
        if fpu { "+FPU" } else { "" },
        report.functions.len(),
        counting.insns.get(),
        text_size(&image),
        text_size(&image) as f64 / (1024.0 * 1024.0)
    );
    let reset = report.roots.iter().find(|r| r.role == "reset").and_then(|r| r.bound.bytes());
    println!(
        "  analysis: {:.1} ms wall (best of {runs}); reset bound {reset:?} B, MSP bound {:?} B",
        best.as_secs_f64() * 1e3,
        report.msp.bytes()
    );
}

/// Whether `path` is a 32-bit little-endian ARM executable.
fn is_arm_exec(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = [0u8; 20];
    let ok = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok();
    ok && head[..4] == *b"\x7fELF" && head[4] == 1 && head[5] == 1 && head[16] == 2 && head[18] == 40
}

/// The ARM executable under `dir` with the most code, skipping cargo's intermediate
/// directories.
fn largest_firmware(dir: &Path) -> Option<PathBuf> {
    let mut best: Option<(u64, PathBuf)> = None;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                let name = e.file_name();
                if !matches!(name.to_str(), Some("deps" | "build" | "incremental" | ".fingerprint" | "examples")) {
                    stack.push(p);
                }
            } else if ft.is_file() && is_arm_exec(&p) {
                let Ok(image) = ElfImage::read(&p) else { continue };
                let size = text_size(&image);
                if best.as_ref().is_none_or(|(s, bp)| size > *s || (size == *s && p < *bp)) {
                    best = Some((size, p));
                }
            }
        }
    }
    best.map(|(_, p)| p)
}

// ---- synthetic ELF ----------------------------------------------------------------------------

/// Deterministic pseudo-random numbers (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const FUNCTIONS: usize = 6000;
const FILES: usize = 12;
const TABLE: usize = 64;
/// Bump when the generator changes (names the cache directory).
const GENERATOR_VERSION: u32 = 3;

/// C source of function `i`: a local array, a loop, a switch with calls to lower-numbered
/// functions and (when `indirect`) a call through the function-pointer table, whose entries
/// make no table calls: the call graph is a DAG and every root has a bound.
fn function_source(i: usize, indirect: bool, rng: &mut Rng) -> String {
    let mut s = String::new();
    let words = [0, 2, 4, 8, 16, 24, 40, 64][rng.below(8)];
    let _ = writeln!(s, "__attribute__((noinline)) int f{i}(int a, int b) {{");
    let _ = writeln!(s, "  int acc = a ^ {};", rng.next() as u32 as i32);
    if words > 0 {
        let _ = writeln!(s, "  volatile int buf[{words}];");
        let _ = writeln!(s, "  for (int j = 0; j < {words}; j++) buf[j] = acc + j * b;");
        let _ = writeln!(
            s,
            "  for (int j = 0; j < (b & 7) + 3; j++) acc = acc * {} + buf[(j * 5 + a) & {}];",
            rng.below(97) | 1,
            words - 1
        );
    } else {
        let _ = writeln!(
            s,
            "  for (int j = 0; j < (b & 7) + 3; j++) acc = (acc << 3) ^ (acc >> {}) ^ j;",
            1 + rng.below(20)
        );
    }
    if rng.below(6) == 0 {
        let _ = writeln!(s, "  float x = (float)acc * {}.5f;", rng.below(100));
        let _ = writeln!(s, "  for (int j = 0; j < (a & 3) + 2; j++) x = x * 0.75f + (float)j;");
        let _ = writeln!(s, "  acc += (int)x;");
    }
    let cases = 4 + rng.below(13);
    let _ = writeln!(s, "  switch ((unsigned)(a + b) % {}u) {{", cases + 1);
    for c in 0..cases {
        let body = match rng.below(5) {
            // Table entries are leaves (no calls at all): the table cannot close a cycle.
            _ if i == 0 || !indirect => format!("acc += {};", rng.below(1000)),
            0 | 1 => format!("acc += f{}(acc, b + {c});", rng.below(i)),
            2 => format!("acc ^= f{}(b, acc) * {};", rng.below(i), 1 + rng.below(9)),
            3 if indirect => format!("acc += table[(unsigned)(acc >> 3) % {TABLE}u](acc, {c});"),
            _ => format!("acc = (acc * {}) ^ (b >> {});", rng.below(1000) | 1, rng.below(31)),
        };
        let _ = writeln!(s, "  case {c}: {body} break;");
    }
    let _ = writeln!(s, "  default: acc -= b; break;\n  }}");
    if words > 0 {
        let _ = writeln!(s, "  return acc + buf[(unsigned)a % {words}u];\n}}");
    } else {
        let _ = writeln!(s, "  return acc;\n}}");
    }
    s
}

/// Function in slot `k` of the function-pointer table: spread over the whole range.
fn table_entry(k: usize) -> usize {
    k * (FUNCTIONS / TABLE) + 7
}

fn is_table_entry(i: usize) -> bool {
    i >= 7 && (i - 7).is_multiple_of(FUNCTIONS / TABLE) && (i - 7) / (FUNCTIONS / TABLE) < TABLE
}

const LINKER_SCRIPT: &str = "\
MEMORY { FLASH (rx) : ORIGIN = 0x08000000, LENGTH = 16M
         RAM (rwx)  : ORIGIN = 0x20000000, LENGTH = 1M }
ENTRY(Reset_Handler)
SECTIONS {
  .vectors : { KEEP(*(.vectors)) } > FLASH
  .text : { *(.text .text.*) } > FLASH
  .rodata : { *(.rodata .rodata.*) } > FLASH
  .data : { *(.data .data.*) } > RAM AT > FLASH
  .bss (NOLOAD) : { *(.bss .bss.* COMMON) } > RAM
  _estack = ORIGIN(RAM) + LENGTH(RAM);
}
";

/// Generates and compiles the synthetic firmware (cached); returns the ELF's path.
fn synthetic_elf() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcubench-stack-bench-v{GENERATOR_VERSION}-{FUNCTIONS}"));
    let elf = dir.join("synthetic.elf");
    if elf.exists() {
        return elf;
    }
    std::fs::create_dir_all(&dir).expect("create the synthetic firmware's directory");
    let mut rng = Rng(0x5eed_57ac);
    let header = format!("typedef int (*fp_t)(int, int);\nextern fp_t const table[{TABLE}];\n");
    let mut decls = String::new();
    for i in 0..FUNCTIONS {
        let _ = writeln!(decls, "int f{i}(int a, int b);");
    }
    let mut sources = Vec::new();
    let per_file = FUNCTIONS.div_ceil(FILES);
    for k in 0..FILES {
        let mut text = format!("{header}{decls}");
        for i in k * per_file..((k + 1) * per_file).min(FUNCTIONS) {
            text.push_str(&function_source(i, !is_table_entry(i), &mut rng));
        }
        let path = dir.join(format!("gen{k}.c"));
        std::fs::write(&path, text).expect("write generated C");
        sources.push(path);
    }
    // Function-pointer table, vector table and roots.
    let mut main = format!("{header}{decls}fp_t const table[{TABLE}] = {{");
    for k in 0..TABLE {
        let _ = write!(main, "f{}, ", table_entry(k));
    }
    main.push_str("};\n");
    let _ = writeln!(
        main,
        "extern unsigned _estack;\nvoid Reset_Handler(void);\nvoid SysTick_Handler(void);\n\
         void Default_Handler(void) {{ for (;;) {{}} }}\n\
         __attribute__((section(\".vectors\"), used)) void *const vectors[16] = {{\n\
           (void *)&_estack, (void *)Reset_Handler, (void *)Default_Handler, (void *)Default_Handler,\n\
           [15] = (void *)SysTick_Handler }};\n\
         volatile int sink;\n\
         void SysTick_Handler(void) {{ sink = f{}(sink, 1); }}\n\
         void Reset_Handler(void) {{\n  for (int i = 0; i < {FUNCTIONS}; i += {}) sink += f{}(sink, i) + f{}(i, sink);\n  for (;;) {{}}\n}}",
        rng.below(FUNCTIONS / 10),
        FUNCTIONS / 100,
        FUNCTIONS - 1,
        FUNCTIONS - 2,
    );
    let main_path = dir.join("main.c");
    std::fs::write(&main_path, main).expect("write generated C");
    sources.push(main_path);
    let ld = dir.join("link.ld");
    std::fs::write(&ld, LINKER_SCRIPT).expect("write linker script");

    let flags = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-O2", "-ffreestanding"];
    // Compile the files in parallel, then link.
    let children: Vec<_> = sources
        .iter()
        .map(|src| {
            Command::new("arm-none-eabi-gcc")
                .args(flags)
                .arg("-c")
                .arg(src)
                .arg("-o")
                .arg(src.with_extension("o"))
                .spawn()
                .expect("run arm-none-eabi-gcc (apt-get install gcc-arm-none-eabi)")
        })
        .collect();
    for mut c in children {
        assert!(c.wait().expect("wait for gcc").success(), "arm-none-eabi-gcc failed");
    }
    let tmp = dir.join("synthetic.elf.tmp");
    let ok = Command::new("arm-none-eabi-gcc")
        .args(flags)
        .args(["-nostartfiles", "-nostdlib", "-T"])
        .arg(&ld)
        .args(sources.iter().map(|s| s.with_extension("o")))
        .arg("-lgcc")
        .arg("-o")
        .arg(&tmp)
        .status()
        .expect("run arm-none-eabi-gcc");
    assert!(ok.success(), "linking the synthetic firmware failed");
    std::fs::rename(&tmp, &elf).expect("rename the synthetic ELF");
    elf
}

fn main() {
    let mut runs = 5;
    let mut paths = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--runs" {
            runs = args.next().and_then(|n| n.parse().ok()).expect("--runs N");
        } else {
            paths.push(PathBuf::from(a));
        }
    }
    if paths.is_empty() {
        let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../firmware/target");
        match largest_firmware(&target) {
            Some(p) => bench("(a) largest firmware ELF under firmware/target", &p, runs),
            None => println!(
                "(a) no firmware ELF under {}: build one (cd firmware && cargo build --release --target \
                 thumbv7em-none-eabihf --bin kat)",
                target.display()
            ),
        }
    } else {
        for p in &paths {
            bench("(a) given ELF", p, runs);
        }
    }
    let synthetic = synthetic_elf();
    bench("(b) synthetic ELF (generated C, arm-none-eabi-gcc -O2)", &synthetic, runs);
}
