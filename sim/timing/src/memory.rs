//! The memory system of a real part: flash wait states behind line buffers, a sequential
//! prefetch, instruction and data caches; SRAM and TCM (every address outside the flash regions)
//! have none. The core models price instructions at zero wait states; this module adds the stall
//! cycles of instruction fetches and data loads that reach the flash.
//!
//! It works in two halves, because what a fetch costs depends on what ran before:
//! - at translation, [`MemorySystem::plan`] lists the flash lines a block's instructions come
//!   from, and how many cycles the core spends in each (what a prefetch of the next line hides);
//! - at run time, [`MemorySystem::fetch`] walks that plan against the state of the line buffer,
//!   the prefetch and the instruction cache, and [`MemorySystem::load`] prices one data load.
//!
//! The rules (each an approximation of what the reference manuals describe; the part profiles
//! name their documents):
//! - **Line buffer.** Flash is read a line at a time (`line` bytes, the flash interface width:
//!   128 bits on the STM32F4, RM0090 §3.5.2; 64 bits on the STM32L4, RM0351 §3.3.3). Code that
//!   stays in the line last read costs nothing more; a new line costs `wait_states` stall cycles
//!   (the "latency" of the part's wait-state table: RM0090 §3.5.1 Table 6).
//! - **Prefetch.** With the prefetch on, the next sequential line is read while the current one
//!   executes (RM0090 §3.5.2 "Prefetch on the I-Code bus"). Reading a line takes
//!   `wait_states + 1` cycles, so moving on to it after `c` cycles in the current line stalls
//!   `min(wait_states, wait_states + 1 - c)` cycles (0 once `c > wait_states`); `c` counts
//!   every cycle since the line was read, over all the blocks that ran in it (a loop inside the
//!   line; straight-line code QEMU cut into several blocks, where QEMU 10 cuts and 7.2 does not,
//!   so both give the same estimate). A branch target
//!   is not prefetched: it costs the full `wait_states` unless a buffer or cache holds it.
//! - **Instruction cache.** Lines that miss every buffer are copied into the cache (LRU in each
//!   set); a later fetch that hits costs nothing (RM0090 §3.5.2 "Instruction cache memory":
//!   "provided without inserting any delay"). The cache is looked up at its own line size.
//! - **Data loads.** A load from a flash region costs `wait_states` per flash line it touches
//!   unless the previous load read that line (the flash returns whole lines) or the data cache holds
//!   its line (RM0090 §3.5.2 "Data management": literal pools through the D-cache), or, with
//!   `unified` and no data cache, the instruction cache holds it (one cache on the code bus:
//!   the STM32H5's ICACHE, RM0481 §"ICACHE"; the RP2040's XIP cache, RP2040 datasheet §2.6.3.1).
//!   Stores are not priced here (flash is not written by ordinary stores).
//!
//! What is not modelled: bus contention between fetches and loads on the same flash, the core's
//! own prefetch queue (the core model's P covers it at 0 WS), critical-word-first refills of
//! caches with lines longer than the flash width (the whole line is read for one stall), and
//! cache maintenance by the firmware (caches start empty and are never flushed).

use mcubench_thumb::Insn;
pub use mcubench_wire::{CacheGeometry, FlashRegion, MemoryConfig};

use crate::{Context, Model};

/// A set-associative cache of line tags with least-recently-used replacement per set.
#[derive(Debug, Clone)]
pub struct Cache {
    geometry: CacheGeometry,
    sets: Vec<Set>,
    line_shift: u32,
    /// log2 of the number of sets when it is a power of two (the usual case): the set and tag
    /// then come from a mask and a shift instead of a division on every lookup.
    set_bits: Option<u32>,
}

/// One set. Up to [`SMALL_WAYS`] ways: the tags in a list, most recently used first (a scan of
/// a few words). More (the fully associative ART caches: 64 ways): an O(1) LRU, a hash index
/// from tag to slot and a doubly linked recency list, because a code loop larger than the cache
/// misses on every line and a scan and shift of 64 tags per miss made the model ten times
/// slower than the core model alone (`bench_plugin`).
#[derive(Debug, Clone)]
enum Set {
    Small(Vec<u32>),
    Large(Box<Lru>),
}

const SMALL_WAYS: u32 = 8;

