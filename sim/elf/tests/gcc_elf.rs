//! The analyzer on a real arm-none-eabi-gcc ELF.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use common::{RUST_LEGACY_FN, RUST_V0_OBJ, gcc_elf};
use mcubench_elf::{Category, ElfImage, MemoryRegion, MemoryReport, SymbolBinding, SymbolKind, demangle};

const RAM: u64 = 0x2000_0000;

fn image() -> ElfImage {
    ElfImage::read(gcc_elf()).expect("the GCC test ELF parses")
}

fn mps2_regions() -> Vec<MemoryRegion> {
    vec![MemoryRegion::new("FLASH", 0, 4 << 20), MemoryRegion::new("RAM", RAM, 4 << 20)]
}

#[test]
fn sections_have_vma_and_lma() {
    let image = image();
    let section = |name: &str| image.section_by_name(name).unwrap_or_else(|| panic!("no section {name}")).clone();

    let vectors = section(".isr_vector");
    assert_eq!((vectors.vma, vectors.lma, vectors.size), (0, 0, 64));
    assert!(vectors.alloc && !vectors.write && !vectors.exec);

    let text = section(".text");
    assert!(text.exec && text.size > 0);
    assert_eq!(text.lma, text.vma);

    let rodata = section(".rodata");
    // table (256 × u32) and the 64-byte SBOX.
    assert_eq!(rodata.size, 1024 + 64);

    let data = section(".data");
    assert_eq!(data.vma, RAM);
    assert_eq!(data.size, 256, "64 initialised u32");
    assert!(data.lma < RAM, "the load image of .data is in flash");
    assert_eq!(data.lma, rodata.lma + rodata.size, ".data is loaded right after .rodata");

    let bss = section(".bss");
    assert!(bss.nobits && bss.write);
    assert_eq!(bss.size, 1000);

    assert_eq!(section(".uninit").size, 128);
    assert_eq!(section("._user_heap_stack").size, 0xc00);
}

#[test]
fn symbols_entry_and_vector_table() {
    let image = image();
    let reset = image.symbol("Reset_Handler").expect("Reset_Handler");
    assert_eq!(reset.kind, SymbolKind::Function);
    assert_eq!(reset.binding, SymbolBinding::Global);
    assert!(reset.thumb);
    assert_eq!(reset.address & 1, 0, "Thumb bit cleared");
    assert_eq!(image.entry(), reset.address | 1);

    let table = image.symbol("table").expect("table");
    assert_eq!((table.kind, table.size, table.section.as_deref()), (SymbolKind::Object, 1024, Some(".rodata")));
    let buf = image.symbol("buf").expect("buf");
    assert_eq!((buf.size, buf.section.as_deref()), (1000, Some(".bss")));

    // Linker-script symbols are there too (absolute or section-relative).
    assert_eq!(image.symbol("_stack_start").unwrap().address, RAM + (4 << 20));

    let vt = image.vector_table().expect("vector table");
    assert_eq!(vt.section, ".isr_vector");
    assert_eq!(vt.address, 0);
    assert_eq!(u64::from(vt.initial_sp), RAM + (4 << 20));
    assert_eq!(u64::from(vt.reset), image.entry());
    assert!(image.has_code());

    assert!(image.symbol("no_such_symbol").is_none());
    // Mapping symbols ($t, $d) are not symbols of the image.
    assert!(image.symbols().iter().all(|s| !s.name.starts_with('$')));
}

#[test]
fn rust_names_in_a_real_elf_are_demangled() {
    let image = image();
    let f = image.symbol(RUST_LEGACY_FN).expect("legacy-mangled function");
    assert_eq!(f.demangled, "firmware::crypto::mix_columns");
    let o = image.symbol(RUST_V0_OBJ).expect("v0-mangled object");
    assert_eq!(o.demangled, "firmware::crypto::SBOX");
    assert_eq!(o.size, 64);
}

#[test]
fn symbolize_fault_addresses() {
    let image = image();
    let main = image.symbol("main").unwrap();
    assert_eq!(image.symbolize(main.address), Some(("main".into(), 0)));
    // A PC with the Thumb bit set (as in LR / vector entries) resolves the same way.
    assert_eq!(image.symbolize((main.address + 6) | 1), Some(("main".into(), 6)));
    let f = image.symbol(RUST_LEGACY_FN).unwrap();
    assert_eq!(image.symbolize(f.address + 4), Some(("firmware::crypto::mix_columns".into(), 4)));
    let table = image.symbol("table").unwrap();
    assert_eq!(image.symbolize(table.address + 8), Some(("table".into(), 8)));
    assert_eq!(image.symbolize(0x1fff_0000), None);
}

