//! Budgets: hard limits on flash, static RAM and stack per board × profile. Crossing one fails the
//! run. A metric that could not be measured (the run failed before its `end` record) cannot be
//! shown to hold, so it is `unknown`, which fails the gate too: a budget is never passed by default.

use serde::{Deserialize, Serialize};

use crate::scenario::Budgets;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    Flash,
    Ram,
    Stack,
    #[serde(rename = "stack-static")]
    StackStatic,
}

impl Metric {
    pub fn label(self) -> &'static str {
        match self {
            Metric::Flash => "flash",
            Metric::Ram => "ram",
            Metric::Stack => "stack",
            Metric::StackStatic => "stack-static",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BudgetStatus {
    Ok,
    Exceeded,
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BudgetCheck {
    pub metric: Metric,
    pub limit: u64,
    pub actual: Option<u64>,
    pub status: BudgetStatus,
}

impl BudgetCheck {
    pub fn describe(&self) -> String {
        match (self.status, self.actual) {
            (BudgetStatus::Ok, Some(a)) => format!("{} {a} B within {} B", self.metric.label(), self.limit),
            (BudgetStatus::Exceeded, Some(a)) => {
                format!("{} {a} B exceeds the budget of {} B by {} B", self.metric.label(), self.limit, a - self.limit)
            }
            _ if self.metric == Metric::StackStatic => format!(
                "stack-static unbounded (see `mcubench stack`): cannot show it is within {} B; annotate the unresolved sites",
                self.limit
            ),
            _ => format!("{} unknown (not measured): cannot show it is within {} B", self.metric.label(), self.limit),
        }
    }
}

/// The measured values of one board × profile.
#[derive(Debug, Clone, Copy, Default)]
pub struct Measured {
    pub flash: Option<u64>,
    pub ram: Option<u64>,
    pub stack: Option<u64>,
    /// Static bound of the reset path; `None` when unbounded.
    pub stack_static: Option<u64>,
}

pub fn check(budgets: &Budgets, measured: Measured) -> Vec<BudgetCheck> {
    [
        (Metric::Flash, budgets.flash, measured.flash),
        (Metric::Ram, budgets.ram, measured.ram),
        (Metric::Stack, budgets.stack, measured.stack),
        (Metric::StackStatic, budgets.stack_static, measured.stack_static),
    ]
    .into_iter()
    .filter_map(|(metric, limit, actual)| {
        let limit = limit?.0;
        let status = match actual {
            None => BudgetStatus::Unknown,
            Some(a) if a <= limit => BudgetStatus::Ok,
            Some(_) => BudgetStatus::Exceeded,
        };
        Some(BudgetCheck { metric, limit, actual, status })
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Bytes;

    #[test]
    fn limits_are_inclusive_and_unmeasured_is_unknown() {
        let budgets =
            Budgets { flash: Some(Bytes(100)), ram: Some(Bytes(10)), stack: Some(Bytes(50)), stack_static: None };
        let checks = check(&budgets, Measured { flash: Some(100), ram: Some(11), stack: None, stack_static: None });
        let statuses: Vec<_> = checks.iter().map(|c| (c.metric, c.status)).collect();
        assert_eq!(
            statuses,
            [
                (Metric::Flash, BudgetStatus::Ok),
                (Metric::Ram, BudgetStatus::Exceeded),
                (Metric::Stack, BudgetStatus::Unknown)
            ]
        );
        assert_eq!(checks[1].describe(), "ram 11 B exceeds the budget of 10 B by 1 B");
    }

    #[test]
    fn no_budget_no_check() {
        assert!(check(&Budgets::default(), Measured::default()).is_empty());
    }
}
