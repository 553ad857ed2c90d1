//! The `eddie` family: the 13 built-in tools of `@eddie/tools`, with eddie's schemas
//! byte-for-byte (`eddie.json`). `builtinTools` is exactly this family, in this order.

pub mod bash;
pub mod complete_task;
pub mod contract_docs;
pub mod delete_task;
pub mod file_read;
pub mod file_search;
pub mod file_write;
pub mod get_folder_tree_structure;
pub mod get_plan;
pub mod get_task_list;
pub mod new_task;
pub mod new_task_list;
pub mod set_task_status;
pub mod update_plan;

use crate::spec::Family;

/// The family.
pub const FAMILY: Family = Family {
    name: "eddie",
    tools: &[
        crate::eddie::bash::TOOL,
        crate::eddie::file_read::TOOL,
        crate::eddie::file_write::TOOL,
        crate::eddie::file_search::TOOL,
        get_folder_tree_structure::TOOL,
        crate::eddie::get_plan::TOOL,
        crate::eddie::complete_task::TOOL,
        crate::eddie::update_plan::TOOL,
        crate::eddie::new_task_list::TOOL,
        crate::eddie::new_task::TOOL,
        crate::eddie::get_task_list::TOOL,
        crate::eddie::set_task_status::TOOL,
        crate::eddie::delete_task::TOOL,
    ],
    contract: Some(include_str!("eddie.json")),
    contract_docs: contract_docs::DOCS,
    aliases: &[],
    partial_on_cancel: false,
};
