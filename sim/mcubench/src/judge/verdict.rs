//! Turns what QEMU did and what the firmware said into one outcome with a message that says what
//! to do. QEMU's exit code alone is never a verdict: a reset under `-no-reboot` exits 0, a QEMU
//! setup error exits 1 like a failing firmware, and a hang never exits. A run passes only with exit
//! 0, an `end` record, and every KAT record passing.

use serde::{Deserialize, Serialize};

use crate::config::rules::{ConsoleRules, ExitRule};
use crate::exec::Execution;
use crate::exec::qemu::{ProcessEnd, QemuRun};
use crate::judge::console;
use crate::judge::protocol::{KatResult, ProtocolError, Transcript};
use crate::report::ConsoleStream;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Pass,
    Fail,
    Fault,
    Timeout,
    NoVerdict,
    SetupError,
}

impl Outcome {
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Fault => "fault",
            Outcome::Timeout => "timeout",
            Outcome::NoVerdict => "no-verdict",
            Outcome::SetupError => "setup-error",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub outcome: Outcome,
    /// Empty for a pass.
    pub message: String,
}

impl Verdict {
    pub(crate) fn new(outcome: Outcome, message: impl Into<String>) -> Verdict {
        Verdict { outcome, message: message.into() }
    }
}

/// The verdict for one run. A contained run that never started its guest is a setup error; any
/// refused host access makes a run that would pass (or say nothing) fail, and is named in every
/// message. `symbolize` turns an address into `name+0xoff` for fault messages.
pub fn judge(
    execution: &Execution,
    transcript: Result<&Transcript, &ProtocolError>,
    rules: Option<Rules<'_>>,
    timeout_secs: f64,
    symbolize: &dyn Fn(u32) -> String,
) -> Verdict {
    if let Some(e) = &execution.start_error {
        // A limit under a second ran out while QEMU was still starting (it takes tens to hundreds
        // of milliseconds): the limit is too short. A QEMU that takes longer is stuck: set-up.
        if execution.run.end == ProcessEnd::TimedOut && timeout_secs < 1.0 {
            return Verdict::new(
                Outcome::Timeout,
                format!(
                    "no exit within {timeout_secs} s, and QEMU had not started the guest by then ({e}): the scenario's \
                     `timeout` is shorter than QEMU's start-up"
                ),
            );
        }
        return Verdict::new(
            Outcome::SetupError,
            format!("QEMU never started the guest ({e}); QEMU: {}", execution.run.command),
        );
    }
    let base = judge_run(&execution.run, transcript, rules, timeout_secs, symbolize);
    if execution.events.is_empty() {
        return base;
    }
    let mut attempts: Vec<String> = execution.events.iter().map(|e| e.to_string()).collect();
    if execution.events_dropped > 0 {
        attempts.push(format!("and {} more", execution.events_dropped));
    }
    let outcome = match base.outcome {
        Outcome::Pass | Outcome::NoVerdict => Outcome::Fail,
        other => other,
    };
    let mut message = format!(
        "the firmware tried to reach the host through semihosting, which mcubench refuses (only console \
         output and exit are allowed): {}",
        attempts.join("; ")
    );
    if !base.message.is_empty() {
        message.push_str("; besides: ");
        message.push_str(&base.message);
    }
    Verdict { outcome, message }
}

