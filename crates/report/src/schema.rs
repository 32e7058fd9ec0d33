//! A validator for the subset of JSON Schema (2020-12) that `docs/result.schema.json` uses: `$ref` to
//! `#/$defs/…`, `type`, `const`, `enum`, `required`, `properties`, `additionalProperties: false`, `items`,
//! `minItems`, `maxItems`, `minimum`, `maximum`, `oneOf`. Any other keyword is an error, so the schema cannot use one
//! that is silently not checked. (A full validator crate pulls in a regex engine, an HTTP client and more
//! for features the schema does not use.)

use serde_json::Value;

/// The schema of `tcplab.result/1`, as shipped in docs/.
pub const RESULT_SCHEMA: &str = include_str!("../../../docs/result.schema.json");

const ANNOTATIONS: &[&str] = &["$schema", "$id", "title", "description", "$defs"];

/// Validates `v` against `schema` (whose `$ref`s point into `root`); returns every violation as
/// `/json/pointer: what`.
pub fn validate(root: &Value, schema: &Value, v: &Value, at: &str, errs: &mut Vec<String>) {
    let Some(s) = schema.as_object() else {
        errs.push(format!("{at}: schema is not an object"));
        return;
    };
    for (k, rule) in s {
        match k.as_str() {
            "$ref" => {
                let target = rule
                    .as_str()
                    .and_then(|r| r.strip_prefix("#/"))
                    .and_then(|p| p.split('/').try_fold(root, |n, k| n.get(k)));
                match target {
                    Some(t) => validate(root, t, v, at, errs),
                    None => errs.push(format!("{at}: unresolved $ref {rule}")),
                }
            }
            "type" => {
                let types: Vec<&str> = match rule {
                    Value::String(t) => vec![t.as_str()],
                    Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                    _ => vec![],
                };
                let ok = types.iter().any(|t| match *t {
                    "object" => v.is_object(),
                    "array" => v.is_array(),
                    "string" => v.is_string(),
                    "number" => v.is_number(),
                    "integer" => v.is_u64() || v.is_i64(),
                    "boolean" => v.is_boolean(),
                    "null" => v.is_null(),
                    _ => false,
                });
                if !ok {
                    errs.push(format!("{at}: {v} is not of type {rule}"));
                }
            }
            "const" if v != rule => errs.push(format!("{at}: {v} is not {rule}")),
            "const" => {}
            "enum" => {
                if !rule.as_array().is_some_and(|a| a.contains(v)) {
                    errs.push(format!("{at}: {v} is not one of {rule}"));
                }
            }
            "required" => {
                for r in rule.as_array().into_iter().flatten().filter_map(Value::as_str) {
                    if v.is_object() && v.get(r).is_none() {
                        errs.push(format!("{at}: missing {r}"));
                    }
                }
            }
            "properties" => {
                if let (Some(props), Some(obj)) = (rule.as_object(), v.as_object()) {
                    for (name, sub) in props {
                        if let Some(x) = obj.get(name) {
                            validate(root, sub, x, &format!("{at}/{name}"), errs);
                        }
                    }
                }
            }
            "additionalProperties" => {
                if rule != &Value::Bool(false) {
                    errs.push(format!("{at}: only additionalProperties: false is supported"));
                } else if let Some(obj) = v.as_object() {
                    let props = s.get("properties").and_then(Value::as_object);
                    for name in obj.keys() {
                        if !props.is_some_and(|p| p.contains_key(name)) {
                            errs.push(format!("{at}: unexpected property {name}"));
                        }
                    }
                }
            }
            "items" => {
                for (i, x) in v.as_array().into_iter().flatten().enumerate() {
                    validate(root, rule, x, &format!("{at}/{i}"), errs);
                }
            }
            "maxItems" => {
                if let (Some(a), Some(n)) = (v.as_array(), rule.as_u64()) {
                    if a.len() as u64 > n {
                        errs.push(format!("{at}: {} items, at most {n} accepted", a.len()));
                    }
                }
            }
            "minItems" => {
                if v.as_array().is_some_and(|a| (a.len() as u64) < rule.as_u64().unwrap_or(0)) {
                    errs.push(format!("{at}: fewer than {rule} items"));
                }
            }
            "minimum" | "maximum" => {
                if let (Some(x), Some(bound)) = (v.as_f64(), rule.as_f64()) {
                    if (k == "minimum" && x < bound) || (k == "maximum" && x > bound) {
                        errs.push(format!("{at}: {x} is outside {k} {bound}"));
                    }
                }
            }
            "oneOf" => {
                let matching = rule
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|sub| {
                        let mut e = Vec::new();
                        validate(root, sub, v, at, &mut e);
                        e.is_empty()
                    })
                    .count();
                if matching != 1 {
                    errs.push(format!("{at}: matches {matching} of oneOf's schemas, not exactly 1"));
                }
            }
            other if ANNOTATIONS.contains(&other) => {}
            other => errs.push(format!("{at}: schema keyword {other} is not supported by this validator")),
        }
    }
}

/// Validates a result document against [`RESULT_SCHEMA`]; `Err` lists every violation.
pub fn validate_result(doc: &Value) -> Result<(), Vec<String>> {
    let schema: Value = serde_json::from_str(RESULT_SCHEMA).map_err(|e| vec![format!("schema: {e}")])?;
    let mut errs = Vec::new();
    validate(&schema, &schema, doc, "", &mut errs);
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs)
    }
}
