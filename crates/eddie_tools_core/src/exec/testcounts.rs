//! Test counts from the output of known runners: cargo test, pytest, jest, vitest, node:test
//! (spec and TAP), mocha and go test. Lines are fed as they stream, so memory stays bounded.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Value, json};

/// Most failed test names kept.
const MAX_FAILURES: usize = 50;

/// Counts so far.
#[derive(Debug, Default, Clone)]
pub struct Counts {
    /// Passed tests.
    pub passed: u64,
    /// Failed tests (pytest errors included).
    pub failed: u64,
    /// Skipped, ignored or pending tests.
    pub skipped: u64,
    /// Which runner's summary was recognised.
    pub runner: Option<&'static str>,
    /// Names of failed tests (the first `MAX_FAILURES`).
    pub failures: Vec<String>,
}

struct Patterns {
    cargo: Regex,
    cargo_fail: Regex,
    pytest: Regex,
    pytest_fail: Regex,
    jest: Regex,
    vitest: Regex,
    node: Regex,
    tap_fail: Regex,
    mocha: Regex,
    go: Regex,
    part: Regex,
}

fn patterns() -> Option<&'static Patterns> {
    static P: OnceLock<Option<Patterns>> = OnceLock::new();
    P.get_or_init(|| {
        Some(Patterns {
            cargo: Regex::new(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored").ok()?,
            cargo_fail: Regex::new(r"^test (\S+) \.\.\. FAILED$").ok()?,
            pytest: Regex::new(r"^=*\s*((?:\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|deselected|warnings?)(?:, )?)+) in [\d.]+s").ok()?,
            pytest_fail: Regex::new(r"^(?:FAILED|ERROR) (\S+)").ok()?,
            jest: Regex::new(r"^Tests:\s+(.*?)(\d+) total").ok()?,
            vitest: Regex::new(r"^\s*Tests\s+(.*?)\(\d+\)\s*$").ok()?,
            node: Regex::new(r"^(?:# |ℹ )(pass|fail|skipped|skip|todo) (\d+)$").ok()?,
            tap_fail: Regex::new(r"^\s*not ok \d+ - (.+)$").ok()?,
            mocha: Regex::new(r"^\s+(\d+) (passing|failing|pending)\b").ok()?,
            go: Regex::new(r"^\s*--- (PASS|FAIL|SKIP): (\S+)").ok()?,
            part: Regex::new(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|todo|pending)").ok()?,
        })
    })
    .as_ref()
}

impl Counts {
    /// Look at one line.
    pub fn observe(&mut self, line: &str) {
        let Some(p) = patterns() else { return };
        let num = |s: &str| s.parse::<u64>().unwrap_or(0);
        if let Some(c) = p.cargo.captures(line) {
            self.runner = Some("cargo");
            self.passed += num(&c[1]);
            self.failed += num(&c[2]);
            self.skipped += num(&c[3]);
        } else if let Some(c) = p.cargo_fail.captures(line) {
            self.failure(&c[1]);
        } else if let Some(c) = p.pytest.captures(line) {
            self.runner = Some("pytest");
            self.parts(&c[1]);
        } else if let Some(c) = p.pytest_fail.captures(line) {
            self.failure(&c[1]);
        } else if let Some(c) = p.jest.captures(line) {
            self.runner = Some("jest");
            self.parts(&c[1]);
        } else if let Some(c) = p.vitest.captures(line) {
            self.runner = Some("vitest");
            self.parts(&c[1]);
        } else if let Some(c) = p.node.captures(line) {
            self.runner = Some("node:test");
            self.add(&c[1], num(&c[2]));
        } else if let Some(c) = p.tap_fail.captures(line) {
            self.failure(c[1].trim());
        } else if let Some(c) = p.mocha.captures(line) {
            self.runner = Some("mocha");
            self.add(&c[2], num(&c[1]));
        } else if let Some(c) = p.go.captures(line) {
            self.runner = Some("go");
            match &c[1] {
                "PASS" => self.passed += 1,
                "FAIL" => {
                    self.failed += 1;
                    self.failure(&c[2]);
                }
                _ => self.skipped += 1,
            }
        }
    }

    fn parts(&mut self, text: &str) {
        let Some(p) = patterns() else { return };
        for c in p.part.captures_iter(text) {
            self.add(&c[2], c[1].parse::<u64>().unwrap_or(0));
        }
    }