/// The verdict from QEMU's end, its own stderr and the firmware's records alone. `run.stderr`
/// holds only what QEMU and the plugin wrote (the firmware's SYS_WRITEC/SYS_WRITE0 go to
/// `run.console`), so what it says about a lockup or a setup problem cannot be forged.
pub fn judge_run(
    run: &QemuRun,
    transcript: Result<&Transcript, &ProtocolError>,
    rules: Option<Rules<'_>>,
    timeout_secs: f64,
    symbolize: &dyn Fn(u32) -> String,
) -> Verdict {
    let stderr_tail = || {
        let lines: Vec<&str> = run.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(3)..].join(" | ")
    };
    // A lockup is seen on stderr whatever else happened.
    if run.stderr.contains("Lockup") {
        let at = crate::exec::qemu::lockup_pc(&run.stderr)
            .map(|pc| format!(" at pc=0x{pc:08x} ({})", symbolize(pc)))
            .unwrap_or_default();
        return Verdict::new(
            Outcome::Fault,
            format!(
                "the core locked up{at}: a fault while handling a fault (e.g. a bad vector table or stack pointer); QEMU aborted"
            ),
        );
    }
    // A run that was stopped is judged by why it was stopped, even if its output (cut short, or
    // garbage) is not a valid transcript.
    let last_record = || match transcript {
        Ok(t) => t.last_record_summary(),
        Err(e) => format!("none readable ({e})"),
    };
    match run.end {
        ProcessEnd::TimedOut => {
            return Verdict::new(
                Outcome::Timeout,
                format!(
                    "no exit within {timeout_secs} s; last record: {}; the firmware hangs or the scenario's `timeout` is too short",
                    last_record()
                ),
            );
        }
        ProcessEnd::OutputLimit => {
            return Verdict::new(
                Outcome::Fail,
                format!(
                    "the firmware wrote more than {} MiB and was stopped; last record: {}",
                    crate::exec::qemu::OUTPUT_LIMIT / (1024 * 1024),
                    last_record()
                ),
            );
        }
        _ => {}
    }
    let t = match transcript {
        Ok(t) => t,
        Err(e) => {
            return Verdict::new(
                Outcome::Fail,
                format!("{e}; fix the firmware's record output (see docs/src/reference/protocol.md)"),
            );
        }
    };
    if let Some(f) = t.fault() {
        return Verdict::new(
            Outcome::Fault,
            format!(
                "HardFault at pc=0x{:08x} ({}), lr=0x{:08x}, {}",
                f.pc,
                symbolize(f.pc),
                f.lr,
                crate::judge::fault::status_text(f.cfsr, f.hfsr)
            ),
        );
    }
    if let Some(msg) = t.panic_message() {
        return Verdict::new(Outcome::Fail, format!("firmware panicked: {msg}"));
    }
    let began = t.records.iter().any(|(_, r)| matches!(r, crate::judge::protocol::Record::Begin { .. }));
    let code = match run.end {
        ProcessEnd::Exited(code) => code,
        // `-no-reboot` turns a reset into an exit with status 0.
        ProcessEnd::Reset => 0,
        ProcessEnd::Signalled(sig) => {
            return Verdict::new(
                Outcome::Fault,
                format!("QEMU was killed by signal {sig}; last record: {}; {}", t.last_record_summary(), stderr_tail()),
            );
        }
        ProcessEnd::TimedOut | ProcessEnd::OutputLimit => unreachable!("handled above"),
    };
    let silent = rules.is_none_or(|r| r.console.is_empty());
    if code != 0 && t.records.is_empty() && silent && !run.stderr.trim().is_empty() {
        return Verdict::new(
            Outcome::SetupError,
            format!("QEMU exited {code} before the firmware said anything: {}", stderr_tail()),
        );
    }
    let failed: Vec<String> = t
        .kats()
        .filter(|k| k.result == KatResult::Fail)
        .map(|k| format!("{}: expected {} got {}", k.id, k.expected.as_deref().unwrap_or("?"), k.out))
        .collect();
    if !failed.is_empty() {
        return Verdict::new(Outcome::Fail, format!("{} KAT(s) failed: {}", failed.len(), failed.join("; ")));
    }
    if let Some(rules) = rules {
        let end = match (rules.looped, &run.end) {
            (Some(pc), _) => End::Loop(pc),
            (None, ProcessEnd::Reset) => End::Reset,
            (None, _) => End::Exit(code),
        };
        let mut verdict = judge_console(rules, end);
        // Where a failing run ended says where to look (e.g. an `Error_Handler`'s loop).
        if verdict.outcome == Outcome::Fail
            && let Some(pc) = rules.looped
        {
            verdict.message.push_str(&format!("; the run ended at the loop at pc=0x{pc:08x} ({})", symbolize(pc)));
        }
        return verdict;
    }
    let Some(end) = t.end() else {
        let what = if began { t.last_record_summary() } else { "no `begin` record".into() };
        if run.end == ProcessEnd::Reset {
            return Verdict::new(
                Outcome::NoVerdict,
                format!("the firmware {} before its `end` record (last: {what})", End::Reset.described()),
            );
        }
        return Verdict::new(
            Outcome::NoVerdict,
            format!(
                "QEMU exited {code} without an `end` record (last: {what}); the firmware stopped early, reset, or does not speak the mcubench protocol"
            ),
        );
    };
    let passed = t.kats().count() as u32;
    if end.failed != 0 || end.passed != passed {
        return Verdict::new(
            Outcome::Fail,
            format!(
                "the `end` record claims passed={} failed={} but {} passing KAT record(s) arrived",
                end.passed, end.failed, passed
            ),
        );
    }
    if code != 0 {
        return Verdict::new(Outcome::Fail, format!("the firmware reported success but QEMU exited {code}"));
    }
    Verdict::new(Outcome::Pass, "")
}