/// Slot `NONE`: no slot.
const NONE: u16 = u16::MAX;

#[derive(Debug, Clone)]
struct Lru {
    tags: Vec<u32>,
    prev: Vec<u16>,
    next: Vec<u16>,
    /// Most and least recently used slots.
    head: u16,
    tail: u16,
    /// Open addressing, linear probing: slot + 1 (0: empty); twice the ways, a power of two.
    index: Vec<u16>,
}

impl Lru {
    fn new(ways: u32) -> Lru {
        let ways = ways.min(u32::from(NONE) - 1) as usize;
        Lru {
            tags: Vec::with_capacity(ways),
            prev: Vec::with_capacity(ways),
            next: Vec::with_capacity(ways),
            head: NONE,
            tail: NONE,
            index: vec![0; (ways * 2).next_power_of_two()],
        }
    }

    fn bucket(&self, tag: u32) -> usize {
        (tag.wrapping_mul(0x9e37_79b1) >> 7) as usize & (self.index.len() - 1)
    }

    /// The index position of `tag` (its slot there), or the empty position where it would go.
    fn find(&self, tag: u32) -> (usize, Option<u16>) {
        let mut i = self.bucket(tag);
        loop {
            match self.index[i] {
                0 => return (i, None),
                s if self.tags[usize::from(s - 1)] == tag => return (i, Some(s - 1)),
                _ => i = (i + 1) & (self.index.len() - 1),
            }
        }
    }

    /// Removes index position `i`, moving later entries of its probe run back (no tombstones).
    fn unindex(&mut self, mut i: usize) {
        let mask = self.index.len() - 1;
        self.index[i] = 0;
        let mut j = (i + 1) & mask;
        while self.index[j] != 0 {
            let home = self.bucket(self.tags[usize::from(self.index[j] - 1)]);
            // Move the entry at j back to i if its home is not cyclically in (i, j].
            let between = if i <= j { i < home && home <= j } else { i < home || home <= j };
            if !between {
                self.index[i] = self.index[j];
                self.index[j] = 0;
                i = j;
            }
            j = (j + 1) & mask;
        }
    }

    fn unlink(&mut self, s: u16) {
        let (p, n) = (self.prev[usize::from(s)], self.next[usize::from(s)]);
        if p == NONE {
            self.head = n
        } else {
            self.next[usize::from(p)] = n
        }
        if n == NONE { self.tail = p } else { self.prev[usize::from(n)] = p }
    }

    fn push_front(&mut self, s: u16) {
        self.prev[usize::from(s)] = NONE;
        self.next[usize::from(s)] = self.head;
        if self.head != NONE {
            self.prev[usize::from(self.head)] = s;
        }
        self.head = s;
        if self.tail == NONE {
            self.tail = s;
        }
    }

    fn access(&mut self, tag: u32, ways: usize) -> bool {
        if let (_, Some(s)) = self.find(tag) {
            if self.head != s {
                self.unlink(s);
                self.push_front(s);
            }
            return true;
        }
        let slot = if self.tags.len() < ways {
            self.tags.push(tag);
            self.prev.push(NONE);
            self.next.push(NONE);
            (self.tags.len() - 1) as u16
        } else {
            // Evict the least recently used line and reuse its slot.
            let victim = self.tail;
            let (vpos, _) = self.find(self.tags[usize::from(victim)]);
            self.unindex(vpos);
            self.unlink(victim);
            self.tags[usize::from(victim)] = tag;
            victim
        };
        // After the eviction moved entries back, the empty position for the tag (found again).
        let (pos, _) = self.find(tag);
        self.index[pos] = slot + 1;
        self.push_front(slot);
        false
    }
}

impl Cache {
    pub fn new(geometry: CacheGeometry) -> Cache {
        let sets = geometry.sets().max(1) as usize;
        let set = if geometry.ways <= SMALL_WAYS {
            Set::Small(Vec::with_capacity(geometry.ways as usize))
        } else {
            Set::Large(Box::new(Lru::new(geometry.ways)))
        };
        let set_bits = sets.is_power_of_two().then(|| sets.trailing_zeros());
        Cache { geometry, sets: vec![set; sets], line_shift: geometry.line.max(1).trailing_zeros(), set_bits }
    }

    pub fn geometry(&self) -> CacheGeometry {
        self.geometry
    }

