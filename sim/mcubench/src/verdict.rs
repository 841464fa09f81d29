//! Turns what QEMU did and what the firmware said into one outcome with a message that says what
//! to do. QEMU's exit code alone is never a verdict: a reset under `-no-reboot` exits 0, a QEMU
//! setup error exits 1 like a failing firmware, and a hang never exits. A run passes only with exit
//! 0, an `end` record, and every KAT record passing.

use serde::{Deserialize, Serialize};

use crate::protocol::{KatResult, Transcript};
use crate::qemu::{ProcessEnd, QemuRun};

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
    fn new(outcome: Outcome, message: impl Into<String>) -> Verdict {
        Verdict { outcome, message: message.into() }
    }
}

/// `symbolize` turns an address into `name+0xoff` for fault messages.
pub fn judge(
    run: &QemuRun,
    transcript: Result<&Transcript, &crate::protocol::ProtocolError>,
    timeout_secs: f64,
    symbolize: &dyn Fn(u32) -> String,
) -> Verdict {
    let stderr_tail = || {
        let lines: Vec<&str> = run.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(3)..].join(" | ")
    };
    // A lockup is seen on stderr whatever else happened.
    if run.stderr.contains("Lockup") {
        let at = crate::qemu::lockup_pc(&run.stderr)
            .map(|pc| format!(" at pc=0x{pc:08x} ({})", symbolize(pc)))
            .unwrap_or_default();
        return Verdict::new(
            Outcome::Fault,
            format!(
                "the core locked up{at}: a fault while handling a fault (e.g. a bad vector table or stack pointer); QEMU aborted"
            ),
        );
    }
    let t = match transcript {
        Ok(t) => t,
        Err(e) => {
            return Verdict::new(
                Outcome::Fail,
                format!("{e}; fix the firmware's record output (see firmware/PROTOCOL.md)"),
            );
        }
    };
    match run.end {
        ProcessEnd::TimedOut => {
            return Verdict::new(
                Outcome::Timeout,
                format!(
                    "no exit within {timeout_secs} s; last record: {}; the firmware hangs or the scenario's `timeout` is too short",
                    t.last_record_summary()
                ),
            );
        }
        ProcessEnd::OutputLimit => {
            return Verdict::new(
                Outcome::Fail,
                format!(
                    "the firmware wrote more than {} MiB and was stopped; last record: {}",
                    crate::qemu::OUTPUT_LIMIT / (1024 * 1024),
                    t.last_record_summary()
                ),
            );
        }
        _ => {}
    }
    if let Some(f) = t.fault() {
        return Verdict::new(
            Outcome::Fault,
            format!(
                "HardFault at pc=0x{:08x} ({}), lr=0x{:08x}, cfsr=0x{:08x}, hfsr=0x{:08x}",
                f.pc,
                symbolize(f.pc),
                f.lr,
                f.cfsr,
                f.hfsr
            ),
        );
    }
    if let Some(msg) = t.panic_message() {
        return Verdict::new(Outcome::Fail, format!("firmware panicked: {msg}"));
    }
    let began = t.records.iter().any(|(_, r)| matches!(r, crate::protocol::Record::Begin { .. }));
    let code = match run.end {
        ProcessEnd::Exited(code) => code,
        ProcessEnd::Signalled(sig) => {
            return Verdict::new(
                Outcome::Fault,
                format!("QEMU was killed by signal {sig}; last record: {}; {}", t.last_record_summary(), stderr_tail()),
            );
        }
        ProcessEnd::TimedOut | ProcessEnd::OutputLimit => unreachable!("handled above"),
    };
    if code != 0 && t.records.is_empty() && !run.stderr.trim().is_empty() {
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
    let Some(end) = t.end() else {
        let what = if began { t.last_record_summary() } else { "no `begin` record".into() };
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

#[cfg(test)]
mod tests {
    use super::*;

    fn run(end: ProcessEnd, stdout: &str, stderr: &str) -> QemuRun {
        QemuRun { end, stdout: stdout.into(), stderr: stderr.into(), command: String::new() }
    }

    fn verdict(end: ProcessEnd, stdout: &str, stderr: &str) -> Verdict {
        let r = run(end, stdout, stderr);
        let t = Transcript::parse(&r.stdout);
        judge(&r, t.as_ref(), 5.0, &|pc| format!("f@{pc:x}"))
    }

    const KAT: &str = "@mcubench/1 kat id=a alg=SHA3-256 op=hash result=pass ticks=1 stack=8 out=00\n";
    const BEGIN: &str = "@mcubench/1 begin fw=kat\n";

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
    fn a_malformed_record_fails_the_run_naming_the_line() {
        let v = verdict(ProcessEnd::Exited(0), &format!("{BEGIN}@mcubench/1 end passed=x\n"), "");
        assert_eq!(v.outcome, Outcome::Fail);
        assert!(v.message.contains("firmware stdout line 2"), "{}", v.message);
    }
}
