//! The `eddie` family: the 13 built-in tools of `@eddie/tools`, with eddie's schemas
//! byte-for-byte (`eddie.json`). `builtinTools` is exactly this family, in this order.

use super::Family;

/// The family.
pub const FAMILY: Family = Family {
    name: "eddie",
    tools: &[
        crate::shell::bash::TOOL,
        crate::fs::file_read::TOOL,
        crate::fs::file_write::TOOL,
        crate::search::file_search::TOOL,
        crate::search::tree::TOOL,
        crate::plan::get_plan::TOOL,
        crate::plan::complete_task::TOOL,
        crate::plan::update_plan::TOOL,
        crate::tasks::new_task_list::TOOL,
        crate::tasks::new_task::TOOL,
        crate::tasks::get_task_list::TOOL,
        crate::tasks::set_task_status::TOOL,
        crate::tasks::delete_task::TOOL,
    ],
    contract: Some(include_str!("eddie.json")),
    partial_on_cancel: false,
};
