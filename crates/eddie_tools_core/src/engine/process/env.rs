//! The child environment: the caller's (`ctx.env`, else this process's), minus variables
//! that look like secrets, plus what the call passes explicitly.

use std::collections::HashMap;

use serde_json::Value;

use crate::context::Ctx;
use crate::error::{Result, ToolError};

/// Name parts that mark a secret (matched against `_`-separated parts and whole names).
const SECRET_WORDS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "CREDENTIALS",
    "APIKEY",
    "AUTH",
    "COOKIE",
    "PRIVATE",
    "KEY",
    "PAT",
];

/// Whether a variable looks like it holds a secret: by its name (`GITHUB_TOKEN`,
/// `AWS_SECRET_ACCESS_KEY`, `PGPASSWORD`, `OPENAI_API_KEY`, `NPM_AUTH`) or its value (a
/// private key block, a URL with a password).
pub fn is_secret(name: &str, value: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let by_part = upper.split(['_', '-', '.']).any(|part| {
        SECRET_WORDS.contains(&part)
            || ["TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "CREDENTIAL"]
                .iter()
                .any(|w| part.contains(w))
    });
    let by_value = value.contains("PRIVATE KEY-----") || url_with_password(value);
    by_part || by_value
}

/// `scheme://user:password@host...`
fn url_with_password(v: &str) -> bool {
    let Some(i) = v.find("://") else { return false };
    let rest = &v[i + 3..];
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    authority.rsplit_once('@').is_some_and(|(userinfo, _)| userinfo.contains(':'))
}

/// The environment for a child, and the names of the variables that were dropped.
///
/// `explicit` (`args.env`: name → string, or `null` to unset) always wins; `keep` names
/// inherited variables to pass even though they look secret.
pub fn child_env(
    ctx: &Ctx,
    explicit: Option<&Value>,
    keep: &[String],
) -> Result<(HashMap<String, String>, Vec<String>)> {
    let base: Vec<(String, String)> = match &ctx.env {
        Some(env) => env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        None => std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect(),
    };
    let mut env = HashMap::with_capacity(base.len());
    let mut dropped = Vec::new();
    for (k, v) in base {
        if is_secret(&k, &v) && !keep.iter().any(|n| n == &k) {
            dropped.push(k);
        } else {
            env.insert(k, v);
        }
    }
    match explicit {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (k, v) in map {
                if k.is_empty() || k.contains('=') || k.contains('\0') {
                    return Err(ToolError::invalid(format!("env: invalid variable name {k:?}")));
                }
                match v {
                    Value::Null => {
                        env.remove(k);
                    }
                    Value::String(s) if !s.contains('\0') => {
                        dropped.retain(|d| d != k);
                        env.insert(k.clone(), s.clone());
                    }
                    Value::Number(n) => {
                        dropped.retain(|d| d != k);
                        env.insert(k.clone(), n.to_string());
                    }
                    Value::Bool(b) => {
                        dropped.retain(|d| d != k);
                        env.insert(k.clone(), b.to_string());
                    }
                    _ => return Err(ToolError::invalid(format!("env.{k} must be a string or null"))),
                }
            }
        }
        Some(_) => return Err(ToolError::invalid("env must be an object of strings")),
    }
    dropped.sort();
    Ok((env, dropped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_names_and_values() {
        for n in [
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "PGPASSWORD",
            "OPENAI_API_KEY",
            "NPM_AUTH",
            "my_app_apikey",
            "SESSION_COOKIE",
            "GH_PAT",
        ] {
            assert!(is_secret(n, "x"), "{n}");
        }
        for n in ["PATH", "HOME", "LANG", "KEYBOARD_LAYOUT", "TERM", "PWD", "NODE_ENV", "CARGO_HOME"] {
            assert!(!is_secret(n, "x"), "{n}");
        }
        assert!(is_secret("DATABASE_URL", "postgres://u:hunter2@db/x"));
        assert!(!is_secret("HOMEPAGE", "https://example.com/a@b"));
        assert!(is_secret("X", "-----BEGIN OPENSSH PRIVATE KEY-----\n..."));
    }

    #[test]
    fn explicit_and_kept_variables_pass() {
        let env: HashMap<String, String> =
            [("PATH", "/bin"), ("GITHUB_TOKEN", "t"), ("NPM_TOKEN", "n"), ("GONE", "g")]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
        let ctx = Ctx::new("/").unwrap().with_env(env);
        let (out, dropped) =
            child_env(&ctx, Some(&json!({"API_KEY": "explicit", "GONE": null})), &["NPM_TOKEN".to_owned()])
                .unwrap();
        assert_eq!(dropped, vec!["GITHUB_TOKEN"]);
        assert_eq!(out.get("API_KEY").map(String::as_str), Some("explicit"));
        assert_eq!(out.get("NPM_TOKEN").map(String::as_str), Some("n"));
        assert!(!out.contains_key("GITHUB_TOKEN") && !out.contains_key("GONE"));
        assert!(child_env(&ctx, Some(&json!({"A": [1]})), &[]).is_err());
        assert!(child_env(&ctx, Some(&json!("x")), &[]).is_err());
    }
}
