//! The `%{ }%` blocks: packetdrill hands them to Python with the socket's `tcp_info` fields bound as
//! `tcpi_*` names. This is a small evaluator of the subset the corpora use, not Python: statements
//! `assert e[, msg]`, `print(e)`, `name = e`, `name += e`, `name -= e`, separated by newlines or `;`;
//! expressions with `or and not`, chained comparisons, `| ^ & << >> + - * / // %` (with `'fmt' % v`
//! formatting `%d %s %u %x`), integers, strings, names and parentheses. Names persist from block to block.

use std::collections::BTreeMap;
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Str(String),
    Bool(bool),
}

impl Value {
    fn truthy(&self) -> bool {
        match self {
            Value::Int(v) => *v != 0,
            Value::Str(s) => !s.is_empty(),
            Value::Bool(b) => *b,
        }
    }
    fn int(&self) -> Result<i64, String> {
        match self {
            Value::Int(v) => Ok(*v),
            Value::Bool(b) => Ok(*b as i64),
            Value::Str(s) => Err(format!("expected a number, found the string {s:?}")),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Str(s) => f.write_str(s),
            Value::Bool(true) => f.write_str("True"),
            Value::Bool(false) => f.write_str("False"),
        }
    }
}

/// Why a block failed: an assertion (the script's verdict) or an error in the block itself.
#[derive(Debug, Clone, PartialEq)]
pub enum CodeError {
    /// `assert` found the condition false: the statement and its message.
    Assertion { statement: String, message: Option<String> },
    /// The block is not in the supported subset, or names something unknown.
    Error { line: u32, msg: String },
}

/// The names a block sees: constants, `tcpi_*` fields and the block's own variables.
#[derive(Debug, Clone, Default)]
pub struct Env {
    pub vars: BTreeMap<String, Value>,
    /// Lines `print` wrote.
    pub printed: Vec<String>,
}

/// packetdrill's Python preamble constants (code.c `write_symbols`: the `TCP_*` states, `TCP_CA_*`,
/// `TCPI_OPT_*`). Not `TCP_INFINITE_SSTHRESH`: packetdrill does not define it, and the corpora's scripts
/// that compare with it assign it themselves (`%{ TCP_INFINITE_SSTHRESH = 0x7fffffff }%`).
pub const CONSTANTS: &[(&str, i64)] = &[
    ("TCP_ESTABLISHED", 1),
    ("TCP_SYN_SENT", 2),
    ("TCP_SYN_RECV", 3),
    ("TCP_FIN_WAIT1", 4),
    ("TCP_FIN_WAIT2", 5),
    ("TCP_TIME_WAIT", 6),
    ("TCP_CLOSE", 7),
    ("TCP_CLOSE_WAIT", 8),
    ("TCP_LAST_ACK", 9),
    ("TCP_LISTEN", 10),
    ("TCP_CLOSING", 11),
    ("TCP_CA_Open", 0),
    ("TCP_CA_Disorder", 1),
    ("TCP_CA_CWR", 2),
    ("TCP_CA_Recovery", 3),
    ("TCP_CA_Loss", 4),
    ("TCPI_OPT_TIMESTAMPS", 1),
    ("TCPI_OPT_SACK", 2),
    ("TCPI_OPT_WSCALE", 4),
    ("TCPI_OPT_ECN", 8),
    ("TCPI_OPT_ECN_SEEN", 16),
    ("TCPI_OPT_SYN_DATA", 32),
    ("TCPI_OPT_USEC_TS", 64),
    ("TCPI_OPT_TFO_CHILD", 128),
    ("True", 1),
    ("False", 0),
];

impl Env {
    pub fn new() -> Self {
        let mut e = Env::default();
        for (n, v) in CONSTANTS {
            e.vars.insert(n.to_string(), Value::Int(*v));
        }
        e
    }
}

/// Runs a block in `env`. Names starting `tcpi_` must already be bound (the caller binds the snapshot).
pub fn run(src: &str, env: &mut Env) -> Result<(), CodeError> {
    for (line, stmt) in statements(src) {
        exec(&stmt, line, env)?;
    }
    Ok(())
}

