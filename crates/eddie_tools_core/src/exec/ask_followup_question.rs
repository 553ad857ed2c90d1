//! `ask_followup_question` (Alfredo): ask the user a question with suggested answers, through
//! `ask_user`'s [`super::ask_user::run`].

use schemars::JsonSchema;
use serde::Deserialize;

use super::args::Word;
use super::ask_user::run;

/// The arguments of `ask_followup_question`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A clear, specific question.
    #[schemars(length(min = 1))]
    pub question: String,
    /// Suggested answers.
    pub options: Option<Vec<Word>>,
}

/// The `ask_followup_question` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "ask_followup_question",
    js_name: "askFollowupQuestion",
    family: "exec",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("ask_followup_question.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| {
        Box::pin(async move {
            let a: Args = crate::call::args::parse("ask_followup_question", args)?;
            run(a.question, a.options, ctx, "ask_followup_question").await
        })
    },
};
