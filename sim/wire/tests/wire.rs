//! Round trips of every wire format (value → text → value), byte compatibility with text captured
//! from a real run, and errors that name the key or line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mcubench_wire::{
    CALLS_KEPT, Call, Core, Cycles, DWT_CYCCNT, Function, FunctionsFile, HEADER, Interval, Marker, Markers, OpenRegion,
    PluginArgs, RegionStats, Results, Site, StackCost, StackProbeRange, WaitStates,
};

const CAPTURED_RESULTS: &str = include_str!("data/kernels-an386.results");
const CAPTURED_FUNCTIONS: &str = include_str!("data/kernels-an386.functions");

/// The `-plugin` option of the captured run, as the host wrote it then.
const CAPTURED_OPTION: &str = "/tmp/capture/old-plugin.so,out=/tmp/capture/kernels-an386.txt,enter=0x400,\
enter_size=20,exit=0x414,exit_size=20,regions=0x2000000c,regions_count=256,core=cortex-m4,\
functions=/tmp/capture/kernels-an386.functions,profile=on,wait=0x0:0x400000:1:1,\
stack=0x2000040c:0x20400000,stack_skip=0x40:0x56,handler=0x428,handler=0x4c0,handler=0x4d8,handler=0x542";

/// Splits a `-plugin` option value the way QEMU does: at single commas, `,,` being a comma.
fn qemu_split(option: &str) -> Vec<String> {
    let mut items = vec![String::new()];
    let mut chars = option.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ',' {
            if chars.peek() == Some(&',') {
                chars.next();
                items.last_mut().unwrap().push(',');
            } else {
                items.push(String::new());
            }
        } else {
            items.last_mut().unwrap().push(c);
        }
    }
    items
}

fn every_argument() -> PluginArgs {
    PluginArgs {
        out: PathBuf::from("/t,mp/out"),
        markers: Some(Markers { enter: (0x100, 24), exit: (0x118, 26), regions: 0x2000_0008, regions_count: 256 }),
        core: Some(Core::CortexM4F),
        functions: Some(PathBuf::from("/f,n")),
        profile: true,
        wait_states: vec![
            WaitStates { start: 0, end: 0x40_0000, fetch: 1, data: 2 },
            WaitStates { start: 0x2000_0000, end: 0x2001_0000, fetch: 0, data: 0 },
        ],
        stack_probe: Some(StackProbeRange { lo: 0x2000_0000, hi: 0x2000_4000, skip: vec![(0x40, 0x60), (0x80, 0x90)] }),
        handlers: vec![0x100, 0x140],
        params: vec![("branch-refill".into(), "2".into()), ("divide".into(), "9".into())],
        memory: mcubench_wire::MemoryConfig {
            flash: vec![mcubench_wire::FlashRegion { start: 0x0800_0000, end: 0x0810_0000, wait_states: 5, line: 16 }],
            prefetch: true,
            icache: Some(mcubench_wire::CacheGeometry { size: 1024, ways: 64, line: 16 }),
            dcache: Some(mcubench_wire::CacheGeometry { size: 128, ways: 8, line: 16 }),
            unified: true,
        },
        region_args: vec![(0, 2), (3, 1)],
        trace: Some(PathBuf::from("/t,r/run.trace")),
        loop_end: true,
        counter: Some("/tmp/x/counter.bin".into()),
        idle: vec![0x1c6c, 0x2000],
    }
}

#[test]
fn arguments_round_trip() {
    for args in
        [every_argument(), PluginArgs::new("/o"), PluginArgs { core: Some(Core::CortexM0Plus), ..PluginArgs::new("o") }]
    {
        assert_eq!(PluginArgs::parse(&args.to_args()), Ok(args.clone()));
        let option = args.to_option(Path::new("/a,b/p.so"));
        let items = qemu_split(&option);
        assert_eq!(items[0], "/a,b/p.so");
        assert_eq!(items[1..], args.to_args()[..]);
        assert_eq!(PluginArgs::parse(&items[1..]), Ok(args));
    }
    for core in Core::ALL {
        let args = PluginArgs { core: Some(core), ..PluginArgs::new("o") };
        assert_eq!(PluginArgs::parse(&args.to_args()).unwrap().core, Some(core));
    }
}