/// The names a block reads, for checking before a run that every one is known.
pub fn names(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (_, stmt) in statements(src) {
        if let Ok(toks) = tokens(&stmt) {
            for t in toks {
                if let T::Name(n) = t {
                    out.push(n);
                }
            }
        }
    }
    out
}

/// Splits a block into statements with their line within the block (from 1).
fn statements(src: &str) -> Vec<(u32, String)> {
    // Python's explicit line joining: a line that ends with a backslash goes on on the next one.
    let mut logical: Vec<(u32, String)> = Vec::new();
    let mut joining = false;
    for (i, line) in src.lines().enumerate() {
        let (text, continues) = match line.trim_end().strip_suffix('\\') {
            Some(t) => (t, true),
            None => (line, false),
        };
        match logical.last_mut() {
            Some((_, prev)) if joining => {
                prev.push(' ');
                prev.push_str(text);
            }
            _ => logical.push((i as u32 + 1, text.to_string())),
        }
        joining = continues;
    }
    let mut out = Vec::new();
    for (line_no, line) in logical {
        let mut cur = String::new();
        let mut quote: Option<char> = None;
        for c in line.chars() {
            match (quote, c) {
                (None, '#') => break,
                (None, ';') => {
                    out.push((line_no, std::mem::take(&mut cur)));
                    continue;
                }
                (None, '\'' | '"') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                _ => {}
            }
            cur.push(c);
        }
        out.push((line_no, cur));
    }
    out.retain(|(_, s)| !s.trim().is_empty());
    out
}

#[derive(Debug, Clone, PartialEq)]
enum T {
    Int(i64),
    Str(String),
    Name(String),
    Op(&'static str),
}

const OPS: &[&str] = &[
    "//", "**", "<<", ">>", "<=", ">=", "==", "!=", "+=", "-=", "*=", "(", ")", ",", "+", "-", "*", "/", "%", "<", ">",
    "=", "|", "&", "^", "~",
];

fn tokens(s: &str) -> Result<Vec<T>, String> {
    let b: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == '_') {
                j += 1;
            }
            let text: String = b[i..j].iter().filter(|&&c| c != '_').collect();
            let v = if let Some(h) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
                i64::from_str_radix(h, 16).map_err(|_| format!("bad number `{text}`"))?
            } else if b.get(j) == Some(&'.') {
                return Err(format!("floating-point numbers are not supported (`{text}.`)"));
            } else {
                text.parse().map_err(|_| format!("bad number `{text}`"))?
            };
            out.push(T::Int(v));
            i = j;
        } else if c.is_alphabetic() || c == '_' {
            let mut j = i;
            while j < b.len() && (b[j].is_alphanumeric() || b[j] == '_' || b[j] == '.') {
                j += 1;
            }
            out.push(T::Name(b[i..j].iter().collect()));
            i = j;
        } else if c == '\'' || c == '"' {
            let mut j = i + 1;
            let mut s = String::new();
            while j < b.len() && b[j] != c {
                s.push(b[j]);
                j += 1;
            }
            if j >= b.len() {
                return Err("unterminated string".into());
            }
            out.push(T::Str(s));
            i = j + 1;
        } else if let Some(op) = OPS.iter().find(|op| b[i..].iter().take(op.len()).copied().eq(op.chars())) {
            out.push(T::Op(op));
            i += op.len();
        } else {
            return Err(format!("unexpected character {c:?}"));
        }
    }
    Ok(out)
}