#[test]
fn report_with_regions() {
    let image = image();
    let regions = mps2_regions();
    let report = MemoryReport::analyze(&image, Some(&regions), 5);
    let size = |n: &str| image.section_by_name(n).unwrap().size;

    let flash = &report.flash;
    assert_eq!(flash.name, "FLASH");
    assert_eq!(flash.capacity, Some(4 << 20));
    assert_eq!(flash.breakdown.code, size(".text"));
    assert_eq!(flash.breakdown.rodata, 64 + 1024 + 64);
    assert_eq!(flash.breakdown.data, 256, "load image of .data");
    assert_eq!((flash.breakdown.bss, flash.breakdown.reservation), (0, 0));
    assert_eq!(flash.used, size(".text") + 64 + 1024 + 64 + 256);

    let ram = &report.ram;
    assert_eq!(ram.name, "RAM");
    assert_eq!(ram.breakdown.data, 256);
    assert_eq!(ram.breakdown.bss, 1000);
    assert_eq!(ram.breakdown.uninit, 128);
    assert_eq!(ram.breakdown.reservation, 0xc00);
    assert_eq!(ram.breakdown.code + ram.breakdown.rodata, 0);
    assert_eq!(ram.used, 256 + 1000 + 128 + 0xc00);
    let expected_percent = ((ram.used as f64 * 100.0 / (4u64 << 20) as f64) * 100.0).round() / 100.0;
    assert_eq!(ram.percent_used, Some(expected_percent));

    let data = report.sections.iter().find(|s| s.name == ".data").unwrap();
    assert_eq!(data.kind, Category::Data);
    assert_eq!(data.region.as_deref(), Some("RAM"));
    assert_eq!(data.load_region.as_deref(), Some("FLASH"));
    let bss = report.sections.iter().find(|s| s.name == ".bss").unwrap();
    assert_eq!((bss.kind, bss.load_region.as_deref()), (Category::Bss, None));
    let heap_stack = report.sections.iter().find(|s| s.name == "._user_heap_stack").unwrap();
    assert_eq!(heap_stack.kind, Category::Reservation);
    // Only allocated sections, sorted by VMA.
    assert!(report.sections.iter().all(|s| s.name != ".comment" && s.name != ".symtab"));
    assert!(report.sections.windows(2).all(|w| w[0].vma <= w[1].vma));

    let stack = report.stack_available.expect("_stack_start is defined");
    assert_eq!(stack.high, RAM + (4 << 20));
    assert_eq!(stack.low, image.symbol("_stack_end").unwrap().address);
    assert_eq!(stack.available, stack.high - stack.low);

    let top: Vec<(&str, u64)> = report.top_symbols.iter().map(|s| (s.name.as_str(), s.size)).collect();
    assert_eq!(&top[..3], &[("table", 1024), ("buf", 1000), ("counters", 256)]);
    assert_eq!(report.top_symbols.len(), 5);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}

#[test]
fn report_by_flags_agrees_with_regions() {
    let image = image();
    let regions = mps2_regions();
    let by_region = MemoryReport::analyze(&image, Some(&regions), 10);
    let by_flags = MemoryReport::analyze(&image, None, 10);
    assert_eq!(by_flags.flash.breakdown, by_region.flash.breakdown);
    assert_eq!(by_flags.ram.breakdown, by_region.ram.breakdown);
    assert_eq!(by_flags.flash.used, by_region.flash.used);
    assert_eq!(by_flags.ram.used, by_region.ram.used);
    assert_eq!((by_flags.flash.capacity, by_flags.flash.percent_used), (None, None));
    assert_eq!(by_flags.sections, by_region.sections, "region names are FLASH/RAM in both");
}

#[test]
fn regions_too_small_warn() {
    let image = image();
    let regions = vec![MemoryRegion::new("FLASH", 0, 256), MemoryRegion::new("RAM", RAM, 1024)];
    let report = MemoryReport::analyze(&image, Some(&regions), 0);
    assert!(report.top_symbols.is_empty());
    assert!(report.warnings.iter().any(|w| w.starts_with("FLASH overflows")));
    assert!(report.warnings.iter().any(|w| w.contains("outside every memory region")));
}

#[test]
fn report_is_deterministic_and_round_trips() {
    let image = image();
    let regions = mps2_regions();
    let a = MemoryReport::analyze(&image, Some(&regions), 8);
    let b = MemoryReport::analyze(&ElfImage::read(gcc_elf()).unwrap(), Some(&regions), 8);
    let json = serde_json::to_string(&a).unwrap();
    assert_eq!(json, serde_json::to_string(&b).unwrap());
    let back: MemoryReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back, a);
}

#[test]
fn snapshot_memory_report() {
    let image = image();
    let regions = mps2_regions();
    let report = MemoryReport::analyze(&image, Some(&regions), 8);
    // All of the project's snapshots live in the top-level snapshots/ directory.
    insta::with_settings!({ snapshot_path => "../../../snapshots", omit_expression => true }, {
        insta::assert_json_snapshot!("gcc_cortex_m4_memory_report", report);
    });
}

#[test]
fn rust_demangling_legacy_and_v0() {
    // Legacy (stable rustc): the hash is dropped for display.
    assert_eq!(demangle("_ZN4core3fmt9Formatter3pad17h1a2b3c4d5e6f7a8bE"), "core::fmt::Formatter::pad");
    assert_eq!(demangle("_ZN3kat4main17hdeadbeefdeadbeefE"), "kat::main");
    // v0 (RUSTC_BOOTSTRAP / -C symbol-mangling-version=v0): crate disambiguators dropped.
    assert_eq!(demangle("_RNvCs1234_7mycrate3foo"), "mycrate::foo");
    assert_eq!(demangle("_RNvMNtCs1234_8firmware6cryptoNtB2_3Aes7encrypt"), "<firmware::crypto::Aes>::encrypt");
    // C names stay as they are.
    assert_eq!(demangle("Reset_Handler"), "Reset_Handler");
    assert_eq!(demangle("_ZN"), "_ZN");
}
