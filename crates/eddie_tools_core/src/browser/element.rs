//! Elements the tools act on: by ref (from `browser_read_page` / `browser_find`), by CSS
//! selector, or by point. A missing one is `ELEMENT_NOT_FOUND` with the nearest candidates
//! (ranked the way `browser_find` ranks).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::session::{Browser, Tab};
use super::tree;
use crate::error::{ErrorCode, Result, ToolError};

/// Which element.
#[derive(Debug, Clone)]
pub enum Which {
    /// A ref (`e12`).
    Ref(u32, String),
    /// A CSS selector.
    Selector(String),
    /// A point in the viewport.
    Point(f64, f64),
}

impl Which {
    /// From the arguments (at most one way); `None` when none is given.
    pub fn of(
        r: Option<&str>,
        selector: Option<&str>,
        x: Option<f64>,
        y: Option<f64>,
    ) -> Result<Option<Which>> {
        let given = usize::from(r.is_some())
            + usize::from(selector.is_some())
            + usize::from(x.is_some() || y.is_some());
        if given > 1 {
            return Err(ToolError::invalid("give one of ref, selector or x/y"));
        }
        if let Some(r) = r {
            let t = r.trim().trim_start_matches('[').trim_end_matches(']');
            let n = t
                .strip_prefix('e')
                .or_else(|| t.strip_prefix("ref="))
                .map(|s| s.trim_start_matches('e'))
                .and_then(|s| s.parse::<u32>().ok())
                .ok_or_else(|| {
                    ToolError::invalid(format!("ref must look like e12 (from browser_read_page), not {r:?}"))
                })?;
            return Ok(Some(Which::Ref(n, format!("e{n}"))));
        }
        if let Some(s) = selector {
            if s.trim().is_empty() {
                return Err(ToolError::invalid("selector must be a non-empty CSS selector"));
            }
            return Ok(Some(Which::Selector(s.to_owned())));
        }
        match (x, y) {
            (None, None) => Ok(None),
            (Some(x), Some(y)) if x.is_finite() && y.is_finite() && x >= 0.0 && y >= 0.0 => {
                Ok(Some(Which::Point(x, y)))
            }
            (Some(_), Some(_)) => {
                Err(ToolError::invalid("x and y must be non-negative viewport coordinates"))
            }
            _ => Err(ToolError::invalid("give both x and y")),
        }
    }

    /// How it was named, for messages.
    pub fn shown(&self) -> String {
        match self {
            Which::Ref(_, r) => format!("ref {r}"),
            Which::Selector(s) => format!("selector {s:?}"),
            Which::Point(x, y) => format!("point ({x}, {y})"),
        }
    }
}

/// A resolved element.
#[derive(Debug, Clone)]
pub struct Element {
    /// The remote object.
    pub object: String,
    /// What it is, for messages (`button "Submit" (button#go)`).
    pub desc: String,
    /// Its description as JSON (`tag`, `text`, `selector`).
    pub info: Value,
}

const DESCRIBE: &str = r#"function() {
  const e = this.nodeType === 3 ? this.parentElement : this;
  if (!e || !e.tagName) return null;
  const clean = (s) => (s || '').trim().replace(/\s+/g, ' ').slice(0, 80);
  const label = e.labels && e.labels.length ? e.labels[0].innerText : '';
  const text = clean(e.getAttribute('aria-label') || label || e.innerText || e.value || e.getAttribute('placeholder') || e.getAttribute('title') || e.getAttribute('alt'));
  let sel = e.tagName.toLowerCase();
  if (e.id) sel += '#' + e.id;
  else if (e.getAttribute('name')) sel += '[name="' + e.getAttribute('name') + '"]';
  else if (e.classList && e.classList.length) sel += '.' + Array.from(e.classList).slice(0, 2).join('.');
  const tag = e.tagName.toLowerCase(); const type = (e.getAttribute('type') || '').toLowerCase();
  const kind = e.getAttribute('role') || (tag === 'a' ? 'link' : tag === 'select' ? 'combobox' : tag === 'textarea' ? 'textbox'
    : tag === 'input' ? (['checkbox', 'radio', 'range', 'file', 'color'].includes(type) ? type : ['submit', 'button', 'reset', 'image'].includes(type) ? 'button' : 'textbox') : tag);
  return { tag, text, selector: sel, type: e.getAttribute('type'), role: kind };
}"#;