fn exec(stmt: &str, line: u32, env: &mut Env) -> Result<(), CodeError> {
    let err = |msg: String| CodeError::Error { line, msg };
    let toks = tokens(stmt).map_err(err)?;
    let mut p = P { t: &toks, i: 0 };
    match toks.first() {
        Some(T::Name(n)) if n == "assert" => {
            p.i = 1;
            let v = p.expr(env).map_err(err)?;
            let message = if p.eat(",") { Some(p.expr(env).map_err(err)?.to_string()) } else { None };
            p.done().map_err(err)?;
            if !v.truthy() {
                return Err(CodeError::Assertion { statement: stmt.trim().to_string(), message });
            }
            Ok(())
        }
        Some(T::Name(n)) if n == "print" => {
            p.i = 1;
            let v = p.expr(env).map_err(err)?;
            p.done().map_err(err)?;
            env.printed.push(v.to_string());
            Ok(())
        }
        Some(T::Name(n)) if n == "pass" => Ok(()),
        Some(T::Name(n)) if matches!(toks.get(1), Some(T::Op("=" | "+=" | "-=" | "*="))) => {
            let name = n.clone();
            let Some(T::Op(op)) = toks.get(1) else { unreachable!() };
            p.i = 2;
            let v = p.expr(env).map_err(err)?;
            p.done().map_err(err)?;
            let v = match *op {
                "=" => v,
                _ => {
                    let old = env.vars.get(&name).ok_or_else(|| err(format!("name `{name}` is not defined")))?;
                    let (a, b) = (old.int().map_err(err)?, v.int().map_err(err)?);
                    Value::Int(match *op {
                        "+=" => a.wrapping_add(b),
                        "-=" => a.wrapping_sub(b),
                        _ => a.wrapping_mul(b),
                    })
                }
            };
            env.vars.insert(name, v);
            Ok(())
        }
        _ => Err(err(format!(
            "`{}`: only `assert`, `print`, assignments and `+=`/`-=` are supported in %{{ }}% blocks",
            stmt.trim()
        ))),
    }
}

struct P<'a> {
    t: &'a [T],
    i: usize,
}

