//! Exports of the `exec` family (processes, project runners, permissions, workflow).

use eddie_tools_core::supervisor;
use napi::bindgen_prelude::*;
use napi_derive::napi;

tool_export!(
    "Run a program with arguments, no shell (`run`; `runTool` is taken, hence the name).",
    run_command,
    "run",
    "args: RunArgs, ctx: ToolContext"
);
tool_export!(
    "Start a background process and return its id (`process_start`).",
    process_start,
    "process_start",
    "args: ProcessStartArgs, ctx: ToolContext"
);
tool_export!(
    "Read a background process's output from a cursor (`process_read`).",
    process_read,
    "process_read",
    "args: ProcessReadArgs, ctx: ToolContext"
);
tool_export!(
    "Write to a background process's stdin (`process_write`).",
    process_write,
    "process_write",
    "args: ProcessWriteArgs, ctx: ToolContext"
);
tool_export!(
    "Wait for a regex, a port or the exit of a background process (`process_wait`).",
    process_wait,
    "process_wait",
    "args: ProcessWaitArgs, ctx: ToolContext"
);
tool_export!(
    "Stop a background process and its whole tree (`process_kill`).",
    process_kill,
    "process_kill",
    "args: ProcessKillArgs, ctx: ToolContext"
);
tool_export!(
    "List this workspace's background processes (`process_list`).",
    process_list,
    "process_list",
    "args: ProcessListArgs, ctx: ToolContext"
);
tool_export!(
    "Detect the project type and its commands (`detect_project`).",
    detect_project,
    "detect_project",
    "args: DetectProjectArgs, ctx: ToolContext"
);
tool_export!(
    "Run the project's tests (`run_tests`).",
    run_tests,
    "run_tests",
    "args: RunTestsArgs, ctx: ToolContext"
);
tool_export!("Run the project's linter (`lint`).", lint, "lint", "args: LintArgs, ctx: ToolContext");
tool_export!("Format the project's code (`format`).", format, "format", "args: FormatArgs, ctx: ToolContext");
tool_export!(
    "Type-check the project (`typecheck`).",
    typecheck,
    "typecheck",
    "args: TypecheckArgs, ctx: ToolContext"
);
tool_export!("Build the project (`build`).", build, "build", "args: BuildArgs, ctx: ToolContext");
tool_export!(
    "Install the project's dependencies (`install`).",
    install,
    "install",
    "args: InstallArgs, ctx: ToolContext"
);
tool_export!(
    "Tell a tool's permission level and whether it would ask now (`check_permission`).",
    check_permission,
    "check_permission",
    "args: CheckPermissionArgs, ctx: ToolContext"
);
tool_export!(
    "Ask the user through ctx.ask (`ask_user`).",
    ask_user,
    "ask_user",
    "args: AskUserArgs, ctx: ToolContext"
);
tool_export!(
    "Ask the user a follow-up question through ctx.ask (`ask_followup_question`).",
    ask_followup_question,
    "ask_followup_question",
    "args: AskFollowupQuestionArgs, ctx: ToolContext"
);
tool_export!(
    "Signal that the task is complete (`attempt_completion`).",
    attempt_completion,
    "attempt_completion",
    "args: AttemptCompletionArgs, ctx: ToolContext"
);

/// Ask every running command tree of this process to stop (SIGTERM to each tree, SIGKILL
/// after a second); returns how many there were. `index.js` calls it on `process.exit`.
#[napi(catch_unwind)]
pub fn terminate_all_processes() -> u32 {
    u32::try_from(supervisor::terminate_all()).unwrap_or(u32::MAX)
}