#[test]
fn the_option_is_byte_identical_to_the_captured_one() {
    // The captured run's core=cortex-m4 was the an386 board's core then; the one `Core` calls
    // that board's core `cortex-m4f` now (same model, FP instructions decoded): the only change.
    let args = PluginArgs {
        out: "/tmp/capture/kernels-an386.txt".into(),
        markers: Some(Markers { enter: (0x400, 20), exit: (0x414, 20), regions: 0x2000_000c, regions_count: 256 }),
        core: Some(Core::CortexM4),
        functions: Some("/tmp/capture/kernels-an386.functions".into()),
        profile: true,
        wait_states: vec![WaitStates { start: 0, end: 0x40_0000, fetch: 1, data: 1 }],
        stack_probe: Some(StackProbeRange { lo: 0x2000_040c, hi: 0x2040_0000, skip: vec![(0x40, 0x56)] }),
        handlers: vec![0x428, 0x4c0, 0x4d8, 0x542],
        params: Vec::new(),
        memory: Default::default(),
        region_args: Vec::new(),
        trace: None,
        loop_end: false,
        counter: None,
        idle: Vec::new(),
    };
    assert_eq!(args.to_option(Path::new("/tmp/capture/old-plugin.so")), CAPTURED_OPTION);
    assert_eq!(PluginArgs::parse(&qemu_split(CAPTURED_OPTION)[1..]), Ok(args));
    assert_eq!(
        PluginArgs::new("/o").to_option(Path::new("/p.so")),
        "/p.so,out=/o",
        "without markers or a core: counts only"
    );
}

#[test]
fn parsing_clears_thumb_bits_and_sorts_handlers() {
    let a = PluginArgs::parse(&[
        "out=/tmp/x",
        "enter=0x101",
        "enter_size=8",
        "exit=0x109",
        "exit_size=8",
        "regions=0x20000000",
        "regions_count=256",
        "core=cortex-m4",
        "handler=0x201",
        "handler=0x101",
        "handler=0x200",
        "profile=off",
    ])
    .unwrap();
    let m = a.markers.unwrap();
    assert_eq!(m.enter, (0x100, 8));
    assert_eq!(m.function_at(0x106), Some(Marker::Enter));
    assert_eq!(m.function_at(0x108), Some(Marker::Exit));
    assert_eq!(m.function_at(0x110), None);
    assert_eq!(m.region_id(0x2000_0008), Some(2));
    assert_eq!(m.region_id(0x2000_0009), None);
    assert_eq!(m.region_id(0x2000_0400), None);
    assert_eq!(a.handlers, vec![0x100, 0x200]);
    assert!(!a.profile);
    assert_eq!(PluginArgs::parse(&["core=Cortex-M0+", "out=o"]).unwrap().core, Some(Core::CortexM0Plus));
}