impl P<'_> {
    fn peek_op(&self) -> Option<&'static str> {
        match self.t.get(self.i) {
            Some(T::Op(o)) => Some(o),
            _ => None,
        }
    }
    fn peek_name(&self, n: &str) -> bool {
        matches!(self.t.get(self.i), Some(T::Name(m)) if m == n)
    }
    fn eat(&mut self, op: &str) -> bool {
        if self.peek_op() == Some(op) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn done(&self) -> Result<(), String> {
        match self.t.get(self.i) {
            None => Ok(()),
            Some(t) => Err(format!("unexpected {t:?} at the end of the statement")),
        }
    }
    fn expr(&mut self, env: &Env) -> Result<Value, String> {
        let mut v = self.and(env)?;
        while self.peek_name("or") {
            self.i += 1;
            let r = self.and(env)?;
            v = Value::Bool(v.truthy() || r.truthy());
        }
        Ok(v)
    }
    fn and(&mut self, env: &Env) -> Result<Value, String> {
        let mut v = self.not(env)?;
        while self.peek_name("and") {
            self.i += 1;
            let r = self.not(env)?;
            v = Value::Bool(v.truthy() && r.truthy());
        }
        Ok(v)
    }
    fn not(&mut self, env: &Env) -> Result<Value, String> {
        if self.peek_name("not") {
            self.i += 1;
            return Ok(Value::Bool(!self.not(env)?.truthy()));
        }
        self.cmp(env)
    }
    /// Python's chained comparison: `a < b < c` is `a < b and b < c`.
    fn cmp(&mut self, env: &Env) -> Result<Value, String> {
        let mut left = self.bitor(env)?;
        let mut result: Option<bool> = None;
        while let Some(op @ ("==" | "!=" | "<" | "<=" | ">" | ">=")) = self.peek_op() {
            self.i += 1;
            let right = self.bitor(env)?;
            let ok = match (&left, &right) {
                (Value::Str(a), Value::Str(b)) => match op {
                    "==" => a == b,
                    "!=" => a != b,
                    _ => return Err("strings compare with == and != only".into()),
                },
                _ => {
                    let (a, b) = (left.int()?, right.int()?);
                    match op {
                        "==" => a == b,
                        "!=" => a != b,
                        "<" => a < b,
                        "<=" => a <= b,
                        ">" => a > b,
                        _ => a >= b,
                    }
                }
            };
            result = Some(result.unwrap_or(true) && ok);
            left = right;
        }
        Ok(match result {
            Some(b) => Value::Bool(b),
            None => left,
        })
    }
    fn bitor(&mut self, env: &Env) -> Result<Value, String> {
        let mut v = self.bitxor(env)?;
        while self.eat("|") {
            let r = self.bitxor(env)?;
            v = Value::Int(v.int()? | r.int()?);
        }
        Ok(v)
    }
    fn bitxor(&mut self, env: &Env) -> Result<Value, String> {
        let mut v = self.bitand(env)?;
        while self.eat("^") {
            let r = self.bitand(env)?;
            v = Value::Int(v.int()? ^ r.int()?);
        }
        Ok(v)
    }
    fn bitand(&mut self, env: &Env) -> Result<Value, String> {
        let mut v = self.shift(env)?;
        while self.eat("&") {
            let r = self.shift(env)?;
            v = Value::Int(v.int()? & r.int()?);
        }
        Ok(v)
    }
    fn shift(&mut self, env: &Env) -> Result<Value, String> {
        let mut v = self.sum(env)?;
        loop {
            if self.eat("<<") {
                let r = self.sum(env)?.int()?;
                v = Value::Int(v.int()?.checked_shl(r.clamp(0, 63) as u32).unwrap_or(0));
            } else if self.eat(">>") {
                let r = self.sum(env)?.int()?;
                v = Value::Int(v.int()? >> r.clamp(0, 63));
            } else {
                return Ok(v);
            }
        }
    }
    fn sum(&mut self, env: &Env) -> Result<Value, String> {
        let mut v = self.product(env)?;
        loop {
            if self.eat("+") {
                let r = self.product(env)?;
                v = match (v, r) {
                    (Value::Str(a), Value::Str(b)) => Value::Str(a + &b),
                    (a, b) => Value::Int(a.int()?.wrapping_add(b.int()?)),
                };
            } else if self.eat("-") {
                let r = self.product(env)?;
                v = Value::Int(v.int()?.wrapping_sub(r.int()?));
            } else {
                return Ok(v);
            }
        }
    }
    fn product(&mut self, env: &Env) -> Result<Value, String> {
        let mut v = self.unary(env)?;
        loop {
            let op = match self.peek_op() {
                Some(op @ ("*" | "//" | "/" | "%")) => op,
                _ => return Ok(v),
            };
            self.i += 1;
            let r = self.unary(env)?;
            v = match (op, &v) {
                ("%", Value::Str(fmt)) => Value::Str(format_percent(fmt, &r)?),
                _ => {
                    let (a, b) = (v.int()?, r.int()?);
                    Value::Int(match op {
                        "*" => a.wrapping_mul(b),
                        "%" if b != 0 => a.rem_euclid(b),
                        // Python's `/` on integers gives a float; these blocks compare it with integers.
                        "/" | "//" if b != 0 => a.div_euclid(b),
                        _ => return Err("division by zero".into()),
                    })
                }
            };
        }
    }
    fn unary(&mut self, env: &Env) -> Result<Value, String> {
        if self.eat("-") {
            return Ok(Value::Int(self.unary(env)?.int()?.wrapping_neg()));
        }
        if self.eat("+") {
            return self.unary(env);
        }
        if self.eat("~") {
            return Ok(Value::Int(!self.unary(env)?.int()?));
        }
        self.atom(env)
    }
    fn atom(&mut self, env: &Env) -> Result<Value, String> {
        let t = self.t.get(self.i).cloned();
        self.i += 1;
        match t {
            Some(T::Int(v)) => Ok(Value::Int(v)),
            Some(T::Str(s)) => Ok(Value::Str(s)),
            Some(T::Op("(")) => {
                let v = self.expr(env)?;
                if !self.eat(")") {
                    return Err("expected `)`".into());
                }
                Ok(v)
            }
            Some(T::Name(n)) => {
                if self.eat("(") {
                    let mut args = Vec::new();
                    if !self.eat(")") {
                        loop {
                            args.push(self.expr(env)?);
                            if self.eat(",") {
                                continue;
                            }
                            if !self.eat(")") {
                                return Err("expected `)` after the arguments".into());
                            }
                            break;
                        }
                    }
                    return call(&n, &args);
                }
                env.vars.get(&n).cloned().ok_or_else(|| format!("name `{n}` is not defined"))
            }
            Some(t) => Err(format!("unexpected {t:?}")),
            None => Err("unexpected end of the statement".into()),
        }
    }
}

