//! `ask_user` (Floyd): ask the user through `ctx.ask(question) => Promise<string>` and return
//! the answer. [`run`] is shared with `ask_followup_question` (Alfredo), which adds options.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::args::{self, Word};
use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

/// The arguments of `ask_user`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The question.
    #[schemars(length(min = 1))]
    pub question: String,
}

/// Ask `question`, with `options` as suggested answers; `tool` names the tool in messages.
pub async fn run(
    question: String,
    options: Option<Vec<Word>>,
    ctx: &Ctx,
    tool: &'static str,
) -> Result<ToolOutput> {
    if question.trim().is_empty() {
        return Err(ToolError::invalid("question must be a non-empty string"));
    }
    let options = args::words(options);
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
    Ok(ToolOutput::new(content, data))
}

/// The `ask_user` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "ask_user",
    js_name: "askUser",
    family: "exec",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("ask_user.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| {
        Box::pin(async move {
            let a: Args = crate::call::args::parse("ask_user", args)?;
            run(a.question, None, ctx, "ask_user").await
        })
    },
};
