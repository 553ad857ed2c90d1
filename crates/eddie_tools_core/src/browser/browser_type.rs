//! `browser_type`: type text into the focused element, or into a `ref` / `selector` (focused
//! first). `clear` empties the field first; `submit` presses Enter afterwards (and a
//! navigation it starts is waited for). It asks `ctx.confirm` first, naming the element and
//! the text.

use std::time::Instant;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::element::{self, Which};
use super::{open, page_info, settle_navigation, tab_id};
use crate::call::args::lenient::{Flag, Int, Seconds};
use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "browser_type";

/// The arguments of `browser_type`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The text to type.
    pub text: String,
    /// The element's ref from browser_read_page or browser_find (e.g. e12); default: the focused element.
    #[serde(rename = "ref")]
    pub r#ref: Option<String>,
    /// A CSS selector for the element; default: the focused element.
    pub selector: Option<String>,
    /// Empty the field first.
    pub clear: Option<Flag>,
    /// Press Enter afterwards (submits a form).
    pub submit: Option<Flag>,
    /// The tab (browser_get_tabs lists them); default: the current tab.
    pub tab_id: Option<Int>,
    /// Time limit in seconds for a navigation that Enter starts (default 10, at most 120).
    pub timeout: Option<Seconds<10_000, 120>>,
}

const FOCUS: &str = r#"function(clear) {
  const e = this.nodeType === 3 ? this.parentElement : this;
  e.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  e.focus();
  if (clear) {
    if ('value' in e) { e.value = ''; e.dispatchEvent(new Event('input', { bubbles: true })); }
    else if (e.isContentEditable) { e.textContent = ''; }
  }
  const a = document.activeElement;
  return a === e || e.contains(a);
}"#;

fn clip(s: &str, n: usize) -> String {
    match crate::engine::text::utf8::head_chars(s, n) {
        (head, true) => format!("{head}…"),
        (whole, false) => whole.to_owned(),
    }
}

/// Run `browser_type`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let tab = tab_id(a.tab_id)?;
    let limit = Seconds::duration(a.timeout);
    let clear = Flag::on(a.clear);
    let submit = Flag::on(a.submit);
    if a.text.contains('\0') {
        return Err(ToolError::invalid("text must not contain NUL"));
    }
    let which = Which::of(a.r#ref.as_deref(), a.selector.as_deref(), None, None)?;
    let (b, t) = open(ctx, tab).await?;
    let el = match &which {
        Some(w) => element::resolve(&b, &t, w).await?,
        None => {
            let r = b
                .conn
                .call(
                    Some(&t.session),
                    "Runtime.evaluate",
                    json!({"expression": "document.activeElement && document.activeElement !== document.body ? document.activeElement : null"}),
                )
                .await?;
            match r["result"]["objectId"].as_str() {
                Some(o) => {
                    let el = element::Element {
                        object: o.to_owned(),
                        desc: String::new(),
                        info: serde_json::Value::Null,
                    };
                    let info = element::call_on(&b, &t, &el.object, "function() { const e = this; let s = e.tagName.toLowerCase(); if (e.id) s += '#' + e.id; return { tag: e.tagName.toLowerCase(), selector: s, text: (e.getAttribute('aria-label') || e.getAttribute('placeholder') || e.getAttribute('name') || '').slice(0, 80) }; }", Vec::new()).await?;
                    let desc = format!(
                        "the focused {} \"{}\"",
                        info["selector"].as_str().unwrap_or("element"),
                        info["text"].as_str().unwrap_or("")
                    );
                    element::Element { desc, info, ..el }
                }
                None => {
                    return Err(ToolError::new(
                        ErrorCode::ElementNotFound,
                        "nothing in the page has focus; give ref or selector (browser_find finds the field)",
                    )
                    .with_prop(
                        "candidates",
                        serde_json::Value::Array(element::candidates(&b, &t, "input field textbox").await),
                    ));
                }
            }
        }
    };
    let (url, _) = page_info(&b, &t).await;
    let enter = if submit { ", then press Enter" } else { "" };
    let clearing = if clear { "clear it and " } else { "" };
    let msg = format!(
        "In browser tab {} ({url}): {clearing}type {:?} into {}{enter}",
        t.id,
        clip(&a.text, 80),
        el.desc
    );
    if !ctx.confirm(msg).await? {
        return Ok(ToolOutput::new(
            format!("Typing into {} cancelled by user; nothing typed.", el.desc),
            json!({"tabId": t.id, "typed": false, "cancelled": true, "element": el.desc, "chars": 0, "submitted": false, "navigated": false, "url": url, "value": null}),
        ));
    }
    let deadline = Instant::now() + limit;
    let focused = element::call_on(&b, &t, &el.object, FOCUS, vec![json!(clear)]).await?;
    if focused != json!(true) {
        return Err(ToolError::new(
            ErrorCode::ElementNotFound,
            format!("{} cannot take focus, so it cannot be typed into", el.desc),
        ));
    }
    let s = Some(t.session.as_str());
    if !a.text.is_empty() {
        b.conn.call_within(s, "Input.insertText", json!({"text": a.text}), super::INPUT_TIMEOUT).await?;
    }
    let before = super::before(&t);
    let mut navigated = false;
    if submit {
        let key = json!({"type": "keyDown", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "nativeVirtualKeyCode": 13, "text": "\r", "unmodifiedText": "\r"});
        b.conn.call_within(s, "Input.dispatchKeyEvent", key, super::INPUT_TIMEOUT).await?;
        let up = json!({"type": "keyUp", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "nativeVirtualKeyCode": 13});
        b.conn.call_within(s, "Input.dispatchKeyEvent", up, super::INPUT_TIMEOUT).await?;
        navigated = settle_navigation(&t, before, deadline).await;
    }
    let value = if navigated {
        serde_json::Value::Null
    } else {
        element::call_on(
            &b,
            &t,
            &el.object,
            "function() { return 'value' in this ? String(this.value) : (this.textContent || ''); }",
            Vec::new(),
        )
        .await
        .unwrap_or(serde_json::Value::Null)
    };
    let (now, _) = page_info(&b, &t).await;
    let chars = a.text.chars().count();
    let mut content = format!("Typed {chars} character(s) into {} in tab {}", el.desc, t.id);
    if submit {
        content.push_str(" and pressed Enter");
    }
    if navigated {
        content.push_str(&format!("; it navigated to {now}"));
    }
    let data = json!({
        "tabId": t.id,
        "typed": true,
        "cancelled": false,
        "element": el.desc,
        "chars": chars,
        "submitted": submit,
        "navigated": navigated,
        "url": now,
        "value": value,
    });
    Ok(ToolOutput::new(content, data))
}

/// The `browser_type` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "browserType",
    family: "browser",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("browser_type.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
