//! `ask_user` (Floyd) and `ask_followup_question` (Alfredo): ask the user through
//! `ctx.ask(question) => Promise<string>` and return the answer.

use serde_json::{Value, json};

use crate::context::Ctx;
use crate::engine::process::command::string_array;
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

/// The outputSchema `$id` of `ask_user`.
pub const SCHEMA_ASK_USER: &str = "eddie.tool.ask_user.result.v1";
/// The outputSchema `$id` of `ask_followup_question`.
pub const SCHEMA_FOLLOWUP: &str = "eddie.tool.ask_followup_question.result.v1";

/// Ask; `tool` names the tool in messages.
pub async fn run(args: &Value, ctx: &Ctx, tool: &'static str, schema: &'static str) -> Result<ToolOutput> {
    let question = match args.get("question") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        _ => return Err(ToolError::invalid("question must be a non-empty string")),
    };
    let options = string_array(args, "options")?.unwrap_or_default();
    let Some(ask) = ctx.ask.clone() else {
        return Err(ToolError::new(
            ErrorCode::AskUnavailable,
            format!(
                "{tool} needs a way to reach the user (ctx.ask), and this host gave none. Continue with your best judgement and state your assumptions."
            ),
        ));
    };
    let mut text = question.clone();
    if !options.is_empty() {
        text.push_str("\nOptions:");
        for (i, o) in options.iter().enumerate() {
            text.push_str(&format!("\n{}. {o}", i + 1));
        }
    }
    let answer = ctx.unless_cancelled(ask(text)).await?.map_err(|e| {
        if e.code() == ErrorCode::AskFailed {
            e
        } else {
            ToolError::new(ErrorCode::AskFailed, e.message().to_owned())
        }
    })?;
    let content =
        if answer.trim().is_empty() { "(the user gave an empty answer)".to_owned() } else { answer.clone() };
    let mut data = json!({"question": question, "answer": answer});
    if !options.is_empty() {
        data["options"] = json!(options);
    }
    Ok(ToolOutput::new(schema, content, data))
}

/// The `ask_user` tool.
pub const ASK_USER: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "ask_user",
    js_name: "askUser",
    family: "exec",
    effects: crate::registry::Effects::ReadOnly,
    permission: crate::registry::Permission::None,
    aliases: &[],
    definition: include_str!("ask_user.json"),
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx, "ask_user", SCHEMA_ASK_USER)),
};

/// The `ask_followup_question` tool.
pub const ASK_FOLLOWUP_QUESTION: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "ask_followup_question",
    js_name: "askFollowupQuestion",
    family: "exec",
    effects: crate::registry::Effects::ReadOnly,
    permission: crate::registry::Permission::None,
    aliases: &[],
    definition: include_str!("ask_followup_question.json"),
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx, "ask_followup_question", SCHEMA_FOLLOWUP)),
};