    /// Add `n` to the count an outcome word of a summary names (node:test `pass`, mocha
    /// `passing`, pytest/jest `passed`, ...); skipped, todo, pending and xfailed count as skipped.
    fn add(&mut self, outcome: &str, n: u64) {
        match outcome {
            "pass" | "passing" | "passed" | "xpassed" => self.passed += n,
            "fail" | "failing" | "failed" | "error" | "errors" => self.failed += n,
            _ => self.skipped += n,
        }
    }

    fn failure(&mut self, name: &str) {
        if self.failures.len() < MAX_FAILURES && !self.failures.iter().any(|f| f == name) {
            self.failures.push(name.to_owned());
        }
    }

    /// `{runner, passed, failed, skipped, total, failures}`, or `null` when no runner's
    /// summary was recognised.
    pub fn to_json(&self) -> Value {
        match self.runner {
            None => Value::Null,
            Some(r) => json!({
                "runner": r,
                "passed": self.passed,
                "failed": self.failed,
                "skipped": self.skipped,
                "total": self.passed + self.failed + self.skipped,
                "failures": self.failures,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_words_of_every_runner_land_in_their_count() {
        let mut c = Counts::default();
        for (w, n) in [("pass", 1), ("passing", 2), ("passed", 4), ("xpassed", 8)] {
            c.add(w, n);
        }
        for (w, n) in [("fail", 1), ("failing", 2), ("failed", 4), ("error", 8), ("errors", 16)] {
            c.add(w, n);
        }
        for (w, n) in [("skip", 1), ("skipped", 2), ("todo", 4), ("pending", 8), ("xfailed", 16)] {
            c.add(w, n);
        }
        assert_eq!((c.passed, c.failed, c.skipped), (15, 31, 31));
    }

    fn count(text: &str) -> Value {
        let mut c = Counts::default();
        text.lines().for_each(|l| c.observe(l));
        c.to_json()
    }

    #[test]
    fn known_runners() {
        let cargo = "test a::b ... ok\ntest a::c ... FAILED\ntest result: FAILED. 1 passed; 1 failed; 2 ignored; 0 measured\n\
                     test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured";
        let v = count(cargo);
        assert_eq!(
            (v["passed"].as_u64(), v["failed"].as_u64(), v["skipped"].as_u64()),
            (Some(4), Some(1), Some(2))
        );
        assert_eq!(v["failures"], json!(["a::c"]));
        let v = count(
            "FAILED tests/test_a.py::test_x - assert 1 == 2\n===== 1 failed, 10 passed, 2 skipped in 0.12s =====",
        );
        assert_eq!(
            (v["runner"].as_str(), v["passed"].as_u64(), v["failed"].as_u64(), v["total"].as_u64()),
            (Some("pytest"), Some(10), Some(1), Some(13))
        );
        assert_eq!(v["failures"], json!(["tests/test_a.py::test_x"]));
        let v = count("Tests:       1 failed, 1 skipped, 5 passed, 7 total");
        assert_eq!(
            (v["runner"].as_str(), v["passed"].as_u64(), v["failed"].as_u64(), v["skipped"].as_u64()),
            (Some("jest"), Some(5), Some(1), Some(1))
        );
        let v = count("      Tests  2 failed | 10 passed (12)");
        assert_eq!(
            (v["runner"].as_str(), v["passed"].as_u64(), v["failed"].as_u64()),
            (Some("vitest"), Some(10), Some(2))
        );
        let v = count("not ok 2 - adds\n# tests 3\n# pass 2\n# fail 1\n# skipped 0");
        assert_eq!(
            (v["runner"].as_str(), v["passed"].as_u64(), v["failed"].as_u64()),
            (Some("node:test"), Some(2), Some(1))
        );
        assert_eq!(v["failures"], json!(["adds"]));
        let v = count("ℹ tests 4\nℹ pass 4\nℹ fail 0");
        assert_eq!((v["passed"].as_u64(), v["failed"].as_u64()), (Some(4), Some(0)));
        let v = count("  3 passing (10ms)\n  1 failing\n  2 pending");
        assert_eq!(
            (v["runner"].as_str(), v["passed"].as_u64(), v["failed"].as_u64(), v["skipped"].as_u64()),
            (Some("mocha"), Some(3), Some(1), Some(2))
        );
        let v = count(
            "=== RUN   TestA\n--- PASS: TestA (0.00s)\n--- FAIL: TestB (0.00s)\nFAIL\texample.com/x\t0.01s",
        );
        assert_eq!(
            (v["runner"].as_str(), v["passed"].as_u64(), v["failed"].as_u64()),
            (Some("go"), Some(1), Some(1))
        );
        assert_eq!(count("hello\nworld"), Value::Null);
    }
}
