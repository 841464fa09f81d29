//! Memory-system microbenchmarks with hand-derived stall cycles: a loop run from flash at 5 wait
//! states (the STM32F407 at 168 MHz, RM0090 §3.5.1 Table 6) with no accelerator, with the
//! prefetch only, and with prefetch and instruction cache (ST's ART), cold first pass against
//! warm passes; data loads through a data cache; SRAM at zero wait states.

use mcubench_thumb::Decoder;
use mcubench_timing::memory::{Cache, CacheGeometry, FlashRegion, MemoryConfig, MemorySystem};
use mcubench_timing::{Core, Model};

const FLASH: FlashRegion = FlashRegion { start: 0x0800_0000, end: 0x0810_0000, wait_states: 5, line: 16 };
/// RM0090 §3.5.2: 64 lines of 128 bits (I-cache), 8 lines of 128 bits (D-cache), LRU.
const ART_I: CacheGeometry = CacheGeometry { size: 1024, ways: 64, line: 16 };
const ART_D: CacheGeometry = CacheGeometry { size: 128, ways: 8, line: 16 };

/// The loop at `at` (16-byte aligned): ten `adds r1, #1`, `subs r0, #1`, `bne` to the start.
/// 24 bytes: flash line `at` holds instructions 0..=7 (8 cycles at 0 WS), line `at + 16` holds
/// the last four (4 cycles, +P = 1 when the branch is taken).
fn loop_block(at: u32) -> Vec<mcubench_thumb::Insn> {
    let mut hw = vec![0x3101u16; 10];
    hw.push(0x3801);
    hw.push(0xd1f3); // bne at: offset -26 from at + 0x16 + 4
    let bytes: Vec<u8> = hw.iter().flat_map(|h| h.to_le_bytes()).collect();
    let (insns, err) = Decoder::for_core(Core::CortexM4F).unwrap().decode_block(at, &bytes);
    assert!(err.is_none());
    insns
}

/// Stall cycles of each of `n` passes of the loop.
fn passes(config: MemoryConfig, at: u32, n: usize) -> Vec<u64> {
    let model = Model::new(Core::CortexM4F);
    let insns = loop_block(at);
    assert_eq!(model.block(&insns).fall_through, 12, "the core's own cycles per pass, before the refill");
    let mut memory = MemorySystem::new(config);
    let plan = memory.plan(&model, &insns);
    (0..n).map(|_| memory.fetch(&plan, 0)).collect()
}

fn flash_only(prefetch: bool, icache: Option<CacheGeometry>) -> MemoryConfig {
    MemoryConfig { flash: vec![FLASH], prefetch, icache, dcache: None, unified: false }
}

#[test]
fn a_loop_from_flash_at_5_wait_states_without_an_accelerator() {
    // Every pass reads both lines anew (the line buffer holds the other one): 2 × 5.
    assert_eq!(passes(flash_only(false, None), 0x0800_0100, 3), [10, 10, 10]);
}

#[test]
fn the_prefetch_hides_the_sequential_line() {
    // The branch target's line costs 5; the second line was read while the first executed for
    // 8 cycles, more than the 5 + 1 a read takes: no stall.
    assert_eq!(passes(flash_only(true, None), 0x0800_0100, 3), [5, 5, 5]);
    // At 10 wait states the read takes 11 cycles: 11 - 8 = 3 of them show.
    let slow = MemoryConfig { flash: vec![FlashRegion { wait_states: 10, ..FLASH }], ..flash_only(true, None) };
    assert_eq!(passes(slow, 0x0800_0100, 2), [13, 13]);
}

#[test]
fn the_art_cache_makes_warm_passes_free() {
    // Cold first pass: the target line misses (5), the next is prefetched (0). Warm: both hit.
    assert_eq!(passes(flash_only(true, Some(ART_I)), 0x0800_0100, 4), [5, 0, 0, 0]);
    // Without the prefetch the cold pass pays both lines.
    assert_eq!(passes(flash_only(false, Some(ART_I)), 0x0800_0100, 3), [10, 0, 0]);
}

#[test]
fn code_in_sram_has_no_wait_states() {
    assert_eq!(passes(flash_only(false, None), 0x2000_0100, 3), [0, 0, 0]);
    let model = Model::new(Core::CortexM4F);
    assert!(MemorySystem::new(flash_only(true, Some(ART_I))).plan(&model, &loop_block(0x2000_0100)).is_empty());
}

#[test]
fn a_loop_in_one_line_stays_in_the_line_buffer() {
    // subs r0, #1; bne .-2 at 0x08000200: one line; only the first pass reads it.
    let bytes: Vec<u8> = [0x3801u16, 0xd1fd].iter().flat_map(|h| h.to_le_bytes()).collect();
    let (insns, _) = Decoder::for_core(Core::CortexM4F).unwrap().decode_block(0x0800_0200, &bytes);
    let model = Model::new(Core::CortexM4F);
    let mut memory = MemorySystem::new(flash_only(false, None));
    let plan = memory.plan(&model, &insns);
    assert_eq!(plan.lines.len(), 1);
    assert_eq!((0..3).map(|_| memory.fetch(&plan, 0)).collect::<Vec<_>>(), [5, 0, 0]);
}

