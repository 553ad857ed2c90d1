//! The `exec` family: processes and project automation from the reference agents.
//!
//! - `run`: a shell command line (Stack `run`, Alfredo `execute_command`, TunaCode
//!   `run_command`), or a program with arguments and no shell (Floyd `run`).
//! - background processes (Stack `server`): `process_start`, `process_read`, `process_write`,
//!   `process_wait`, `process_kill`, `process_list`.
//! - project runners (Floyd, Stack): `detect_project` (also Stack `project_scan`),
//!   `run_tests`, `lint`, `format`, `typecheck`, `build`, `install`.
//! - permissions (Floyd): `check_permission`; every tool here is gated by its level.
//! - workflow (Floyd, Alfredo): `ask_user`, `ask_followup_question`, `attempt_completion`.
//!
//! Every command runs as a supervised tree ([`crate::engine::process::supervisor`]): a timeout, an abort, a
//! kill or the end of the command takes down everything it started, daemons included.
//! Aborting a call (`ctx.signal`) makes a running command stop and return what it printed,
//! with `status: "cancelled"` (the family is `partial_on_cancel`).

pub mod args;
pub mod ask_followup_question;
pub mod ask_user;
pub mod attempt_completion;
pub mod build;
pub mod changes;
pub mod check_permission;
pub mod detect_project;
pub mod findings;
pub mod format;
pub mod install;
pub mod lint;
pub mod process;
pub mod run;
pub mod run_tests;
pub mod runner;
pub mod target;
pub mod testcounts;
pub mod typecheck;

use crate::spec::Family;

/// The family.
pub const FAMILY: Family = Family {
    name: "exec",
    tools: &[
        run::TOOL,
        process::process_start::TOOL,
        process::process_read::TOOL,
        process::process_write::TOOL,
        process::process_wait::TOOL,
        process::process_kill::TOOL,
        process::process_list::TOOL,
        detect_project::TOOL,
        run_tests::TOOL,
        lint::TOOL,
        format::TOOL,
        typecheck::TOOL,
        build::TOOL,
        install::TOOL,
        check_permission::TOOL,
        ask_user::TOOL,
        ask_followup_question::TOOL,
        attempt_completion::TOOL,
    ],
    contract: None,
    contract_docs: &[],
    // Stack's runner choices name the tool: `lint {linter: "ruff"}`, `format {formatter:
    // "black"}`, `install {package_manager: "pnpm"}`.
    aliases: &[
        ("linter", "runner"),
        ("formatter", "runner"),
        ("package_manager", "runner"),
        ("packageManager", "runner"),
    ],
    partial_on_cancel: true,
};

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;

    use crate::context::{ConfirmFn, Ctx};
    use crate::registry;

    fn counting_confirm(answer: bool) -> (ConfirmFn, Arc<AtomicUsize>) {
        let asked = Arc::new(AtomicUsize::new(0));
        let a = Arc::clone(&asked);
        let f: ConfirmFn = Arc::new(move |_| {
            a.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move { Ok(answer) })
        });
        (f, asked)
    }

    #[tokio::test]
    async fn run_through_the_registry() {
        let dir = tempfile::tempdir().unwrap();
        let (confirm, asked) = counting_confirm(true);
        let ctx = Ctx::new(dir.path().to_str().unwrap()).unwrap().with_confirm(confirm);
        let out = registry::run("run", &json!({"command": "sh", "args": ["-c", "echo hi; exit 2"]}), &ctx)
            .await
            .unwrap();
        assert_eq!((out.data["status"].as_str(), out.data["exitCode"].as_i64()), (Some("failed"), Some(2)));
        assert_eq!(out.data["stdout"], "hi\n");
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        let out =
            registry::run("runCommand", &json!({"command": "sleep 5", "timeout": 0.2}), &ctx).await.unwrap();
        assert_eq!(
            (out.data["status"].as_str(), out.data["signal"].as_str()),
            (Some("timeout"), Some("SIGTERM"))
        );
        let e = registry::run("run", &json!({"command": "a | b", "shell": false}), &ctx).await.unwrap_err();
        assert_eq!(e.code().as_str(), "INVALID_ARGUMENT");
        let e = registry::run("run", &json!({"command": "ls", "cwd": "/"}), &ctx).await.unwrap_err();
        assert_eq!(e.code().as_str(), "OUTSIDE_WORKSPACE");
        assert_eq!(asked.load(Ordering::SeqCst), 2, "errors come before the question");
    }

    #[tokio::test]
    async fn moderate_asks_once_per_session_dangerous_every_time() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Makefile"), "lint:\n\t@true\ntest:\n\t@true\n").unwrap();
        let (confirm, asked) = counting_confirm(true);
        let root = dir.path().to_str().unwrap();
        let ctx = Ctx::new(root).unwrap().with_confirm(confirm.clone()).with_session("s");
        for _ in 0..3 {
            assert_eq!(registry::run("lint", &json!({}), &ctx).await.unwrap().data["status"], "ok");
        }
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        for _ in 0..2 {
            registry::run("run_tests", &json!({}), &ctx).await.unwrap();
        }
        assert_eq!(asked.load(Ordering::SeqCst), 3);
        // Without a session, every call is its own session.
        let bare = Ctx::new(root).unwrap().with_confirm(confirm);
        registry::run("lint", &json!({}), &bare).await.unwrap();
        registry::run("lint", &json!({}), &bare).await.unwrap();
        assert_eq!(asked.load(Ordering::SeqCst), 5);
        // No confirm callback: no one could be asked, so nothing runs.
        let none = Ctx::new(root).unwrap();
        let e = registry::run("lint", &json!({"command": "touch x"}), &none).await.unwrap_err();
        assert_eq!(e.code().as_str(), "APPROVAL_REQUIRED");
        assert!(e.message().contains("touch x"), "{}", e.message());
        assert!(!dir.path().join("x").exists());
        // Declined: a result that says so, and nothing runs.
        let (no, _) = counting_confirm(false);
        let declined = Ctx::new(root).unwrap().with_confirm(no);
        let out = registry::run("lint", &json!({"command": "touch x"}), &declined).await.unwrap();
        assert_eq!(out.data["status"], "declined");
        assert!(!dir.path().join("x").exists());
        // Above the host's ceiling: refused by policy, no one asked.
        let mut capped = Ctx::new(root).unwrap().with_confirm(counting_confirm(true).0);
        capped.max_permission = Some(registry::Permission::Moderate);
        let e = registry::run("run_tests", &json!({"command": "touch x"}), &capped).await.unwrap_err();
        assert_eq!(e.code().as_str(), "POLICY_DENIED");
        assert!(!dir.path().join("x").exists());
    }
}
