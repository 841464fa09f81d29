//! Budgets that make no sense for the scenario's boards, found before anything is built.
//!
//! - **Impossible (an error, exit 2):** a budget of `0 B` for `flash`, `stack` or `stack-static`.
//!   Every firmware has a vector table in flash, and firmware that speaks the protocol calls
//!   functions that use the stack, so such a budget fails every run. `ram: 0 B` is allowed: firmware
//!   without static data exists, and so does `heap: 0 B` (firmware that must not allocate).
//! - **Never binding (a warning):** a budget larger than the memory it is a part of on *every*
//!   board of the scenario (`flash` vs flash; `ram`, `stack`, `stack-static`, `heap` vs RAM). It can never
//!   be crossed, so it checks nothing; usually a unit typo (`64 MiB` for `64 KiB`). Larger than
//!   some boards' memory only is normal in a multi-board scenario and not reported.

use crate::config::scenario::{Budgets, Bytes, Scenario};

/// `Err`: the impossible budgets (one message naming the profile and the key); `Ok`: warnings.
pub fn check(scenario: &Scenario) -> Result<Vec<String>, String> {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let source = scenario.source.display();
    let max_flash = scenario.boards.iter().map(|b| b.layout.flash.length).max().unwrap_or(u64::MAX);
    let max_ram = scenario.boards.iter().map(|b| b.layout.ram.length).max().unwrap_or(u64::MAX);
    let mut seen: Vec<Budgets> = Vec::new();
    // Each profile's budgets, and each board's (`budgets.boards`) on top of them.
    let mut sets: Vec<(String, Budgets)> = Vec::new();
    for p in &scenario.profiles {
        sets.push((format!("profile `{}`", p.name), p.budgets.clone()));
        let measure = scenario.measure(&p.name);
        for board in measure.board_budgets.keys() {
            let (b, _) = measure.budgets_for(board, &p.budgets);
            sets.push((format!("profile `{}` on board `{board}`", p.name), b));
        }
    }
    for (owner, b) in &sets {
        // Profiles inherit the scenario's budgets: report each distinct set once.
        if seen.contains(b) {
            continue;
        }
        seen.push(b.clone());
        let entries: [(&str, Option<Bytes>, bool, &str, u64); 5] = [
            ("flash", b.flash, true, "flash", max_flash),
            ("ram", b.ram, false, "RAM", max_ram),
            ("stack", b.stack, true, "RAM", max_ram),
            ("stack-static", b.stack_static, true, "RAM", max_ram),
            ("heap", b.heap, false, "RAM", max_ram),
        ];
        for (key, value, zero_impossible, memory, size) in entries {
            let Some(Bytes(v)) = value else { continue };
            if v == 0 && zero_impossible {
                errors.push(format!(
                    "{source}: {owner}: budgets.{key} is 0 B, which no firmware can meet (every firmware \
                     has {}); give a positive size or remove the budget",
                    if key == "flash" { "a vector table in flash" } else { "a stack" }
                ));
            } else if v > size {
                let boards: Vec<&str> = scenario.boards.iter().map(|b| b.name).collect();
                warnings.push(format!(
                    "{source}: {owner}: budgets.{key} is {v} B, more than the {memory} of every board \
                     ({}: at most {size} B); it can never be crossed (a unit typo?)",
                    boards.join(", ")
                ));
            }
        }
    }
    if errors.is_empty() { Ok(warnings) } else { Err(errors.join("\n")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(budgets: &str) -> Scenario {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.elf"), b"\x7fELF").unwrap();
        let yaml = format!("name: s\nfirmware: {{ elf: a.elf }}\nboards: [microbit, mps2-an386]\nbudgets: {budgets}\n");
        Scenario::from_yaml(&dir.path().join("s.yaml"), &yaml).unwrap()
    }

    #[test]
    fn sensible_budgets_pass_quietly() {
        assert_eq!(
            check(&scenario("{ flash: 64 KiB, ram: 0 B, stack: 8 KiB, stack-static: 8 KiB, heap: 0 B }")),
            Ok(vec![])
        );
        // Larger than the microbit's 16 KiB of RAM, but not the mps2's 4 MiB: fine.
        assert_eq!(check(&scenario("{ ram: 32 KiB }")), Ok(vec![]));
    }

    #[test]
    fn zero_is_impossible_for_flash_and_stack() {
        for key in ["flash", "stack", "stack-static"] {
            let err = check(&scenario(&format!("{{ {key}: 0 B }}"))).unwrap_err();
            assert!(
                err.contains(&format!("profile `prebuilt`: budgets.{key} is 0 B, which no firmware can meet")),
                "{err}"
            );
            assert!(err.contains("s.yaml: "), "{err}");
        }
    }

    #[test]
    fn a_boards_own_budgets_are_checked_and_named() {
        let err = check(&scenario("{ stack: 2 KiB, boards: { microbit: { stack: 0 B } } }")).unwrap_err();
        assert!(
            err.contains("profile `prebuilt` on board `microbit`: budgets.stack is 0 B, which no firmware can meet"),
            "{err}"
        );
        assert_eq!(check(&scenario("{ stack: 2 KiB, boards: { microbit: { stack: 1 KiB } } }")), Ok(vec![]));
    }

    #[test]
    fn larger_than_every_board_is_a_warning() {
        let w = check(&scenario("{ flash: 64 MiB, stack: 5 MiB, heap: 5 MiB }")).unwrap();
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[2].contains("budgets.heap is 5242880 B, more than the RAM of every board"), "{}", w[2]);
        assert!(w[0].contains("budgets.flash is 67108864 B, more than the flash of every board (microbit, mps2-an386: at most 4194304 B)"), "{}", w[0]);
        assert!(w[1].contains("budgets.stack is 5242880 B, more than the RAM of every board"), "{}", w[1]);
    }
}