/// The scenario's verdict rules with the console they read.
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    pub rules: &'a ConsoleRules,
    pub console: &'a [ConsoleStream],
    /// The run ended at the branch to itself at this address (`verdict.exit: loop`).
    pub looped: Option<u32>,
}

/// How a run that ended by itself ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Exit(i32),
    /// At the branch to itself at this address (`verdict.exit: loop`).
    Loop(u32),
    /// The firmware asked for a system reset.
    Reset,
}

impl End {
    /// `the firmware …`
    fn described(self) -> String {
        match self {
            End::Exit(code) => format!("exited with code {code}"),
            End::Loop(_) => "ended in a branch to itself".into(),
            End::Reset => "reset itself (a system reset request, e.g. `NVIC_SystemReset()`; QEMU runs with \
                           `-no-reboot`, so the run ended there)"
                .into(),
        }
    }
}

/// The verdict of a run that ended by itself (`end`), from the scenario's `verdict:` rules: a
/// line that matches a `reject` pattern, an end other than `exit`, an `expect` pattern that
/// never matched (after the previous one's line, when `ordered`) each fail the run.
fn judge_console(r: Rules<'_>, end: End) -> Verdict {
    let lines = console::lines(r.console);
    let tail = || console::tail(r.console, 3);
    for (place, line) in &lines {
        if let Some(p) = r.rules.reject.iter().find(|p| p.0.is_match(line)) {
            return Verdict::new(
                Outcome::Fail,
                format!("{place}: `{line}` matches the `reject` pattern `{}`", p.as_str()),
            );
        }
    }
    match (r.rules.exit, end) {
        (ExitRule::Loop, End::Loop(_)) | (ExitRule::Reset, End::Reset) => {}
        (ExitRule::Code(want), End::Exit(code)) if code == want => {}
        (ExitRule::Code(want), End::Exit(code)) => {
            return Verdict::new(
                Outcome::Fail,
                format!("the firmware exited with code {code}, not {want} (`verdict.exit`); {}", tail()),
            );
        }
        (rule, end) => {
            let wanted = match rule {
                ExitRule::Code(code) => format!("exiting with code {code}"),
                ExitRule::Loop => "ending in a branch to itself".into(),
                ExitRule::Reset => "resetting".into(),
            };
            return Verdict::new(
                Outcome::Fail,
                format!("the firmware {} instead of {wanted} (`verdict.exit: {rule}`); {}", end.described(), tail()),
            );
        }
    }
    let mut from = 0;
    let mut previous: Option<&str> = None;
    for p in &r.rules.expect {
        let start = if r.rules.ordered { from } else { 0 };
        match lines[start..].iter().position(|(_, line)| p.0.is_match(line)) {
            Some(i) => {
                from = start + i + 1;
                previous = Some(p.as_str());
            }
            None => {
                let after = match (r.rules.ordered, previous) {
                    (true, Some(prev)) => format!(" after the line that matched `{prev}`"),
                    _ => String::new(),
                };
                return Verdict::new(
                    Outcome::Fail,
                    format!("no console line matched the `expect` pattern `{}`{after}; {}", p.as_str(), tail()),
                );
            }
        }
    }
    Verdict::new(Outcome::Pass, "")
}

