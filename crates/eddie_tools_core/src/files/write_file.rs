//! `write_file`: create, overwrite or append (Stack `write` with `append`, Floyd `write_file`
//! with `createBackup`, TunaCode `write_file` that never overwrites, Alfredo `write_to_file`).
//!
//! An existing text file keeps its encoding, BOM and line-ending style (LF in `content` becomes
//! CRLF in a CRLF file); `overwrite: false` refuses an existing file with `ALREADY_EXISTS`;
//! `createBackup` copies the old content to `<path>.bak` in the same atomic commit.
//!
//! TunaCode's `write_file` only creates files ("use `update_file` for modifications"): a call
//! in TunaCode's style (`style: "tunacode"`, or TunaCode's `filepath` key, see
//! [`crate::registry::IMPLIED`]) refuses an existing file unless it says `overwrite: true`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{encoding_of, non_empty};
use crate::call::args::lenient::Flag;
use crate::context::Ctx;
use crate::engine::store::commit::{Change, commit};
use crate::engine::text::doc::{self, Detected, Enc, TextDoc, detect_full, encode_into, eol_style, with_eol};
use crate::error::{ErrorCode, Result, ToolError, exists_error};
use crate::output::ToolOutput;

const NAME: &str = "write_file";

/// The arguments of `write_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// File path, relative to the workspace (also accepted: filePath, filepath).
    #[schemars(length(min = 1))]
    pub path: String,
    /// The complete text to write (or to append).
    pub content: String,
    /// Append instead of replacing.
    pub append: Option<Flag>,
    /// Allow replacing an existing file (default true; false in TunaCode's style).
    pub overwrite: Option<Flag>,
    /// TunaCode's inverted `overwrite` (also: no_overwrite).
    #[schemars(skip)]
    pub no_overwrite: Option<Flag>,
    /// Copy the previous content to `<path>.bak` first.
    pub create_backup: Option<Flag>,
    /// Encoding for the file (default: the existing file's, else UTF-8).
    pub encoding: Option<String>,
    /// The `hash` a read returned; the edit is refused with STALE if the file changed since.
    pub expected_hash: Option<String>,
    /// Accept lines such as '// ... rest of the code ...' literally (by default they are refused as omission placeholders).
    pub allow_placeholders: Option<Flag>,
    /// default, or tunacode: TunaCode's write_file, which creates new files and refuses to overwrite one (use edit_file). TunaCode's `filepath` key selects it.
    pub style: Option<Style>,
}

/// Whose behaviour a call gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Style {
    /// Create or replace.
    Default,
    /// TunaCode's: create only.
    Tunacode,
}

/// Run `write_file`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let path = non_empty("path", a.path)?;
    let content = a.content;
    let append = Flag::on(a.append);
    let backup = Flag::on(a.create_backup);
    let tunacode = a.style == Some(Style::Tunacode);
    let overwrite_given = a.overwrite.is_some();
    let overwrite = a.overwrite.map_or(!tunacode, |f| f.0) && !Flag::on(a.no_overwrite);
    let forced = encoding_of(a.encoding.as_deref())?;
    let expected = a.expected_hash;
    let allow_placeholders = Flag::on(a.allow_placeholders);
    let resolved = ctx.workspace.resolve(&path)?;
    let _lock = crate::engine::store::locks::lock(&resolved.real).await;
    let (real, lexical) = (resolved.real.clone(), resolved.lexical.clone());
    let existing: Option<Vec<u8>> = crate::blocking("write_file", move || match std::fs::metadata(&real) {
        Ok(m) if m.is_dir() => {
            Err(ToolError::fs(&std::io::Error::from_raw_os_error(libc::EISDIR), "open", Some(&lexical)))
        }
        Ok(m) if !m.is_file() => {
            Err(ToolError::invalid(format!("{} is not a regular file", lexical.display())))
        }
        Ok(_) => std::fs::read(&real).map(Some).map_err(|e| ToolError::fs(&e, "open", Some(&lexical))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ToolError::fs(&e, "stat", Some(&lexical))),
    })
    .await?;
    if let Some(exp) = &expected {
        match &existing {
            Some(bytes) => doc::check_hash(Some(exp), bytes, &path)?,
            None => {
                return Err(ToolError::new(
                    ErrorCode::Stale,
                    format!("{path} no longer exists (expected hash {exp})"),
                )
                .with_prop("path", path.clone()));
            }
        }
    }
    if existing.is_some() && !overwrite && !append {
        let why = if tunacode && !overwrite_given {
            "write_file only creates new files here (TunaCode's write_file); use update_file (edit_file) to change it"
        } else {
            "overwrite: false forbids replacing it; use edit_file to change it"
        };
        return Err(exists_error(&path, why));
    }
    // Encoding and BOM: the existing file's, unless `encoding` says otherwise. A chosen
    // UTF-16 gets a BOM; a chosen UTF-8 keeps the BOM the file had.
    let det = match (&existing, forced) {
        (old, Some(enc)) => {
            let had_bom = old.as_ref().is_some_and(|b| !enc.bom().is_empty() && b.starts_with(enc.bom()));
            Detected { enc, bom: enc.unit() == 2 || had_bom, binary: false }
        }
        (Some(bytes), None) => detect_full(bytes),
        (None, None) => Detected { enc: Enc::Utf8, bom: false, binary: false },
    };
    // The line-ending style of the existing text, read in its own (detected) encoding.
    let file_eol = match &existing {
        Some(bytes) => {
            let own = detect_full(bytes);
            if own.binary {
                "\n"
            } else {
                TextDoc::decode(bytes, Some(own.enc), &path).map(|d| eol_style(&d.text).0).unwrap_or("\n")
            }
        }
        None => "\n",
    };
    let body = with_eol(&content, file_eol);
    if !append {
        let before =
            existing.as_deref().map(|b| TextDoc::decode(b, None, &path).map(|d| d.text).unwrap_or_default());
        crate::files::placeholder::check(
            &content,
            before.as_deref().unwrap_or_default(),
            allow_placeholders,
            &path,
        )?;
    }
    let new_bytes = if append {
        let Some(old) = &existing else {
            return write_new(ctx, &path, resolved.real, det, &body).await;
        };
        if det.binary {
            return Err(ToolError::new(
                ErrorCode::BinaryFile,
                format!("{path} is a binary file; text cannot be appended to it"),
            )
            .with_prop("path", path.clone()));
        }
        let mut out = old.clone();
        if old.is_empty() && det.bom {
            out.extend_from_slice(det.enc.bom());
        }
        encode_into(det.enc, &body, &mut out, &path).map_err(convert_hint)?;
        out
    } else {
        let det = if det.binary { Detected { enc: Enc::Utf8, bom: false, binary: false } } else { det };
        let mut out = if det.bom { det.enc.bom().to_vec() } else { Vec::new() };
        encode_into(det.enc, &body, &mut out, &path).map_err(convert_hint)?;
        out
    };
    let Some(old) = existing else {
        return write_new(ctx, &path, resolved.real, det, &body).await;
    };
    let verb = if append { "Append to file" } else { "Write file" };
    if !ctx.confirm(format!("{verb}: {path}")).await? {
        return Ok(cancelled(&path));
    }
    let again = ctx.workspace.resolve(&path)?;
    let mut changes = vec![Change {
        display: path.clone(),
        real: again.real.clone(),
        old: Some(old.clone()),
        new: Some(new_bytes.clone()),
        seen: None,
    }];
    let mut backup_path = Value::Null;
    if backup {
        let (shown, real) = free_backup_name(ctx, &path)?;
        changes.push(Change { display: shown.clone(), real, old: None, new: Some(old.clone()), seen: None });
        backup_path = json!(shown);
    }
    crate::blocking("write_file", move || commit(&changes)).await?;
    let written = new_bytes.len() - if append { old.len() } else { 0 };
    let lines = body.lines().count();
    let note = if backup_path.is_null() {
        String::new()
    } else {
        format!(" (backup: {})", backup_path.as_str().unwrap_or_default())
    };
    let what = if append { "Appended" } else { "Wrote" };
    Ok(ToolOutput::new(
        format!("{what} {written} bytes ({lines} lines) to {path}{note}."),
        json!({
            "path": path, "bytesWritten": written, "linesWritten": lines, "created": false, "appended": append,
            "backupPath": backup_path, "encoding": det.enc.name(), "bom": det.bom, "hash": doc::hash(&new_bytes),
            "cancelled": false,
        }),
    ))
}

