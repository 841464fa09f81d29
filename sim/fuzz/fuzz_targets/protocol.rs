//! Any bytes as firmware stdout (and as a vector file): parsing, the verdict and the check
//! against vectors never panic, and a transcript that does not parse never passes.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcubench::judge::protocol::Transcript;
use mcubench::exec::qemu::{ProcessEnd, QemuRun};
use mcubench::config::vectors::Vectors;
use mcubench::judge::verdict::{self, Outcome};

fn vectors() -> &'static Vectors {
    static V: OnceLock<Vectors> = OnceLock::new();
    V.get_or_init(|| {
        Vectors::parse(Path::new("v.txt"), "a SHA3-256 msg=cc out=00\nb AES-128 encrypt key=00 in=00 out=0102\n")
            .unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    // The first byte picks how QEMU ended; the rest is its stdout (lossy, as the runners read it).
    let Some((&how, rest)) = data.split_first() else { return };
    let end = match how % 6 {
        0 | 1 => ProcessEnd::Exited(0),
        2 => ProcessEnd::Exited(i32::from(how >> 3)),
        3 => ProcessEnd::TimedOut,
        4 => ProcessEnd::OutputLimit,
        _ => ProcessEnd::Signalled(9),
    };
    let stdout = String::from_utf8_lossy(rest).into_owned();
    let stderr = if how & 0x80 != 0 { "qemu: fatal: Lockup: can't escalate\nR15=00000200 \n" } else { "" };
    let run = QemuRun { end, stdout, stderr: stderr.into(), console: String::new(), uarts: Vec::new(), command: String::new() };
    let transcript = Transcript::parse(&run.stdout);
    if let Ok(t) = &transcript {
        let _ = t.last_record_summary();
    }
    let v = verdict::judge_run(&run, transcript.as_ref(), None, 1.0, &|pc| format!("f@{pc:x}"));
    let checked = verdict::check_vectors(v.clone(), transcript.as_ref(), vectors());
    if transcript.is_err() {
        assert_ne!(v.outcome, Outcome::Pass, "an unreadable transcript passed: {:?}", run.stdout);
    }
    if checked.outcome == Outcome::Pass {
        assert_eq!(v.outcome, Outcome::Pass);
        let t = transcript.as_ref().unwrap();
        assert!(vectors().check(t).is_empty());
    }
    let _ = Vectors::parse(Path::new("fuzz.txt"), &run.stdout);
});