/// Checks the firmware's `kat` records against the host's copy of the vectors (the scenario's
/// `firmware.vectors`). A run that would pass fails on any disagreement: a `result=pass` whose
/// output differs from the vector, an id the vectors lack, a wrong `alg`/`op`, a vector that never
/// ran. A failing run keeps its outcome and gets the disagreements (not the missing vectors)
/// appended, since they may explain it. Other outcomes (fault, timeout, no verdict, setup error)
/// are left alone: they already say why KATs are missing, and an unreadable transcript has no
/// records to check.
pub fn check_vectors(
    verdict: Verdict,
    transcript: Result<&Transcript, &crate::judge::protocol::ProtocolError>,
    vectors: &crate::config::vectors::Vectors,
) -> Verdict {
    let Ok(t) = transcript else { return verdict };
    match verdict.outcome {
        Outcome::Pass => {
            let mut problems = vectors.mismatches(t);
            problems.extend(vectors.missing(t));
            if problems.is_empty() { verdict } else { Verdict::new(Outcome::Fail, problems.join("; ")) }
        }
        Outcome::Fail => {
            let problems = vectors.mismatches(t);
            if problems.is_empty() {
                verdict
            } else {
                Verdict::new(
                    Outcome::Fail,
                    format!("{}; against the vectors: {}", verdict.message, problems.join("; ")),
                )
            }
        }
        _ => verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(end: ProcessEnd, stdout: &str, stderr: &str) -> QemuRun {
        QemuRun {
            end,
            stdout: stdout.into(),
            stderr: stderr.into(),
            console: String::new(),
            uarts: Vec::new(),
            command: String::new(),
            at_timeout: None,
        }
    }

    fn verdict(end: ProcessEnd, stdout: &str, stderr: &str) -> Verdict {
        let r = run(end, stdout, stderr);
        let t = Transcript::parse(&r.stdout);
        judge_run(&r, t.as_ref(), None, 5.0, &|pc| format!("f@{pc:x}"))
    }

    const KAT: &str = "@mcubench/1 kat id=a alg=SHA3-256 op=hash result=pass ticks=1 stack=8 out=00\n";
    const BEGIN: &str = "@mcubench/1 begin fw=kat\n";
    const END: &str = "@mcubench/1 end passed=1 failed=0 stack=64\n";

    #[test]
    fn pass_needs_exit_zero_end_record_and_consistent_counts() {
        let ok = format!("{BEGIN}{KAT}@mcubench/1 end passed=1 failed=0 stack=64\n");
        assert_eq!(verdict(ProcessEnd::Exited(0), &ok, "").outcome, Outcome::Pass);
        assert_eq!(verdict(ProcessEnd::Exited(1), &ok, "").outcome, Outcome::Fail);
        let forged = format!("{BEGIN}{KAT}@mcubench/1 end passed=2 failed=0 stack=64\n");
        assert_eq!(verdict(ProcessEnd::Exited(0), &forged, "").outcome, Outcome::Fail);
    }

    #[test]
    fn exit_zero_without_end_is_no_verdict() {
        let v = verdict(ProcessEnd::Exited(0), &format!("{BEGIN}{KAT}"), "");
        assert_eq!(v.outcome, Outcome::NoVerdict);
        assert!(v.message.contains("last: line 2: kat id=a"), "{}", v.message);
    }

    #[test]
    fn failing_kat_names_expected_and_got() {
        let out = format!(
            "{BEGIN}@mcubench/1 kat id=x alg=AES-128 op=encrypt result=fail ticks=1 stack=8 out=00 expected=ff\n@mcubench/1 end passed=0 failed=1 stack=8\n"
        );
        let v = verdict(ProcessEnd::Exited(0), &out, "");
        assert_eq!(v.outcome, Outcome::Fail);
        assert!(v.message.contains("x: expected ff got 00"), "{}", v.message);
    }

    #[test]
    fn fault_lockup_timeout_and_setup_error() {
        let fault = format!(
            "{BEGIN}@mcubench/1 fault kind=hardfault pc=0x00000100 lr=0x00000001 xpsr=0x00000003 cfsr=0x00000000 hfsr=0x00000000\n"
        );
        let v = verdict(ProcessEnd::Exited(1), &fault, "");
        assert_eq!(v.outcome, Outcome::Fault);
        assert!(v.message.contains("pc=0x00000100 (f@100)"), "{}", v.message);
        // Fault status in words (judge/fault.rs): the FPU left disabled.
        let nocp = fault.replace("cfsr=0x00000000 hfsr=0x00000000", "cfsr=0x00080000 hfsr=0x40000000");
        let v = verdict(ProcessEnd::Exited(1), &nocp, "");
        let words = "cfsr=0x00080000 (UsageFault: NOCP — coprocessor access while the FPU is disabled";
        assert!(v.message.contains(words), "{}", v.message);
        assert!(v.message.contains("hfsr=0x40000000 (FORCED — "), "{}", v.message);

        let v = verdict(ProcessEnd::Exited(134), BEGIN, "qemu: fatal: Lockup: can't escalate\nR15=00000200 \n");
        assert_eq!(v.outcome, Outcome::Fault);
        assert!(v.message.contains("locked up at pc=0x00000200 (f@200)"), "{}", v.message);

        let v = verdict(ProcessEnd::TimedOut, BEGIN, "");
        assert_eq!(v.outcome, Outcome::Timeout);
        assert!(v.message.contains("last record: line 1: begin fw=kat"), "{}", v.message);

        let v = verdict(ProcessEnd::Exited(1), "", "qemu-system-arm: mps2 board must be used with cortex-m4 CPU\n");
        assert_eq!(v.outcome, Outcome::SetupError);
        assert!(v.message.contains("must be used with cortex-m4"), "{}", v.message);
    }

    #[test]
    fn a_timeout_or_flood_with_unreadable_output_is_still_a_timeout_or_a_flood() {
        let cut = format!("{BEGIN}@mcubench/1 kat id=a alg=SHA3-256 op=ha");
        let v = verdict(ProcessEnd::TimedOut, &cut, "");
        assert_eq!(v.outcome, Outcome::Timeout);
        assert!(v.message.contains("last record: none readable (firmware stdout line 2: "), "{}", v.message);
        let v = verdict(ProcessEnd::OutputLimit, &cut, "");
        assert_eq!(v.outcome, Outcome::Fail);
        assert!(v.message.contains("wrote more than 4 MiB"), "{}", v.message);
    }

    #[rstest::rstest]
    #[case(&[BEGIN, KAT, KAT], "KAT `a` is reported twice")]
    #[case(&[KAT], "before any `begin`")]
    #[case(&[BEGIN, KAT, END, END], "a `end` record after the `end` record")]
    #[case(&[BEGIN, END, KAT], "a `kat` record after the `end` record")]
    #[case(&[BEGIN, BEGIN, END], "a second `begin` record")]
    #[case(&[BEGIN, "\u{1b}[31m\u{0}\u{fffd}garbage @mcubench/1 ", KAT, END], "interleaved")]
    fn transcripts_out_of_order_fail(#[case] lines: &[&str], #[case] expected: &str) {
        let out: String =
            lines.iter().map(|l| if l.ends_with('\n') { l.to_string() } else { format!("{l}\n") }).collect();
        let v = verdict(ProcessEnd::Exited(0), &out, "");
        assert_eq!(v.outcome, Outcome::Fail, "{}", v.message);
        assert!(v.message.contains(expected), "{}", v.message);
    }

    fn with_vectors(stdout: &str, end: ProcessEnd) -> Verdict {
        let vectors = crate::config::vectors::Vectors::parse(
            std::path::Path::new("v.txt"),
            "a SHA3-256 msg= out=00\nb SHA3-256 msg=cc out=01\n",
        )
        .unwrap();
        let r = run(end, stdout, "");
        let t = Transcript::parse(&r.stdout);
        let v = judge_run(&r, t.as_ref(), None, 5.0, &|pc| format!("f@{pc:x}"));
        check_vectors(v, t.as_ref(), &vectors)
    }

    const KAT_B: &str = "@mcubench/1 kat id=b alg=SHA3-256 op=hash result=pass ticks=1 stack=8 out=01\n";

    #[test]
    fn vectors_turn_a_forged_pass_into_a_fail() {
        let ok = format!("{BEGIN}{KAT}{KAT_B}@mcubench/1 end passed=2 failed=0 stack=64\n");
        assert_eq!(with_vectors(&ok, ProcessEnd::Exited(0)), Verdict::new(Outcome::Pass, ""));
        let forged = ok.replace("out=01", "out=ff");
        let v = with_vectors(&forged, ProcessEnd::Exited(0));
        assert_eq!(v.outcome, Outcome::Fail);
        assert_eq!(
            v.message,
            "firmware reported pass but its output for b differs from the vector (v.txt:2): expected 01 got ff"
        );
        let missing = format!("{BEGIN}{KAT}@mcubench/1 end passed=1 failed=0 stack=64\n");
        let v = with_vectors(&missing, ProcessEnd::Exited(0));
        assert_eq!(v.outcome, Outcome::Fail);
        assert_eq!(v.message, "missing KAT(s): 1 of 2 vector(s) in v.txt never ran: b");
        let unknown = ok.replace("id=b", "id=c");
        let v = with_vectors(&unknown, ProcessEnd::Exited(0));
        assert!(v.message.contains("KAT `c`, which is not in the scenario's vectors"), "{}", v.message);
    }

    #[test]
    fn vectors_leave_a_timeout_alone_and_add_to_a_fail() {
        let v = with_vectors(&format!("{BEGIN}{KAT}"), ProcessEnd::TimedOut);
        assert_eq!(v.outcome, Outcome::Timeout);
        assert!(!v.message.contains("missing"), "{}", v.message);
        let forged = format!("{BEGIN}{KAT}{}", KAT_B.replace("out=01", "out=ff"));
        let v = with_vectors(&format!("{forged}@mcubench/1 end passed=2 failed=0 stack=64\n"), ProcessEnd::Exited(1));
        assert_eq!(v.outcome, Outcome::Fail);
        assert!(v.message.starts_with("the firmware reported success but QEMU exited 1; against the vectors: firmware reported pass but its output for b differs"), "{}", v.message);
    }

    #[test]
    fn a_malformed_record_fails_the_run_naming_the_line() {
        let v = verdict(ProcessEnd::Exited(0), &format!("{BEGIN}@mcubench/1 end passed=x\n"), "");
        assert_eq!(v.outcome, Outcome::Fail);
        assert!(v.message.contains("firmware stdout line 2"), "{}", v.message);
    }

    fn with_rules(code: i32, console: &str, rules: &ConsoleRules) -> Verdict {
        ended(code, None, console, rules)
    }

    fn ended(code: i32, looped: Option<u32>, console: &str, rules: &ConsoleRules) -> Verdict {
        let r = run(ProcessEnd::Exited(code), console, "");
        let t = Transcript::parse(&r.stdout);
        let streams = console::streams(&r, t.as_ref().ok());
        let rules = Rules { rules, console: &streams, looped };
        judge_run(&r, t.as_ref(), Some(rules), 5.0, &|pc| format!("f@{pc:x}"))
    }

    #[test]
    fn console_rules_decide_for_firmware_without_the_protocol() {
        use crate::config::rules::Pattern;
        let p = |s: &str| Pattern::parse(s).unwrap();
        let rules = ConsoleRules {
            expect: vec![p("^start"), p("^done")],
            ordered: true,
            reject: vec![p("FAIL")],
            ..ConsoleRules::default()
        };
        assert_eq!(with_rules(0, "start\nwork\ndone\n", &rules).outcome, Outcome::Pass);
        let v = with_rules(1, "start\ndone\n", &rules);
        assert_eq!(v.outcome, Outcome::Fail);
        assert!(v.message.contains("exited with code 1, not 0"), "{}", v.message);
        let v = with_rules(0, "start\nFAIL: x\ndone\n", &rules);
        assert!(
            v.message.contains("semihosting line 2: `FAIL: x` matches the `reject` pattern `FAIL`"),
            "{}",
            v.message
        );
        let v = with_rules(0, "done\nstart\n", &rules);
        assert_eq!(v.outcome, Outcome::Fail);
        assert!(v.message.contains("`^done` after the line that matched `^start`"), "{}", v.message);
        let unordered = ConsoleRules { ordered: false, ..rules.clone() };
        assert_eq!(with_rules(0, "done\nstart\n", &unordered).outcome, Outcome::Pass);
        // Exit code 3 as the pass condition; a silent exit 1 with QEMU's own error is still setup.
        let three = ConsoleRules { exit: ExitRule::Code(3), ..ConsoleRules::default() };
        assert_eq!(with_rules(3, "", &three).outcome, Outcome::Pass);
        let r = run(ProcessEnd::Exited(1), "", "qemu-system-arm: bad cpu\n");
        let v = judge_run(
            &r,
            Transcript::parse("").as_ref(),
            Some(Rules { rules: &three, console: &[], looped: None }),
            5.0,
            &|_| String::new(),
        );
        assert_eq!(v.outcome, Outcome::SetupError, "{}", v.message);
    }

    #[test]
    fn a_loop_end_passes_only_where_the_rules_ask_for_it() {
        use crate::config::rules::Pattern;
        let rules = ConsoleRules {
            exit: ExitRule::Loop,
            expect: vec![Pattern::parse("^self-test passed").unwrap()],
            ..ConsoleRules::default()
        };
        assert_eq!(ended(0, Some(0x1c6c), "self-test passed\n", &rules), Verdict::new(Outcome::Pass, ""));
        // The console still decides.
        let v = ended(0, Some(0x1c6c), "FAILED: 1 check(s) failed\n", &rules);
        assert_eq!(v.outcome, Outcome::Fail);
        assert!(v.message.contains("no console line matched the `expect` pattern"), "{}", v.message);
        assert!(v.message.ends_with("; the run ended at the loop at pc=0x00001c6c (f@1c6c)"), "{}", v.message);
        // An exit is not the end asked for, whatever its code.
        let v = ended(0, None, "self-test passed\n", &rules);
        assert_eq!(v.outcome, Outcome::Fail);
        assert!(
            v.message.starts_with("the firmware exited with code 0 instead of ending in a branch to itself"),
            "{}",
            v.message
        );
        // A reset is an end of its own.
        let r = run(ProcessEnd::Reset, "self-test passed\n", "");
        let streams = console::streams(&r, None);
        let judged = |rules: &ConsoleRules| {
            judge_run(
                &r,
                Transcript::parse("").as_ref(),
                Some(Rules { rules, console: &streams, looped: None }),
                5.0,
                &|_| String::new(),
            )
        };
        let reset = ConsoleRules { exit: ExitRule::Reset, ..rules.clone() };
        assert_eq!(judged(&reset), Verdict::new(Outcome::Pass, ""));
        let v = judged(&rules);
        assert!(v.message.starts_with("the firmware reset itself (a system reset request"), "{}", v.message);
        assert!(
            v.message.contains(") instead of ending in a branch to itself (`verdict.exit: loop`)"),
            "{}",
            v.message
        );
        let v = ended(3, None, "self-test passed\n", &reset);
        assert!(v.message.starts_with("the firmware exited with code 3 instead of resetting"), "{}", v.message);
        assert_eq!(ExitRule::parse("reset"), Ok(ExitRule::Reset));
        assert_eq!(ExitRule::parse("loop"), Ok(ExitRule::Loop));
        assert_eq!(ExitRule::parse("-2"), Ok(ExitRule::Code(-2)));
        assert!(ExitRule::parse("spin").unwrap_err().starts_with("`spin` is not an exit code (a number), `loop` (the"));
    }
}