#[test]
fn bad_arguments_are_refused_naming_the_key() {
    let out = |list: &[&'static str]| -> Vec<&'static str> { [&["out=f"], list].concat() };
    for (list, key, expected) in [
        (out(&["enter=1"]), None, "come all together"),
        (out(&["bogus=1"]), Some("bogus"), "unknown argument `bogus`"),
        (vec![], Some("out"), "out=<file>"),
        (out(&["enter"]), None, "argument `enter` is not key=value"),
        (out(&["enter=zz"]), Some("enter"), "argument `enter` is not a number: `zz`"),
        (out(&["core=cortex-a9"]), Some("core"), "unknown core `cortex-a9` (cortex-m0, cortex-m0+, cortex-m3,"),
        (out(&["functions=x"]), Some("functions"), "needs `core=`"),
        (out(&["wait=0:4:1:1"]), Some("wait"), "needs `core=`"),
        (out(&["stack=0:4"]), Some("stack"), "needs `core=`"),
        (out(&["handler=0x100"]), Some("handler"), "needs `core=`"),
        (out(&["core=cortex-m4", "profile=on"]), Some("profile"), "needs `functions=`"),
        (out(&["core=cortex-m4", "profile=yes"]), Some("profile"), "`on` or `off`"),
        (out(&["core=cortex-m4", "wait=0:4:1"]), Some("wait"), "needs 4"),
        (out(&["core=cortex-m4", "wait=8:4:1:1"]), Some("wait"), "empty range"),
        (out(&["core=cortex-m4", "stack=0:0x100000000"]), Some("stack"), "32 bits"),
        (out(&["core=cortex-m4", "handler=0x100000000"]), Some("handler"), "32 bits"),
        (out(&["core=cortex-m4", "stack_skip=0:4"]), Some("stack_skip"), "needs `stack=`"),
        (out(&["param=divide:7"]), Some("param"), "needs `core=`"),
        (out(&["core=cortex-m4", "param=divide"]), Some("param"), "`<name>:<value>`"),
        (out(&["core=cortex-m4", "flash=0:0x100:5:12"]), Some("flash"), "not a power of two"),
        (out(&["core=cortex-m4", "flash=0:0x100:5:16", "icache=1000:2:16"]), Some("icache"), "sets"),
        (out(&["core=cortex-m4", "icache=1024:2:16"]), Some("flash"), "need a `flash=` region"),
        (out(&["core=cortex-m4", "flash=0:0x100:5:16", "prefetch=maybe"]), Some("prefetch"), "`on` or `off`"),
        (out(&["core=cortex-m4", "region_arg=0:2"]), Some("region_arg"), "needs `functions=`"),
        (out(&["core=cortex-m4", "functions=f", "region_arg=0:4"]), Some("region_arg"), "not an argument register"),
        (
            out(&["core=cortex-m4", "functions=f", "region_arg=0:1", "region_arg=0:2"]),
            Some("region_arg"),
            "given twice",
        ),
        (out(&["core=cortex-m4", "functions=f", "region_arg=0"]), Some("region_arg"), "needs 2"),
        (
            out(&["enter=0x100", "enter_size=8", "exit=0x100", "exit_size=8", "regions=0x0", "regions_count=1"]),
            None,
            "overlap",
        ),
        (
            out(&["enter=0x100", "enter_size=0", "exit=0x200", "exit_size=8", "regions=0x0", "regions_count=1"]),
            None,
            "non-zero size",
        ),
    ] {
        let e = PluginArgs::parse(&list).unwrap_err();
        assert!(e.to_string().contains(expected), "{list:?}: {e}");
        assert_eq!(e.key(), key, "{list:?}: {e}");
    }
}

fn stats(n: u64, cycles: Option<(u64, u64, u64)>, stack_low: Option<u32>) -> RegionStats {
    RegionStats { entries: 1, completed: 1, total: n, min: n, max: n, cycles, stack_low, ..RegionStats::default() }
}

/// A function region of three calls from two sites (one with no return address), kept one by one.
fn per_call(with_cycles: bool) -> RegionStats {
    let c = |n: u64| with_cycles.then_some(n);
    let c3 = |a: u64, b: u64, d: u64| with_cycles.then_some((a, b, d));
    RegionStats {
        entries: 4,
        completed: 3,
        total: 60,
        min: 10,
        max: 30,
        cycles: c3(130, 20, 70),
        stack_low: None,
        stack_bytes: None,
        stack_unknown: 0,
        sites: BTreeMap::from([
            (None, Site { completed: 1, total: 30, min: 30, max: 30, cycles: c3(70, 70, 70) }),
            (Some(0x105), Site { completed: 2, total: 30, min: 10, max: 20, cycles: c3(60, 20, 40) }),
        ]),
        calls: vec![
            Call { insns: 10, cycles: c(20), ret: Some(0x105), bytes: None },
            Call { insns: 20, cycles: c(40), ret: Some(0x105), bytes: Some(64) },
            Call { insns: 30, cycles: c(70), ret: None, bytes: Some(0) },
        ],
    }
}

#[test]
fn results_round_trip() {
    let full = Results {
        insns: 1000,
        cycles: Some(Cycles { model: "cortex-m4 model: Cortex-M4 TRM table, P=1, 0 WS".into(), total: Ok(2500) }),
        regions: BTreeMap::from([
            (
                0,
                RegionStats {
                    stack_bytes: Some(256),
                    stack_unknown: 2,
                    ..stats(500, Some((900, 900, 900)), Some(0x2000_0100))
                },
            ),
            (
                3,
                RegionStats {
                    entries: 2,
                    completed: 1,
                    total: 7,
                    min: 7,
                    max: 7,
                    cycles: Some((9, 9, 9)),
                    ..RegionStats::default()
                },
            ),
            (4, RegionStats { entries: 1, cycles: Some((0, 0, 0)), ..RegionStats::default() }),
        ]),
        functions: BTreeMap::from([(1, stats(8, Some((16, 4, 4)), None)), (2, per_call(true))]),
        open: vec![OpenRegion { id: 3, at: 900 }, OpenRegion { id: 4, at: 950 }],
        intervals: BTreeMap::from([((0x100, 0x104), Interval { count: 2, insns: (6, 3, 3), cycles: (8, 4, 4) })]),
        probe: Some(Some(0x2000_00f0)),
        stacks: vec![
            StackCost { frames: vec![Some(0)], cycles: 20, insns: 8 },
            StackCost { frames: vec![Some(0), None, Some(3)], cycles: 4, insns: 2 },
        ],
        errors: vec!["exit of region 2 while region 1 is the innermost open one".into()],
        loop_end: Some(0x1f2),
    };
    let unavailable = Results {
        insns: 10,
        cycles: Some(Cycles { model: "m0".into(), total: Err("undecodable 0x1 at 0x2".into()) }),
        regions: BTreeMap::from([(0, stats(5, None, None))]),
        functions: BTreeMap::from([(0, per_call(false))]),
        probe: Some(None),
        ..Results::default()
    };
    for r in [full, unavailable, Results::default()] {
        let text = r.write();
        assert!(text.starts_with(&format!("{HEADER}\n")) && text.ends_with("\nend\n"), "{text}");
        assert_eq!(Results::parse(&text), Ok(r), "{text}");
    }
    // Free text stays on its line.
    let r = Results {
        cycles: Some(Cycles { model: "a\nb".into(), total: Err("c\r\nd".into()) }),
        errors: vec!["e\nf".into()],
        ..Results::default()
    };
    assert_eq!(r.write(), "mcubench-qemu-plugin/5\ninsns 0\ncycles-unavailable c  d\nmodel a b\nerror e f\nend\n");
}

#[test]
fn sites_and_calls_follow_their_region_line() {
    let r = Results {
        insns: 100,
        cycles: Some(Cycles { model: "m".into(), total: Ok(300) }),
        functions: BTreeMap::from([(2, per_call(true))]),
        ..Results::default()
    };
    assert_eq!(
        r.write(),
        "mcubench-qemu-plugin/5\ninsns 100\ncycles 300\nmodel m\n\
         function id=2 entries=4 completed=3 total=60 min=10 max=30 cycles=130 cycles_min=20 cycles_max=70\n\
         site id=2 completed=1 total=30 min=30 max=30 cycles=70 cycles_min=70 cycles_max=70\n\
         site id=2 ret=261 completed=2 total=30 min=10 max=20 cycles=60 cycles_min=20 cycles_max=40\n\
         call id=2 insns=10 cycles=20 ret=261\n\
         call id=2 insns=20 cycles=40 ret=261 bytes=64\n\
         call id=2 insns=30 cycles=70 bytes=0\n\
         end\n"
    );
    // Cycle fields follow the run: dropped without a cycle total, zeros where a snapshot had none.
    let bare = per_call(true).with_cycles(false);
    assert_eq!(bare, per_call(false));
    let zeros = per_call(false).with_cycles(true);
    assert_eq!(zeros.calls[0].cycles, Some(0));
    assert_eq!(zeros.sites[&None].cycles, Some((0, 0, 0)));
    assert_eq!(CALLS_KEPT, 4096, "documented in docs/src/reference/plugin.md");
}

#[test]
fn the_captured_results_file_parses_and_writes_back_byte_identical() {
    let r = Results::parse(CAPTURED_RESULTS).unwrap();
    assert_eq!(r.write(), CAPTURED_RESULTS);
    assert_eq!(r.insns, 11_535_232);
    assert_eq!(r.cycle_total(), Some(24_121_076));
    assert_eq!(r.cycles.as_ref().unwrap().model, "cortex-m4 model: Cortex-M4 TRM table, P=1, custom WS");
    assert_eq!(r.regions.len(), 9);
    assert_eq!(r.single_activation(1), Ok(211));
    assert_eq!(r.single_activation_cycles(1), Ok(Some(528)));
    assert_eq!(r.regions[&3].stack_low, Some(541_065_128));
    let svc = &r.functions[&1];
    assert_eq!((svc.completed, svc.total, svc.cycles), (1, 3, Some((32, 32, 32))));
    // Both kernels are called from mb_run_kernel's `blx r8`, which returns to 0x52e.
    assert_eq!(svc.calls, [Call { insns: 3, cycles: Some(32), ret: Some(0x52e), bytes: None }]);
    assert_eq!(svc.sites.keys().collect::<Vec<_>>(), [&Some(0x52e)]);
    assert_eq!(r.functions[&0].calls[0].ret, Some(0x52e));
    assert_eq!(r.probe, Some(Some(541_064_064)));
    assert_eq!(r.stacks.len(), 38);
    assert_eq!(r.stacks[2], StackCost { frames: vec![Some(1), Some(17)], cycles: 155, insns: 62 });
    assert!(r.open.is_empty() && r.errors.is_empty());
}

#[test]
fn cycle_counter_intervals_round_trip() {
    let mut once = Interval::default();
    once.add(40, 57);
    let mut loop_ = Interval::default();
    for (i, c) in [(9, 14), (7, 11), (9, 16)] {
        loop_.add(i, c);
    }
    assert_eq!(loop_, Interval { count: 3, insns: (25, 7, 9), cycles: (41, 11, 16) });
    let r = Results {
        insns: 100,
        cycles: Some(Cycles { model: "m".into(), total: Ok(300) }),
        intervals: BTreeMap::from([((0x200, 0x20c), once), ((0x210, 0x210), loop_)]),
        ..Results::default()
    };
    let text = r.write();
    assert_eq!(
        text,
        "mcubench-qemu-plugin/5\ninsns 100\ncycles 300\nmodel m\n\
         interval from=512 to=524 count=1 total=40 min=40 max=40 cycles=57 cycles_min=57 cycles_max=57\n\
         interval from=528 to=528 count=3 total=25 min=7 max=9 cycles=41 cycles_min=11 cycles_max=16\n\
         end\n"
    );
    assert_eq!(Results::parse(&text).unwrap(), r);
    assert_eq!(DWT_CYCCNT, 0xE000_1004);
}

#[test]
fn single_activations() {
    let r = Results::parse(
        "mcubench-qemu-plugin/5\ninsns 1000\n\
         region id=0 entries=1 completed=1 total=500 min=500 max=500\n\
         region id=3 entries=2 completed=1 total=7 min=7 max=7\nopen id=3 at=900\nerror oops\nend\n",
    )
    .unwrap();
    assert_eq!(r.single_activation(0), Ok(500));
    assert_eq!(r.single_activation_cycles(0), Ok(None));
    assert!(r.single_activation(3).unwrap_err().contains("entered 2 times"));
    assert!(r.single_activation(4).unwrap_err().contains("no activation"));
    assert_eq!(r.open, vec![OpenRegion { id: 3, at: 900 }]);
    assert_eq!(r.errors, vec!["oops".to_string()]);
}

/// A function region line with one completed activation.
const F0: &str = "function id=0 entries=1 completed=1 total=1 min=1 max=1";

#[test]
fn malformed_results_are_errors_naming_the_line() {
    let h = HEADER;
    for (text, line, expected) in [
        (String::new(), Some(1), "not a `mcubench-qemu-plugin/5`".to_string()),
        ("mcubench-qemu-plugin/3\ninsns 1\nend\n".into(), Some(1), "not a `mcubench-qemu-plugin/5`".into()),
        (format!("{h}\ninsns 5\n"), None, "partial results file".into()),
        (format!("{h}\nend\n"), None, "lacks `insns`".into()),
        (format!("{h}\ninsns x\nend\n"), Some(2), "line 2: bad instruction count: `insns x`".into()),
        (format!("{h}\ninsns 1\nregion id=1 entries=1\nend\n"), Some(3), "line 3: no `completed`".into()),
        (
            format!("{h}\ninsns 1\nregion id=1 entries=1 completed=1 total=1 min=1 max=1 x=1\nend\n"),
            Some(3),
            "unknown field `x`".into(),
        ),
        (
            format!("{h}\ninsns 1\nregion id=1 entries=1 entries=1 completed=1 total=1 min=1 max=1\nend\n"),
            Some(3),
            "repeated field".into(),
        ),
        (
            format!(
                "{h}\ninsns 1\nregion id=1 entries=1 completed=1 total=1 min=1 max=1\n\
                 region id=1 entries=1 completed=1 total=1 min=1 max=1\nend\n"
            ),
            Some(4),
            "region listed twice".into(),
        ),
        (format!("{h}\ninsns 1\nend\nmore\n"), Some(4), "after `end`".into()),
        (format!("{h}\ninsns 1\nbogus\nend\n"), Some(3), "line 3: unknown line: `bogus`".into()),
        (format!("{h}\ninsns 1\ncycles 2\nend\n"), None, "without a model".into()),
        (format!("{h}\ninsns 1\nmodel m\nend\n"), None, "without a model".into()),
        (
            format!("{h}\ninsns 1\ncycles 2\nmodel m\nregion id=0 entries=1 completed=1 total=1 min=1 max=1\nend\n"),
            Some(5),
            "no `cycles`".into(),
        ),
        (
            format!("{h}\ninsns 1\nregion id=0 entries=1 completed=1 total=1 min=1 max=1 cycles=1\nend\n"),
            Some(3),
            "unknown field `cycles`".into(),
        ),
        (format!("{h}\ninsns 1\ncycles 2\ncycles 3\nmodel m\nend\n"), Some(4), "cycles given twice".into()),
        (format!("{h}\ninsns 1\nstack cycles=1 frames=0\nend\n"), Some(3), "stack needs".into()),
        (format!("{h}\ninsns 1\nstack cycles=1 insns=1 frames=0 x=1\nend\n"), Some(3), "bad stack field".into()),
        (format!("{h}\ninsns 1\nprobe low=x\nend\n"), Some(3), "bad probe".into()),
        (format!("{h}\ninsns 1\nprobe low=none\nprobe low=none\nend\n"), Some(4), "probe given twice".into()),
        (format!("{h}\ninsns 1\nopen id=1\nend\n"), Some(3), "no `at`".into()),
        (
            format!(
                "{h}\ninsns 1\ninterval from=1 to=2 count=1 total=1 min=1 max=1 cycles=1 cycles_min=1 cycles_max=1\nend\n"
            ),
            Some(3),
            "an interval without a cycle total".into(),
        ),
        (
            format!(
                "{h}\ninsns 1\ncycles 2\nmodel m\ninterval from=1 to=2 count=1 total=1 min=1 max=1 cycles=1\nend\n"
            ),
            Some(5),
            "no `cycles_min`".into(),
        ),
        (
            format!(
                "{h}\ninsns 1\ncycles 2\nmodel m\ninterval from=1 to=2 count=0 total=0 min=0 max=0 cycles=0 cycles_min=0 cycles_max=0\nend\n"
            ),
            Some(5),
            "never ran".into(),
        ),
        (format!("{h}\ninsns 1\ncall id=0 insns=1\nend\n"), Some(3), "`call` line does not follow its region".into()),
        (
            format!("{h}\ninsns 1\n{F0}\nsite id=1 completed=1 total=1 min=1 max=1\nend\n"),
            Some(4),
            "does not follow".into(),
        ),
        (format!("{h}\ninsns 1\n{F0}\nopen id=3 at=1\ncall id=0 insns=1\nend\n"), Some(5), "does not follow".into()),
        (format!("{h}\ninsns 1\n{F0}\ncall id=0 insns=1\ncall id=0 insns=1\nend\n"), Some(5), "more calls than".into()),
        (format!("{h}\ninsns 1\n{F0}\ncall id=0\nend\n"), Some(4), "no `insns`".into()),
        (format!("{h}\ninsns 1\n{F0}\ncall id=0 insns=1 cycles=2\nend\n"), Some(4), "unknown field `cycles`".into()),
        (format!("{h}\ninsns 1\n{F0}\ncall id=0 insns=1 ret=4294967296\nend\n"), Some(4), "ret out of range".into()),
        (format!("{h}\ninsns 1\n{F0}\ncall id=0 insns=1 to=1\nend\n"), Some(4), "unknown field `to`".into()),
        (
            format!(
                "{h}\ninsns 1\n{F0}\nsite id=0 ret=1 completed=1 total=1 min=1 max=1\nsite id=0 ret=1 completed=1 total=1 min=1 max=1\nend\n"
            ),
            Some(5),
            "site listed twice".into(),
        ),
        (
            format!("{h}\ninsns 1\n{F0}\nsite id=0 ret=1 completed=2 total=1 min=1 max=1\nend\n"),
            Some(4),
            "sites hold more activations".into(),
        ),
        (
            format!(
                "{h}\ninsns 1\nfunction id=0 entries=2 completed=2 total=2 min=1 max=1\nsite id=0 completed=1 total=1 min=1 max=1\nend\n"
            ),
            Some(5),
            "the sites of region 0 hold 1 of its 2 completed activations".into(),
        ),
        (
            format!(
                "{h}\ninsns 1\ncycles 1\nmodel m\n{F0} cycles=1 cycles_min=1 cycles_max=1\nsite id=0 completed=1 total=1 min=1 max=1\nend\n"
            ),
            Some(6),
            "no `cycles`".into(),
        ),
    ] {
        let e = Results::parse(&text).unwrap_err();
        assert!(e.to_string().contains(&expected), "{text:?}: {e}");
        assert_eq!(e.line(), line, "{text:?}: {e}");
    }
}

#[test]
fn functions_files_round_trip() {
    let file = FunctionsFile {
        functions: vec![
            Function { start: 0x100, size: 16, region: Some(0) },
            Function { start: 0x200, size: 16, region: None },
            Function { start: 0x300, size: 2, region: Some(7) },
        ],
    };
    assert_eq!(file.write(), "0x100 16 0\n0x200 16\n0x300 2 7\n");
    assert_eq!(FunctionsFile::parse(&file.write()), Ok(file));
    assert_eq!(FunctionsFile::default().write(), "");
    let captured = FunctionsFile::parse(CAPTURED_FUNCTIONS).unwrap();
    assert_eq!(captured.write(), CAPTURED_FUNCTIONS);
    assert_eq!(captured.functions.iter().filter(|f| f.region.is_some()).count(), 2);
    assert_eq!(FunctionsFile::parse("0x101 256\n").unwrap().functions[0].start, 0x100, "the Thumb bit is cleared");
}

#[test]
fn malformed_functions_files_are_errors_naming_the_line() {
    for (text, line) in
        [("0x100 16\n100 16\n", 2), ("0x100\n", 1), ("0x100 16 1 2\n", 1), ("0x100 16 x\n", 1), ("0x1g 16\n", 1)]
    {
        let e = FunctionsFile::parse(text).unwrap_err();
        assert_eq!(e.line(), Some(line), "{text:?}: {e}");
        assert!(e.to_string().starts_with(&format!("functions file line {line}: `")), "{e}");
    }
}
