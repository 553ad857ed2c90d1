//! The one permission gate, shared by every host (napi, the adapters' sessions, MCP, the CLI,
//! VS Code). Every question a call asks goes through [`approve`]:
//!
//! - A tool's level (Floyd's) decides its own question ([`PromptKind::Action`]): `none` never
//!   asks, `moderate` asks once per session per tool, `dangerous` asks on every call. A tool
//!   that does not ask by itself but whose level is not `none` is asked about by the pipeline
//!   before it runs ([`pipeline_prompt`]).
//! - The other kinds (a destructive command, hooks that will run, a protected branch) are asked
//!   on every call, whatever the session allows.
//! - An approval given before the call ([`Approved`], `ctx.approved`) covers exactly the prompts
//!   it names: by their text (what a host showed) or by their kind (`--yes`). Whatever it does
//!   not cover goes to `ctx.confirm`; with no confirm, the call fails with `APPROVAL_REQUIRED`,
//!   which lists every prompt that still needs approval, and nothing runs.
//! - A plan ([`Ctx::plan`]) records what would be asked and answers no, so that a host that
//!   approves before the call can show every prompt ([`crate::call::plan`]).
//! - A host's ceiling (`ctx.maxPermission`) refuses a tool above it with `POLICY_DENIED`,
//!   before anything runs and without asking anyone.
//!
//! Sessions ([`end_session`]) expire after [`SESSION_IDLE`] without a call, and at most
//! [`MAX_SESSIONS`] are kept (the least recently used goes first), so grants never pile up.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::context::{Ctx, Prompt, PromptKind};
use crate::error::{ErrorCode, Result, ToolError};
use crate::spec::{Permission, ToolSpec};

/// How long a session's grants live without a call.
pub const SESSION_IDLE: Duration = Duration::from_secs(2 * 60 * 60);
/// How many sessions are kept at most.
pub const MAX_SESSIONS: usize = 4096;

/// What a host approved before the call (`ctx.approved`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Approved {
    /// Nothing: every prompt goes to `ctx.confirm`.
    #[default]
    Nothing,
    /// Prompts of these kinds, whatever their text (`approved: true` is `[Action]`: the tool's
    /// own question, never a destructive finding).
    Kinds(Vec<PromptKind>),
    /// Exactly the prompts with these texts (what a host showed and the person approved).
    Texts(Arc<HashSet<String>>),
}

impl Approved {
    /// Whether this approval covers `prompt`.
    pub fn covers(&self, prompt: &Prompt) -> bool {
        match self {
            Self::Nothing => false,
            Self::Kinds(kinds) => kinds.contains(&prompt.kind),
            Self::Texts(texts) => texts.contains(&prompt.text),
        }
    }
}

/// The tool a call is for and its level, as the pipeline sets it on the call's [`Ctx`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gate {
    /// The tool's model name.
    pub tool: &'static str,
    /// Its level.
    pub level: Permission,
}

impl Gate {
    /// The gate of `spec`.
    pub const fn of(spec: &ToolSpec) -> Self {
        Self { tool: spec.name, level: spec.permission }
    }
}

/// Where a plan records the prompts a call would ask.
pub type PlanRecorder = Arc<Mutex<Vec<Prompt>>>;

struct Session {
    tools: HashSet<&'static str>,
    touched: Instant,
}

fn sessions() -> &'static Mutex<HashMap<String, Session>> {
    static SESSIONS: OnceLock<Mutex<HashMap<String, Session>>> = OnceLock::new();
    SESSIONS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Drop expired sessions, then the least recently used ones above the cap.
fn prune(map: &mut HashMap<String, Session>, now: Instant) {
    map.retain(|_, s| now.duration_since(s.touched) < SESSION_IDLE);
    if map.len() > MAX_SESSIONS {
        let mut ages: Vec<(Instant, String)> = map.iter().map(|(k, s)| (s.touched, k.clone())).collect();
        ages.sort();
        for (_, key) in ages.into_iter().take(map.len() - MAX_SESSIONS) {
            map.remove(&key);
        }
    }
}

/// Whether `session` has granted `tool` (and it has not expired). Touches the session.
pub fn granted(session: &str, tool: &str) -> bool {
    let Ok(mut map) = sessions().lock() else { return false };
    let now = Instant::now();
    match map.get_mut(session) {
        Some(s) if now.duration_since(s.touched) < SESSION_IDLE => {
            s.touched = now;
            s.tools.contains(tool)
        }
        Some(_) => {
            map.remove(session);
            false
        }
        None => false,
    }
}