#[test]
fn data_loads_from_flash_through_the_data_cache() {
    // Without a data cache: a line is read once for loads in a row from it, again after a load
    // from another flash line; SRAM never stalls, and a load from SRAM in between leaves the
    // flash's line buffer alone (SRAM is on another bus: RM0090 §2.1).
    let mut without = MemorySystem::new(flash_only(true, Some(ART_I)));
    assert_eq!(
        [0x0800_1000, 0x0800_1004, 0x2000_0000, 0x0800_1008, 0x0800_1010, 0x0800_1000].map(|a| without.load(a, 4)),
        [5, 0, 0, 0, 5, 5]
    );
    // An 8-byte load across two lines reads both, the same as two 4-byte loads (QEMU 10 reports
    // LDRD as one access, QEMU 7.2 as two).
    let mut across = MemorySystem::new(flash_only(false, None));
    assert_eq!(across.load(0x0800_100c, 8), 10);
    let mut split = MemorySystem::new(flash_only(false, None));
    assert_eq!(split.load(0x0800_100c, 4) + split.load(0x0800_1010, 4), 10);
    let mut with = MemorySystem::new(MemoryConfig { dcache: Some(ART_D), ..flash_only(true, Some(ART_I)) });
    assert_eq!(
        [0x0800_1000, 0x0800_1010, 0x0800_1004, 0x2000_0000, 0x0800_1014].map(|a| with.load(a, 4)),
        [5, 5, 0, 0, 0],
        "lines come back from the data cache"
    );
    // Nine lines through an 8-line cache, then the first again: evicted (LRU).
    let mut cycle = MemorySystem::new(MemoryConfig { dcache: Some(ART_D), ..flash_only(false, None) });
    let first: u64 = (0..9).map(|i| cycle.load(0x0800_2000 + 16 * i, 4)).sum();
    assert_eq!((first, cycle.load(0x0800_2000, 4)), (45, 5));
    // One cache for code and data (unified): a load of a line the code already brought in hits.
    let mut unified = MemorySystem::new(MemoryConfig { unified: true, ..flash_only(false, Some(ART_I)) });
    assert_eq!([0x0800_3000, 0x0800_3010, 0x0800_3008].map(|a| unified.load(a, 4)), [5, 5, 0]);
}

#[test]
fn a_two_way_cache_evicts_the_least_recently_used_line() {
    // 4 sets × 2 ways × 16 bytes: lines 0x000, 0x040, 0x080 all map to set 0.
    let mut c = Cache::new(CacheGeometry { size: 128, ways: 2, line: 16 });
    assert_eq!(
        [0x000, 0x040, 0x000, 0x080, 0x000, 0x040].map(|a| c.access(a)),
        [false, false, true, false, true, false]
    );
}

#[test]
fn the_large_lru_behaves_as_a_plain_lru_list() {
    // The 64-way set (hash index + recency list) against a plain most-recent-first list, on a
    // deterministic pseudo-random walk over 200 lines with locality.
    let geometry = CacheGeometry { size: 1024, ways: 64, line: 16 };
    let mut cache = Cache::new(geometry);
    let mut list: Vec<u32> = Vec::new();
    let mut x: u32 = 12345;
    let mut hits = 0;
    for _ in 0..200_000 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let line = (x >> 8) % 97 + if x & 0x8000 != 0 { (x >> 20) % 150 } else { 0 };
        let want = match list.iter().position(|&t| t == line) {
            Some(i) => {
                list[..=i].rotate_right(1);
                true
            }
            None => {
                if list.len() == 64 {
                    list.pop();
                }
                list.insert(0, line);
                false
            }
        };
        assert_eq!(cache.access(line * 16), want);
        hits += usize::from(want);
    }
    assert!(hits > 10_000 && hits < 190_000, "{hits}: the walk should both hit and miss");
}

/// Straight-line code QEMU translates as one block (7.2) or cuts into two (10 cuts long blocks):
/// the prefetch hides the same cycles either way, wherever the cut falls, because the cycles
/// spent in a line add up over the blocks that run in it.
#[test]
fn where_a_block_is_cut_does_not_change_the_stalls() {
    // 24 `adds r1, #1` from 0x08000300: three 16-byte lines of 8 one-cycle instructions each.
    let bytes: Vec<u8> = [0x3101u16; 24].iter().flat_map(|h| h.to_le_bytes()).collect();
    let (insns, _) = Decoder::for_core(Core::CortexM4F).unwrap().decode_block(0x0800_0300, &bytes);
    let model = Model::new(Core::CortexM4F);
    // 7 wait states: reading a line takes 8 cycles, exactly what the core spends in the previous
    // one, so the prefetch hides all of it only when all 8 are counted.
    let config = MemoryConfig { flash: vec![FlashRegion { wait_states: 7, ..FLASH }], ..flash_only(true, None) };
    let whole = {
        let mut memory = MemorySystem::new(config.clone());
        let plan = memory.plan(&model, &insns);
        memory.fetch(&plan, 0)
    };
    assert_eq!(whole, 7, "the first line costs its wait states; the next two are prefetched in time");
    for cut in 1..insns.len() {
        let mut memory = MemorySystem::new(config.clone());
        let (a, b) = insns.split_at(cut);
        let (first, second) = (memory.plan(&model, a), memory.plan(&model, b));
        // The second block continues the first: its price after the first one's exit context,
        // against the plan's fresh price (0 here: `adds` do not pair on the M4).
        let (_, exit) = model.block_after(None, a);
        let correction = model.block_after(exit.as_ref(), b).0.fall_through as i64 - model.block(b).fall_through as i64;
        let stalls = memory.fetch(&first, 0) + memory.fetch(&second, correction);
        assert_eq!(stalls, whole, "cut after instruction {cut}");
    }
}
