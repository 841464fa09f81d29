//! Sharding a scenario's board × profile matrix across CI machines: `--shard I/N` keeps cell k
//! (in the scenario's board-major order) when `k mod N = I - 1`. Every cell lands in exactly one
//! shard, shard sizes differ by at most one, and the split depends only on the scenario, so N
//! machines agree on it without talking to each other. `mcubench merge` joins the shards' reports.

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based.
    pub index: usize,
    pub count: usize,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("`{s}` is not a shard; write I/N with 1 ≤ I ≤ N, e.g. 2/4");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Whether cell number `k` (0-based, scenario order) belongs to this shard.
    pub fn contains(&self, k: usize) -> bool {
        k % self.count == self.index - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cell_lands_in_exactly_one_shard_and_shards_are_even() {
        for cells in [1usize, 2, 5, 15, 16, 23] {
            for count in 1..=7 {
                let mut seen = vec![0u32; cells];
                let mut sizes = Vec::new();
                for index in 1..=count {
                    let shard = Shard { index, count };
                    let mine: Vec<usize> = (0..cells).filter(|&k| shard.contains(k)).collect();
                    sizes.push(mine.len());
                    for k in mine {
                        seen[k] += 1;
                    }
                }
                assert!(seen.iter().all(|&n| n == 1), "{cells} cells, {count} shards: {seen:?}");
                let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
                assert!(max - min <= 1, "{cells} cells, {count} shards: sizes {sizes:?}");
            }
        }
    }

    #[rstest::rstest]
    #[case("1/1", Some((1, 1)))]
    #[case("3/7", Some((3, 7)))]
    #[case("0/3", None)]
    #[case("4/3", None)]
    #[case("1/0", None)]
    #[case("2", None)]
    #[case("a/b", None)]
    fn parses_i_of_n(#[case] text: &str, #[case] expected: Option<(usize, usize)>) {
        let got = text.parse::<Shard>().ok().map(|s| (s.index, s.count));
        assert_eq!(got, expected);
        if expected.is_none() {
            assert!(text.parse::<Shard>().unwrap_err().contains("1 ≤ I ≤ N"));
        }
    }
}