fn grant(session: &str, tool: &'static str) {
    let Ok(mut map) = sessions().lock() else { return };
    let now = Instant::now();
    map.entry(session.to_owned()).or_insert_with(|| Session { tools: HashSet::new(), touched: now });
    if let Some(s) = map.get_mut(session) {
        s.tools.insert(tool);
        s.touched = now;
    }
    prune(&mut map, now);
}

/// End a permission session: its grants are forgotten. Returns whether it had any.
pub fn end_session(session: &str) -> bool {
    sessions().lock().map(|mut m| m.remove(session).is_some()).unwrap_or(false)
}

/// How many sessions hold grants now (expired ones are dropped first).
pub fn live_sessions() -> usize {
    sessions()
        .lock()
        .map(|mut m| {
            prune(&mut m, Instant::now());
            m.len()
        })
        .unwrap_or(0)
}

/// `POLICY_DENIED` when the host's ceiling is below the tool's level.
pub fn check_ceiling(spec: &ToolSpec, ctx: &Ctx) -> Result<()> {
    match ctx.max_permission {
        Some(max) if rank(spec.permission) > rank(max) => Err(ToolError::new(
            ErrorCode::PolicyDenied,
            format!(
                "{} is refused by the host's policy: its permission level is {}, and this host allows at \
                 most {}. No one was asked and nothing ran; use a tool within that level.",
                spec.name,
                spec.permission.as_str(),
                max.as_str()
            ),
        )),
        _ => Ok(()),
    }
}

const fn rank(p: Permission) -> u8 {
    match p {
        Permission::None => 0,
        Permission::Moderate => 1,
        Permission::Dangerous => 2,
    }
}

/// Whether the pipeline asks about `spec` before it runs: its level is not `none` and it does
/// not ask by itself.
pub const fn pipeline_asks(spec: &ToolSpec) -> bool {
    !matches!(spec.permission, Permission::None) && !spec.confirms()
}

/// The question the pipeline asks about a tool that does not ask by itself.
pub fn pipeline_prompt(spec: &ToolSpec, args: &Value) -> Prompt {
    let mut shown = serde_json::to_string(args).unwrap_or_default();
    if shown.len() > 400 {
        let cut = crate::engine::text::utf8::floor_boundary(&shown, 400);
        shown.truncate(cut);
        shown.push('…');
    }
    Prompt::action(format!("Allow {} {shown}", spec.name))
}

/// Ask `prompts` as the gate says: `true` when every one is approved, `false` at the first one
/// declined (or in a plan, after recording what would be asked).
pub async fn approve(ctx: &Ctx, prompts: Vec<Prompt>) -> Result<bool> {
    ctx.cancel.check()?;
    // A call the pipeline did not admit (a tool calling a tool, a test) is judged as dangerous.
    let gate = ctx.gate.unwrap_or(Gate { tool: "", level: Permission::Dangerous });
    let session = ctx.session.as_deref();
    let already = gate.level == Permission::Moderate && session.is_some_and(|s| granted(s, gate.tool));
    let mut pending = Vec::new();
    let mut action_approved = false;
    for mut prompt in prompts {
        if prompt.kind == PromptKind::Action && already {
            continue;
        }
        // The person approving a moderate tool is told that the answer lasts the session.
        if prompt.kind == PromptKind::Action && gate.level == Permission::Moderate && session.is_some() {
            prompt.text = format!("{}\n(Allow {} for the rest of this session?)", prompt.text, gate.tool);
        }
        if ctx.approved.covers(&prompt) {
            action_approved |= prompt.kind == PromptKind::Action;
            continue;
        }
        pending.push(prompt);
    }
    if let Some(plan) = &ctx.plan {
        if let Ok(mut recorded) = plan.lock() {
            recorded.extend(pending);
        }
        return Ok(false);
    }
    if !pending.is_empty() {
        let Some(confirm) = &ctx.confirm else { return Err(approval_required(gate.tool, &pending)) };
        for prompt in &pending {
            let answer = ctx.unless_cancelled(confirm(prompt.text.clone())).await?.map_err(|e| {
                if e.code() == ErrorCode::ConfirmFailed {
                    e
                } else {
                    ToolError::new(ErrorCode::ConfirmFailed, e.message().to_owned())
                }
            })?;
            ctx.cancel.check()?;
            if !answer {
                return Ok(false);
            }
            action_approved |= prompt.kind == PromptKind::Action;
        }
    }
    if action_approved
        && gate.level == Permission::Moderate
        && let Some(s) = session
    {
        grant(s, gate.tool);
    }
    Ok(true)
}

