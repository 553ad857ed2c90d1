//! The byte-exact scenario folders of the `files` family (`__test__/scenarios/<name>/`), run
//! through the core, with the same expectations as `__test__/files.scenarios.test.mjs`:
//!
//! - `input/` is copied into a fresh workspace and `request.json` is run there:
//!   `{tool, args, confirm?, error?: {code, message?, reason?, lines?}, data?, contentIncludes?,
//!   prompt?}` (`confirm`, default `true`, is what every confirm prompt answers);
//! - with `error`, the call must fail with that code (`message` is a JS regular expression the
//!   message must match; `reason` and `lines` must equal the error's properties) and ask nothing;
//! - without, it must succeed; `data` must be contained in the result's data (objects by key,
//!   arrays element-wise), the content must include `contentIncludes`, and some prompt must
//!   include `prompt`;
//! - either way the workspace must then equal `expected/` byte for byte (for a refused request,
//!   `expected/` is the untouched input).
//!
//! Every scenario runs; the test fails listing each failing one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use eddie_tools_core::context::{ConfirmFn, Ctx};
use eddie_tools_core::registry;
use serde_json::{Map, Value};

/// The keys `request.json` may have (an unknown one is a typo or a new expectation this test
/// must learn, as the JS test would; never silently ignored).
const REQUEST_KEYS: &[&str] = &["tool", "args", "confirm", "error", "data", "contentIncludes", "prompt"];
const ERROR_KEYS: &[&str] = &["code", "message", "reason", "lines"];

fn scenarios_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../__test__/scenarios")
}

/// Every file under `dir` (symlinks followed), by `/`-separated relative path.
fn tree(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) -> Result<(), String> {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("read_dir {}: {e}", dir.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| format!("read_dir {}: {e}", dir.display()))?.path();
            let meta = std::fs::metadata(&path).map_err(|e| format!("stat {}: {e}", path.display()))?;
            if meta.is_dir() {
                walk(root, &path, out)?;
            } else {
                let bytes = std::fs::read(&path).map_err(|e| format!("read {}: {e}", path.display()))?;
                let rel = path.strip_prefix(root).map_err(|e| e.to_string())?;
                let rel = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>();
                out.insert(rel.join("/"), bytes);
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out)?;
    Ok(out)
}

/// Copy the tree `from` into the existing directory `to`.
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    for (rel, _) in tree(from)? {
        let (src, dst) = (from.join(&rel), to.join(&rel));
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("mkdir {}: {e}", parent.display()))?;
        }
        std::fs::copy(&src, &dst).map_err(|e| format!("copy {}: {e}", src.display()))?;
    }
    Ok(())
}

/// What differs between the workspace and `expected/`, if anything.
fn tree_diff(actual: &BTreeMap<String, Vec<u8>>, expected: &BTreeMap<String, Vec<u8>>) -> Option<String> {
    let show = |b: &[u8]| format!("{:?}", String::from_utf8_lossy(b));
    let mut out = Vec::new();
    for (rel, want) in expected {
        match actual.get(rel) {
            None => out.push(format!("missing {rel} (expected {})", show(want))),
            Some(got) if got != want => {
                out.push(format!(
                    "{rel} differs:\n      got      {}\n      expected {}",
                    show(got),
                    show(want)
                ));
            }
            Some(_) => {}
        }
    }
    for (rel, got) in actual {
        if !expected.contains_key(rel) {
            out.push(format!("unexpected {rel}: {}", show(got)));
        }
    }
    (!out.is_empty()).then(|| out.join("\n    "))
}

/// JS `assert.deepStrictEqual` on JSON values: numbers compare by value (1 and 1.0 are equal).
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// `actual` contains `expected`: objects by key, arrays element-wise by index (as the JS
/// test's `contains`); anything else must be equal.
fn contains(actual: Option<&Value>, expected: &Value, at: &str) -> Result<(), String> {
    let member = |key: &str| match actual {
        Some(Value::Object(m)) => m.get(key),
        Some(Value::Array(a)) => key.parse::<usize>().ok().and_then(|i| a.get(i)),
        _ => None,
    };
    match expected {
        Value::Object(_) | Value::Array(_) => {
            if !matches!(actual, Some(Value::Object(_) | Value::Array(_))) {
                return Err(format!("{at} is not an object: {actual:?}"));
            }
            let entries: Vec<(String, &Value)> = match expected {
                Value::Object(m) => m.iter().map(|(k, v)| (k.clone(), v)).collect(),
                Value::Array(a) => a.iter().enumerate().map(|(i, v)| (i.to_string(), v)).collect(),
                _ => Vec::new(),
            };
            for (key, want) in entries {
                contains(member(&key), want, &format!("{at}.{key}"))?;
            }
            Ok(())
        }
        _ => match actual {
            Some(got) if json_equal(got, expected) => Ok(()),
            _ => Err(format!("{at}: got {actual:?}, expected {expected}")),
        },
    }
}