/// Call `function` on the object; its value.
pub async fn call_on(
    b: &Browser,
    tab: &Tab,
    object: &str,
    function: &str,
    args: Vec<Value>,
) -> Result<Value> {
    let args: Vec<Value> = args.into_iter().map(|v| json!({"value": v})).collect();
    let r = b
        .conn
        .call(
            Some(&tab.session),
            "Runtime.callFunctionOn",
            json!({"objectId": object, "functionDeclaration": function, "arguments": args, "returnByValue": true, "awaitPromise": true}),
        )
        .await
        .map_err(|e| gone_node(e, "the element"))?;
    if let Some(d) = r.get("exceptionDetails") {
        let text =
            d["exception"]["description"].as_str().or_else(|| d["text"].as_str()).unwrap_or("exception");
        return Err(ToolError::new(
            ErrorCode::ElementNotFound,
            format!("the element cannot be used: {text}"),
        ));
    }
    Ok(r["result"]["value"].clone())
}

fn gone_node(e: ToolError, what: &str) -> ToolError {
    if super::cdp::cdp_error(&e).is_some() {
        ToolError::new(
            ErrorCode::ElementNotFound,
            format!("{what} is no longer in the page ({})", e.message()),
        )
    } else {
        e
    }
}

/// The nearest candidates for a failed lookup (top 5 by `browser_find`'s ranking of the
/// words of the selector or ref; the first interactive nodes when there are no words).
pub async fn candidates(b: &Browser, tab: &Tab, query: &str) -> Vec<Value> {
    let Ok(nodes) = tree::fetch(b, tab).await else { return Vec::new() };
    let attrs = tree::attributes(b, tab).await.unwrap_or_default();
    let mut m = tree::rank(&nodes, &attrs, query, 5);
    if m.is_empty() {
        m = nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| !n.ignored && n.interactive() && n.backend.is_some())
            .take(5)
            .map(|(index, _)| tree::Match { index, score: 0.0, why: vec!["an interactive element".into()] })
            .collect();
    }
    tab.with(|s| tree::matches_json(&nodes, &m, s)).unwrap_or_default()
}

/// `ELEMENT_NOT_FOUND` for `which`, with candidates.
pub async fn not_found(b: &Browser, tab: &Tab, which: &Which, why: &str) -> ToolError {
    let query = match which {
        Which::Selector(s) => s.clone(),
        _ => String::new(),
    };
    let c = candidates(b, tab, &query).await;
    let list: Vec<String> = c
        .iter()
        .map(|v| {
            format!(
                "{} {} {:?}",
                v["ref"].as_str().unwrap_or("?"),
                v["role"].as_str().unwrap_or(""),
                v["name"].as_str().unwrap_or("")
            )
        })
        .collect();
    let tail = if list.is_empty() { String::new() } else { format!("; nearest: {}", list.join(", ")) };
    ToolError::new(ErrorCode::ElementNotFound, format!("{} {why}{tail}", which.shown()))
        .with_prop("candidates", Value::Array(c))
}

/// Resolve `which` (not a point) to a live element.
pub async fn resolve(b: &Browser, tab: &Tab, which: &Which) -> Result<Element> {
    let object = match which {
        Which::Ref(n, _) => {
            let backend = tab.with(|s| s.ref_nodes.get(n).copied())?;
            let Some(backend) = backend else {
                return Err(
                    not_found(b, tab, which, "was not handed out in this tab (read the page again)").await
                );
            };
            match b
                .conn
                .call(Some(&tab.session), "DOM.resolveNode", json!({"backendNodeId": backend.abs()}))
                .await
            {
                Ok(r) => r["object"]["objectId"].as_str().unwrap_or("").to_owned(),
                Err(e) if super::cdp::cdp_error(&e).is_some() => {
                    return Err(
                        not_found(b, tab, which, "is no longer in the page (read the page again)").await
                    );
                }
                Err(e) => return Err(e),
            }
        }
        Which::Selector(sel) => {
            let r = b
                .conn
                .call(
                    Some(&tab.session),
                    "Runtime.evaluate",
                    json!({"expression": format!("document.querySelector({})", json!(sel))}),
                )
                .await?;
            if let Some(d) = r.get("exceptionDetails") {
                let text = d["exception"]["description"].as_str().unwrap_or("invalid selector");
                return Err(ToolError::invalid(format!(
                    "selector {sel:?} is not valid CSS: {}",
                    text.lines().next().unwrap_or(text)
                )));
            }
            match r["result"]["objectId"].as_str() {
                Some(o) => o.to_owned(),
                None => return Err(not_found(b, tab, which, "matches nothing").await),
            }
        }
        Which::Point(x, y) => {
            let r = b
                .conn
                .call(
                    Some(&tab.session),
                    "Runtime.evaluate",
                    json!({"expression": format!("document.elementFromPoint({x}, {y})")}),
                )
                .await?;
            match r["result"]["objectId"].as_str() {
                Some(o) => o.to_owned(),
                None => return Err(not_found(b, tab, which, "has no element (outside the viewport?)").await),
            }
        }
    };
    if object.is_empty() {
        return Err(not_found(b, tab, which, "is not an element").await);
    }
    let info = call_on(b, tab, &object, DESCRIBE, Vec::new()).await?;
    if info.is_null() {
        return Err(not_found(b, tab, which, "is not an element").await);
    }
    let text = info["text"].as_str().unwrap_or("");
    let role = info["role"].as_str().unwrap_or("element");
    let desc = if text.is_empty() {
        format!("{role} ({})", info["selector"].as_str().unwrap_or(""))
    } else {
        format!("{role} \"{text}\" ({})", info["selector"].as_str().unwrap_or(""))
    };
    Ok(Element { object, desc, info })
}