async fn write_new(
    ctx: &Ctx,
    path: &str,
    real: std::path::PathBuf,
    det: Detected,
    body: &str,
) -> Result<ToolOutput> {
    let mut bytes = if det.bom { det.enc.bom().to_vec() } else { Vec::new() };
    encode_into(det.enc, body, &mut bytes, path)?;
    if !ctx.confirm(format!("Create file: {path}")).await? {
        return Ok(cancelled(path));
    }
    let again = ctx.workspace.resolve(path)?;
    let real = if again.real == real { real } else { again.real };
    let change = Change { display: path.to_owned(), real, old: None, new: Some(bytes.clone()), seen: None };
    crate::blocking("write_file", move || commit(&[change])).await?;
    let lines = body.lines().count();
    Ok(ToolOutput::new(
        format!("Created {path} ({} bytes, {lines} lines).", bytes.len()),
        json!({
            "path": path, "bytesWritten": bytes.len(), "linesWritten": lines, "created": true, "appended": false,
            "backupPath": null, "encoding": det.enc.name(), "bom": det.bom, "hash": doc::hash(&bytes), "cancelled": false,
        }),
    ))
}

/// An `UNENCODABLE` error of a whole-file write says how to convert the file instead.
fn convert_hint(e: ToolError) -> ToolError {
    if e.code() == ErrorCode::Unencodable {
        let mut out = ToolError::new(
            e.code(),
            format!("{} Pass encoding: \"utf-8\" to rewrite the file as UTF-8.", e.message()),
        );
        for (k, v) in e.props() {
            out = out.with_prop(k, v.clone());
        }
        out
    } else {
        e
    }
}

fn cancelled(path: &str) -> ToolOutput {
    ToolOutput::new(
        format!("Write of {path} cancelled by user; nothing changed."),
        json!({
            "path": path, "bytesWritten": 0, "linesWritten": 0, "created": false, "appended": false,
            "backupPath": null, "encoding": null, "bom": false, "hash": null, "cancelled": true,
        }),
    )
}

/// `<path>.bak`, or `<path>.bak.N` when taken.
fn free_backup_name(ctx: &Ctx, path: &str) -> Result<(String, std::path::PathBuf)> {
    for n in 0..1000 {
        let shown = if n == 0 { format!("{path}.bak") } else { format!("{path}.bak.{n}") };
        let r = ctx.workspace.resolve(&shown)?;
        if std::fs::symlink_metadata(&r.real).is_err() {
            return Ok((shown, r.real));
        }
    }
    Err(ToolError::new(ErrorCode::AlreadyExists, format!("no free backup name for {path}")))
}

/// The `write_file` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "writeFile",
    family: "files",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[("create_backup", "createBackup"), ("no_overwrite", "noOverwrite")],
    // Stack `write`, Alfredo `write_to_file`
    tool_aliases: &["write", "write_to_file"],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("write_file.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