    /// Looks `addr`'s line up; on a miss the line is filled (evicting the set's least recently
    /// used line). Returns whether it hit.
    pub fn access(&mut self, addr: u32) -> bool {
        let line = addr >> self.line_shift;
        let ways = self.geometry.ways as usize;
        let (set, tag) = match self.set_bits {
            Some(bits) => ((line & ((1 << bits) - 1)) as usize, line >> bits),
            None => {
                let n = self.sets.len() as u32;
                ((line % n) as usize, line / n)
            }
        };
        match &mut self.sets[set] {
            Set::Large(lru) => lru.access(tag, ways),
            Set::Small(set) => match set.iter().position(|&t| t == tag) {
                Some(0) => true,
                Some(i) => {
                    set[..=i].rotate_right(1);
                    true
                }
                None => {
                    if set.len() == ways {
                        set.pop();
                    }
                    set.insert(0, tag);
                    false
                }
            },
        }
    }
}

/// One flash line a block fetches from, in execution order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedLine {
    /// The line's first address.
    pub addr: u32,
    /// The flash region's wait states.
    pub wait_states: u32,
    /// Cycles the core spends in this line before it needs the block's next line (or, for the
    /// last line, before the block ends): what a prefetch of the following line can hide.
    pub spent: u32,
}

/// A block's instruction fetches from flash, computed at translation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchPlan {
    pub lines: Vec<PlannedLine>,
}

impl FetchPlan {
    /// No instruction of the block comes from flash: nothing to do at run time.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

/// The memory system's configuration and run-time state (buffers, caches).
#[derive(Debug, Clone)]
pub struct MemorySystem {
    config: MemoryConfig,
    icache: Option<Cache>,
    dcache: Option<Cache>,
    /// The flash line in the fetch line buffer (`u32::MAX`: none yet).
    current: u32,
    /// Cycles the core has spent in `current` so far (over as many blocks as ran in it).
    spent: u32,
    /// The flash line the last data load from flash read (`u32::MAX`: none yet).
    data_line: u32,
}

impl MemorySystem {
    pub fn new(config: MemoryConfig) -> MemorySystem {
        MemorySystem {
            icache: config.icache.map(Cache::new),
            dcache: config.dcache.map(Cache::new),
            config,
            current: u32::MAX,
            spent: 0,
            data_line: u32::MAX,
        }
    }

    pub fn config(&self) -> &MemoryConfig {
        &self.config
    }

    /// For the model's name in reports: `memory system: flash 5 WS per 16 B line, prefetch,
    /// icache 1024 B 64-way, dcache 128 B 8-way` (it follows the core model's name, which then omits `0 WS`).
    pub fn describe(&self) -> String {
        let c = &self.config;
        let mut parts: Vec<String> = c
            .flash
            .iter()
            .map(|f| format!("flash 0x{:08x}..0x{:08x} {} WS per {} B line", f.start, f.end, f.wait_states, f.line))
            .collect();
        parts.push(if c.prefetch { "prefetch" } else { "no prefetch" }.to_string());
        let cache = |name: &str, g: Option<CacheGeometry>| match g {
            Some(g) => format!("{name} {} B {}-way", g.size, g.ways),
            None => format!("no {name}"),
        };
        parts.push(cache("icache", c.icache));
        parts.push(cache("dcache", c.dcache));
        if c.unified {
            parts.push("loads through the icache".into());
        }
        format!("memory system: {}", parts.join(", "))
    }

    /// The flash region holding `addr`, if any.
    pub fn flash_at(&self, addr: u32) -> Option<&FlashRegion> {
        self.config.flash.iter().find(|f| f.start <= addr && addr < f.end)
    }