/// The element's box in page coordinates (scrolled into view first).
pub async fn page_rect(b: &Browser, tab: &Tab, el: &Element) -> Result<(f64, f64, f64, f64)> {
    let v = call_on(
        b,
        tab,
        &el.object,
        "function() { const e = this.nodeType === 3 ? this.parentElement : this; e.scrollIntoView({block: 'nearest', inline: 'nearest'}); const r = e.getBoundingClientRect(); return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height]; }",
        Vec::new(),
    )
    .await?;
    let f = |i: usize| v[i].as_f64().unwrap_or(0.0);
    if f(2) < 1.0 || f(3) < 1.0 {
        return Err(ToolError::new(ErrorCode::ElementNotFound, format!("{} has no visible box", el.desc)));
    }
    Ok((f(0), f(1), f(2), f(3)))
}

const ACTIONABLE: &str = r#"function() {
  const e = this.nodeType === 3 ? this.parentElement : this;
  if (!e || !e.isConnected) return { state: 'detached' };
  e.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  const r = e.getBoundingClientRect();
  const st = getComputedStyle(e);
  if (r.width === 0 || r.height === 0 || st.visibility === 'hidden' || st.display === 'none') return { state: 'hidden' };
  if (e.disabled || e.getAttribute('aria-disabled') === 'true') return { state: 'disabled' };
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  const hit = document.elementFromPoint(x, y);
  if (hit && hit !== e && !e.contains(hit) && !hit.contains(e) && !(e.labels && Array.from(e.labels).some((l) => l.contains(hit)))) return { state: 'covered', by: hit.tagName.toLowerCase(), x, y };
  return { state: 'ok', x, y };
}"#;

/// Wait until the element is visible, enabled and not covered; its centre in the viewport.
pub async fn actionable(b: &Browser, tab: &Tab, el: &Element, deadline: Instant) -> Result<(f64, f64)> {
    loop {
        let v = call_on(b, tab, &el.object, ACTIONABLE, Vec::new()).await?;
        let state = v["state"].as_str().unwrap_or("");
        if state == "ok" {
            return Ok((v["x"].as_f64().unwrap_or(0.0), v["y"].as_f64().unwrap_or(0.0)));
        }
        if state == "detached" {
            return Err(ToolError::new(ErrorCode::ElementNotFound, format!("{} left the page", el.desc)));
        }
        if Instant::now() >= deadline {
            let why = match state {
                "covered" => format!("covered by a {}", v["by"].as_str().unwrap_or("element")),
                s => s.to_owned(),
            };
            return Err(ToolError::new(
                ErrorCode::Timeout,
                format!("{} stayed {why} until the time limit", el.desc),
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A left click at a viewport point.
pub async fn click_at(b: &Browser, tab: &Tab, x: f64, y: f64) -> Result<()> {
    let s = Some(tab.session.as_str());
    let limit = super::INPUT_TIMEOUT;
    b.conn
        .call_within(s, "Input.dispatchMouseEvent", json!({"type": "mouseMoved", "x": x, "y": y}), limit)
        .await?;
    b.conn
        .call_within(
            s,
            "Input.dispatchMouseEvent",
            json!({"type": "mousePressed", "x": x, "y": y, "button": "left", "buttons": 1, "clickCount": 1}),
            limit,
        )
        .await?;
    b.conn
        .call_within(
            s,
            "Input.dispatchMouseEvent",
            json!({"type": "mouseReleased", "x": x, "y": y, "button": "left", "buttons": 0, "clickCount": 1}),
            limit,
        )
        .await?;
    Ok(())
}