/// A confirm callback answering `answer` that records every prompt.
fn recording_confirm(answer: bool) -> (ConfirmFn, Arc<Mutex<Vec<String>>>) {
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&prompts);
    let confirm: ConfirmFn = Arc::new(move |message| {
        seen.lock().unwrap_or_else(PoisonError::into_inner).push(message);
        Box::pin(async move { Ok(answer) })
    });
    (confirm, prompts)
}

fn check_keys(obj: &Map<String, Value>, allowed: &[&str], what: &str) -> Result<(), String> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!("{what} has an unknown key {k:?} (known: {allowed:?})")),
        None => Ok(()),
    }
}

/// Run one scenario folder; `Err` says what did not match.
async fn run_scenario(dir: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(dir.join("request.json")).map_err(|e| format!("request.json: {e}"))?;
    let req: Value = serde_json::from_str(&text).map_err(|e| format!("request.json: {e}"))?;
    let req = req.as_object().ok_or("request.json is not an object")?;
    check_keys(req, REQUEST_KEYS, "request.json")?;
    let tool = req.get("tool").and_then(Value::as_str).ok_or("request.json has no string tool")?;
    let args = req.get("args").cloned().unwrap_or(Value::Null);
    let answer = req.get("confirm").and_then(Value::as_bool).unwrap_or(true);

    let temp = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let ws = temp.path().canonicalize().map_err(|e| format!("realpath: {e}"))?;
    copy_tree(&dir.join("input"), &ws)?;
    let (confirm, prompts) = recording_confirm(answer);
    let ws_str = ws.to_str().ok_or("workspace path is not UTF-8")?;
    let ctx = Ctx::new(ws_str).map_err(|e| format!("ctx: {e:?}"))?.with_confirm(confirm);

    let result = registry::run(tool, &args, &ctx).await;
    let prompts = prompts.lock().unwrap_or_else(PoisonError::into_inner).clone();
    if let Some(want) = req.get("error") {
        let want = want.as_object().ok_or("error is not an object")?;
        check_keys(want, ERROR_KEYS, "request.json error")?;
        let err = match result {
            Ok(out) => return Err(format!("expected an error, got a result: {}", out.content)),
            Err(e) => e,
        };
        let code = want.get("code").and_then(Value::as_str).ok_or("error.code is not a string")?;
        if err.code().as_str() != code {
            return Err(format!("code {} instead of {code}: {}", err.code().as_str(), err.message()));
        }
        if let Some(pattern) = want.get("message") {
            let pattern = pattern.as_str().ok_or("error.message is not a string")?;
            let re = regress::Regex::new(pattern).map_err(|e| format!("error.message {pattern:?}: {e}"))?;
            if re.find(err.message()).is_none() {
                return Err(format!("message {:?} does not match /{pattern}/", err.message()));
            }
        }
        for key in ["reason", "lines"] {
            if let Some(w) = want.get(key)
                && !err.props().get(key).is_some_and(|got| json_equal(got, w))
            {
                return Err(format!("error.{key}: got {:?}, expected {w}", err.props().get(key)));
            }
        }
        if !prompts.is_empty() {
            return Err(format!("a refused request asks nothing, but it asked {prompts:?}"));
        }
    } else {
        let out = result.map_err(|e| format!("failed: {} {}", e.code().as_str(), e.message()))?;
        if let Some(want) = req.get("data") {
            contains(Some(&out.data), want, "data")?;
        }
        if let Some(want) = req.get("contentIncludes") {
            let want = want.as_str().ok_or("contentIncludes is not a string")?;
            if !out.content.contains(want) {
                return Err(format!("content does not include {want:?}:\n{}", out.content));
            }
        }
        if let Some(want) = req.get("prompt") {
            let want = want.as_str().ok_or("prompt is not a string")?;
            if !prompts.iter().any(|p| p.contains(want)) {
                return Err(format!("no prompt names {want:?}: {prompts:?}"));
            }
        }
    }
    match tree_diff(&tree(&ws)?, &tree(&dir.join("expected"))?) {
        Some(diff) => Err(format!("workspace != expected/:\n    {diff}")),
        None => Ok(()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_folder_ends_byte_for_byte_as_expected() {
    let root = scenarios_root();
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no scenario folders in {}", root.display());
    let mut failures = Vec::new();
    for name in &names {
        if let Err(why) = run_scenario(&root.join(name)).await {
            failures.push(format!("scenario {name}: {why}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} scenarios failed:\n{}",
        failures.len(),
        names.len(),
        failures.join("\n")
    );
}