/// `APPROVAL_REQUIRED`, listing what still needs approval.
pub fn approval_required(tool: &str, pending: &[Prompt]) -> ToolError {
    let list: Vec<String> = pending.iter().map(|p| format!("- [{}] {}", p.kind.as_str(), p.text)).collect();
    let tool = if tool.is_empty() { "this call".to_owned() } else { tool.to_owned() };
    ToolError::new(
        ErrorCode::ApprovalRequired,
        format!(
            "{tool} needs approval and no one could be asked (no confirm callback, and the host's \
             approval did not cover these prompts). Nothing ran. Still to approve:\n{}",
            list.join("\n")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::constant_confirm;

    fn ctx(level: Permission, session: Option<&str>) -> Ctx {
        let mut c = Ctx::new(".").unwrap();
        c.gate = Some(Gate { tool: "git_stage", level });
        c.session = session.map(str::to_owned);
        c
    }

    #[tokio::test]
    async fn moderate_asks_once_per_session_and_dangerous_every_time() {
        let s = format!("gate-test-{}", std::process::id());
        let c = ctx(Permission::Moderate, Some(&s)).with_confirm(constant_confirm(true));
        assert!(approve(&c, vec![Prompt::action("stage a")]).await.unwrap());
        // Granted: no one is asked now (no confirm at all).
        let mut quiet = c.clone();
        quiet.confirm = None;
        assert!(approve(&quiet, vec![Prompt::action("stage b")]).await.unwrap());
        // ...but a destructive finding is asked every time.
        let e =
            approve(&quiet, vec![Prompt::action("x"), Prompt::destructive("rm -rf /")]).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::ApprovalRequired);
        assert!(e.message().contains("rm -rf /"), "{}", e.message());
        assert!(end_session(&s));
        let e = approve(&quiet, vec![Prompt::action("stage c")]).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::ApprovalRequired);
        let mut d = ctx(Permission::Dangerous, Some(&s));
        d.confirm = Some(constant_confirm(true));
        assert!(approve(&d, vec![Prompt::action("go")]).await.unwrap());
        d.confirm = None;
        assert!(approve(&d, vec![Prompt::action("go")]).await.is_err());
    }

    #[tokio::test]
    async fn an_approval_covers_exactly_what_it_names() {
        let mut c = ctx(Permission::Dangerous, None);
        c.approved = Approved::Kinds(vec![PromptKind::Action]);
        assert!(approve(&c, vec![Prompt::action("Run command: ls")]).await.unwrap());
        let e =
            approve(&c, vec![Prompt::action("Run"), Prompt::destructive("Destructive")]).await.unwrap_err();
        assert!(e.message().contains("[destructive] Destructive"), "{}", e.message());
        assert!(!e.message().contains("[action]"), "{}", e.message());
        c.approved = Approved::Texts(Arc::new(["Run".to_owned(), "Destructive".to_owned()].into()));
        assert!(approve(&c, vec![Prompt::action("Run"), Prompt::destructive("Destructive")]).await.unwrap());
        // A different text is not covered: it goes to the confirm, which declines.
        let c = c.with_confirm(constant_confirm(false));
        assert!(!approve(&c, vec![Prompt::action("Run"), Prompt::destructive("Other")]).await.unwrap());
    }

    #[tokio::test]
    async fn a_plan_records_and_answers_no() {
        let mut c = ctx(Permission::Dangerous, None).with_confirm(constant_confirm(true));
        let plan: PlanRecorder = Arc::default();
        c.plan = Some(Arc::clone(&plan));
        assert!(!approve(&c, vec![Prompt::action("a"), Prompt::hooks("h")]).await.unwrap());
        assert_eq!(plan.lock().unwrap().len(), 2);
    }

    #[test]
    fn sessions_are_capped() {
        for i in 0..(MAX_SESSIONS + 10) {
            grant(&format!("cap-{i}"), "git_stage");
        }
        assert!(live_sessions() <= MAX_SESSIONS);
    }
}