    /// Translation time: the flash lines `insns` (one block, in order) are fetched from, with the
    /// cycles `model` prices the core spending in each. Empty when no instruction is in flash.
    pub fn plan(&self, model: &Model, insns: &[Insn]) -> FetchPlan {
        let mut plan = FetchPlan::default();
        if insns.iter().all(|i| self.flash_at(i.addr).is_none()) {
            return plan;
        }
        let mut context: Option<Context> = None;
        for insn in insns {
            if let Some(f) = self.flash_at(insn.addr) {
                let first = insn.addr & !(f.line - 1);
                let last = insn.addr.wrapping_add(u32::from(insn.len) - 1) & !(f.line - 1);
                for addr in [first, last] {
                    if plan.lines.last().is_none_or(|l| l.addr != addr) {
                        plan.lines.push(PlannedLine { addr, wait_states: f.wait_states, spent: 0 });
                    }
                }
            }
            // This instruction's own cycles, priced after its predecessor as the block prices it,
            // are spent in the line it was fetched from last.
            let (cost, exit) = model.block_after(context.as_ref(), std::slice::from_ref(insn));
            if let Some(line) = plan.lines.last_mut() {
                line.spent = line.spent.saturating_add(cost.fall_through as u32);
            }
            context = exit;
        }
        plan
    }

    /// Run time: stall cycles of the instruction fetches of a block whose plan is `plan`.
    ///
    /// `correction`: cycles the block costs beyond what the plan priced (negative: fewer) because
    /// it continues the previous block's straight-line code, whose pairing reaches across the cut
    /// (the plan prices the block as if it started afresh); they are spent in its first line.
    pub fn fetch(&mut self, plan: &FetchPlan, correction: i64) -> u64 {
        let mut stall = 0u64;
        for (i, line) in plan.lines.iter().enumerate() {
            let mut spent = line.spent;
            if i == 0 {
                spent = u32::try_from((i64::from(spent) + correction).max(0)).unwrap_or(u32::MAX);
            }
            if line.addr == self.current {
                // Still in the line the blocks before ran in (straight-line code QEMU cut into
                // several blocks, or a loop inside one line): the time spent in it adds up, so
                // where QEMU cuts a block does not change what the prefetch hides.
                self.spent = self.spent.saturating_add(spent);
                continue;
            }
            stall += u64::from(self.fetch_line(line.addr, line.wait_states, self.spent));
            self.spent = spent;
        }
        stall
    }

    fn fetch_line(&mut self, addr: u32, wait_states: u32, hide: u32) -> u32 {
        let previous = self.current;
        self.current = addr;
        if addr == previous {
            return 0;
        }
        // The line buffer missed. A cache lookup fills the line on a miss in either case.
        if let Some(cache) = &mut self.icache
            && cache.access(addr)
        {
            return 0;
        }
        let width = self.flash_at(addr).map_or(16, |f| f.line);
        let sequential = previous != u32::MAX && previous.wrapping_add(width) == addr;
        if self.config.prefetch && sequential {
            (wait_states + 1).saturating_sub(hide).min(wait_states)
        } else {
            wait_states
        }
    }

    /// Run time: stall cycles of a data load of `size` bytes from `addr`: one flash read per
    /// line it touches, none for the line the previous load read (the flash returns a whole line
    /// per read, so LDRD, LDM and neighbouring loads from one line read it once; this also makes
    /// the price independent of how QEMU splits an access: QEMU 7.2 reports LDRD as two 4-byte
    /// accesses, QEMU 9 and later as one of 8 bytes).
    pub fn load(&mut self, addr: u32, size: u32) -> u64 {
        // A load from SRAM or a peripheral does not reach the flash interface, whose line buffer
        // keeps the line the last flash load read (RM0090 §2.1 Figure 1: flash on the I-Code and
        // D-Code buses, SRAM on the S-bus). So such loads change nothing, and the plugin need not
        // watch loads that cannot reach flash (from the stack).
        let Some(f) = self.flash_at(addr) else { return 0 };
        let (wait_states, width) = (f.wait_states, f.line);
        let first = addr & !(width - 1);
        let last = addr.wrapping_add(size.max(1) - 1) & !(width - 1);
        let mut stall = 0;
        let mut line = first;
        loop {
            // Every load looks the cache up (a hit refreshes the line's LRU order, a miss fills
            // it); a miss stalls unless the flash's line buffer still holds the line.
            let buffered = line == self.data_line;
            self.data_line = line;
            let cache = match (&mut self.dcache, &mut self.icache) {
                (Some(d), _) => Some(d),
                (None, Some(i)) if self.config.unified => Some(i),
                _ => None,
            };
            if !cache.is_some_and(|c| c.access(line)) && !buffered {
                stall += u64::from(wait_states);
            }
            if line == last {
                break;
            }
            line = line.wrapping_add(width);
        }
        stall
    }
}