fn call(name: &str, args: &[Value]) -> Result<Value, String> {
    let ints = || args.iter().map(Value::int).collect::<Result<Vec<_>, _>>();
    match (name, args.len()) {
        ("int", 1) => Ok(Value::Int(args[0].int()?)),
        ("abs", 1) => Ok(Value::Int(args[0].int()?.wrapping_abs())),
        ("str", 1) => Ok(Value::Str(args[0].to_string())),
        ("min", n) if n > 0 => Ok(Value::Int(ints()?.into_iter().min().unwrap_or(0))),
        ("max", n) if n > 0 => Ok(Value::Int(ints()?.into_iter().max().unwrap_or(0))),
        _ => Err(format!("function `{name}` with {} arguments is not supported", args.len())),
    }
}

/// `'%d us' % v`: one value, conversions `%d %i %u %s %x %%`.
fn format_percent(fmt: &str, v: &Value) -> Result<String, String> {
    let mut out = String::new();
    let mut it = fmt.chars().peekable();
    let mut used = false;
    while let Some(c) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('%') => out.push('%'),
            Some('d' | 'i' | 'u') if !used => {
                out.push_str(&v.int()?.to_string());
                used = true;
            }
            Some('x') if !used => {
                out.push_str(&format!("{:x}", v.int()?));
                used = true;
            }
            Some('s') if !used => {
                out.push_str(&v.to_string());
                used = true;
            }
            other => return Err(format!("format `%{}` is not supported", other.unwrap_or(' '))),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asserts_and_variables() {
        let mut env = Env::new();
        env.vars.insert("tcpi_snd_cwnd".into(), Value::Int(20));
        env.vars.insert("tcpi_options".into(), Value::Int(7));
        run("cwnd = 10", &mut env).unwrap();
        run("print(tcpi_snd_cwnd); cwnd += 10; assert tcpi_snd_cwnd == cwnd, tcpi_snd_cwnd", &mut env).unwrap();
        run("assert (tcpi_options & TCPI_OPT_SYN_DATA) == 0, tcpi_options", &mut env).unwrap();
        run("\nassert 10 <= tcpi_snd_cwnd <= 20, 'cwnd=%d' % tcpi_snd_cwnd\n", &mut env).unwrap();
        let e = run("assert tcpi_snd_cwnd == 36, 'cwnd=%d' % tcpi_snd_cwnd", &mut env).unwrap_err();
        assert_eq!(
            e,
            CodeError::Assertion {
                statement: "assert tcpi_snd_cwnd == 36, 'cwnd=%d' % tcpi_snd_cwnd".into(),
                message: Some("cwnd=20".into())
            }
        );
        assert_eq!(env.printed, vec!["20"]);
        let mut env = Env::new();
        env.vars.insert("tcpi_rtt".into(), Value::Int(5));
        run("assert 1 <= tcpi_rtt <= 9, tcpi_rtt;\\\n   assert tcpi_rtt == 5;\\\n", &mut env).unwrap();
        assert!(run("assert tcpi_rtt == 5;\\\n assert tcpi_rtt == 6", &mut env).is_err(), "the joined line runs");
    }

    #[test]
    fn unknown_names_and_statements_are_errors() {
        let mut env = Env::new();
        assert!(matches!(run("assert tcpi_nope == 1", &mut env), Err(CodeError::Error { line: 1, .. })));
        assert!(matches!(run("\nimport os", &mut env), Err(CodeError::Error { line: 2, .. })));
        assert!(names("assert tcpi_rtt > 5 # comment tcpi_x").contains(&"tcpi_rtt".to_string()));
    }
}
