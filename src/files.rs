//! The `files` family's exports (see `eddie_tools_core::files`).

use napi::bindgen_prelude::*;
use napi_derive::napi;

tool_export!(
    "Read numbered lines of a text file, encoding-aware, O(range) (`read_file`).",
    read_file,
    "read_file",
    "args: ReadFileArgs, ctx: ToolContext"
);
tool_export!(
    "Create, overwrite or append a file atomically, after confirm (`write_file`).",
    write_file,
    "write_file",
    "args: WriteFileArgs, ctx: ToolContext"
);
tool_export!(
    "Replace text or apply SEARCH/REPLACE blocks, after confirm (`edit_file`).",
    edit_file,
    "edit_file",
    "args: EditFileArgs, ctx: ToolContext"
);
tool_export!(
    "Apply several replacements to one file atomically, after confirm (`multi_edit`).",
    multi_edit,
    "multi_edit",
    "args: MultiEditArgs, ctx: ToolContext"
);
tool_export!(
    "Apply a unified diff to one or many files atomically, after confirm (`apply_unified_diff`).",
    apply_unified_diff,
    "apply_unified_diff",
    "args: ApplyUnifiedDiffArgs, ctx: ToolContext"
);
tool_export!(
    "Apply a codex `*** Begin Patch` patch atomically, after confirm (`apply_patch`).",
    apply_patch,
    "apply_patch",
    "args: ApplyPatchArgs, ctx: ToolContext"
);
tool_export!(
    "Rate the risk of a diff or patch (`assess_patch_risk`).",
    assess_patch_risk,
    "assess_patch_risk",
    "args: AssessPatchRiskArgs, ctx: ToolContext"
);
tool_export!(
    "Replace a line range, after confirm (`edit_range`).",
    edit_range,
    "edit_range",
    "args: EditRangeArgs, ctx: ToolContext"
);
tool_export!(
    "Insert lines before a line, after confirm (`insert_at`).",
    insert_at,
    "insert_at",
    "args: InsertAtArgs, ctx: ToolContext"
);
tool_export!(
    "Delete a line range, after confirm (`delete_range`).",
    delete_range,
    "delete_range",
    "args: DeleteRangeArgs, ctx: ToolContext"
);
tool_export!(
    "Copy a file or directory, after confirm (`copy_file`).",
    copy_file,
    "copy_file",
    "args: CopyFileArgs, ctx: ToolContext"
);
tool_export!(
    "Move or rename a file or directory, after confirm (`move_file`).",
    move_file,
    "move_file",
    "args: MoveFileArgs, ctx: ToolContext"
);
tool_export!(
    "Delete a file or directory with `force`, after confirm (`delete_file`).",
    delete_file,
    "delete_file",
    "args: DeleteFileArgs, ctx: ToolContext"
);
tool_export!(
    "List a directory with type markers (`list_directory`).",
    list_directory,
    "list_directory",
    "args: ListDirectoryArgs, ctx: ToolContext"
);
tool_export!(
    "Metadata and text facts of a file (`get_file_info`).",
    get_file_info,
    "get_file_info",
    "args: GetFileInfoArgs, ctx: ToolContext"
);
