//! The parser: tokens to [`Script`]. The grammar follows packetdrill's `parser.y` for the subset the TCP
//! corpora use. A construct the interpreter does not model is still parsed (so that a skip is never a
//! syntax error in disguise) and marked unsupported with its name.

use crate::ast::*;
use crate::lex::{lex, Loc, Tok, Token};

/// A parse error: where, and what was expected.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    pub loc: Loc,
    pub msg: String,
}

/// Parses a whole script. Never panics, whatever the input.
pub fn parse(src: &str) -> Result<Script, ParseError> {
    let toks = lex(src).map_err(|e| ParseError { loc: e.loc, msg: e.msg })?;
    let mut p = Parser { toks, pos: 0, end_loc: end_loc(src) };
    p.script()
}

fn end_loc(src: &str) -> Loc {
    let line = src.lines().count().max(1) as u32;
    let col = src.lines().last().map_or(0, |l| l.chars().count()) as u32 + 1;
    Loc { line, col }
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    end_loc: Loc,
}

/// TCP flag letters as packetdrill writes them (`.` is ACK).
fn flag_bit(c: char) -> Option<u8> {
    Some(match c {
        'F' => 0x01,
        'S' => 0x02,
        'R' => 0x04,
        'P' => 0x08,
        '.' => 0x10,
        'U' => 0x20,
        'E' => 0x40,
        'W' => 0x80,
        _ => return None,
    })
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }
    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k).map(|t| &t.tok)
    }
    fn loc(&self) -> Loc {
        self.toks.get(self.pos).map_or(self.end_loc, |t| t.loc)
    }
    fn next(&mut self) -> Option<Token> {
        let t = self.toks.get(self.pos).cloned();
        if t.is_some() {
            self.pos += 1;
        }
        t
    }
    fn err<T>(&self, msg: impl Into<String>) -> Result<T, ParseError> {
        let found = match self.peek() {
            Some(t) => format!(", found {t}"),
            None => ", found the end of the script".into(),
        };
        Err(ParseError { loc: self.loc(), msg: format!("{}{found}", msg.into()) })
    }
    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }
    fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect_punct(&mut self, p: &str, what: &str) -> Result<(), ParseError> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            self.err(format!("expected `{p}` {what}"))
        }
    }
    fn is_ident(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(s)) if s == w)
    }
    fn num_u64(&mut self, what: &str) -> Result<u64, ParseError> {
        match self.peek() {
            Some(Tok::Num(s)) => {
                let v = parse_int(s);
                match v {
                    Some(v) => {
                        self.pos += 1;
                        Ok(v)
                    }
                    None => self.err(format!("expected an integer {what}")),
                }
            }
            _ => self.err(format!("expected an integer {what}")),
        }
    }
    fn num_u32(&mut self, what: &str) -> Result<u32, ParseError> {
        let loc = self.loc();
        let v = self.num_u64(what)?;
        u32::try_from(v).map_err(|_| ParseError { loc, msg: format!("{what}: {v} does not fit in 32 bits") })
    }

    fn script(&mut self) -> Result<Script, ParseError> {
        let mut s = Script::default();
        while let Some(Tok::HeaderOption(..)) = self.peek() {
            let t = self.next().expect("peeked");
            if let Tok::HeaderOption(n, v) = t.tok {
                s.options.push((n, v, t.loc));
            }
        }
        while let Some(Tok::Shell(_)) = self.peek() {
            let t = self.next().expect("peeked");
            if let Tok::Shell(c) = t.tok {
                s.setup.push((c, t.loc));
            }
        }
        while self.peek().is_some() {
            s.events.push(self.event()?);
        }
        Ok(s)
    }

    /// A time: `*`, `[+]secs`, `[+]secs~[+]secs`.
    fn time(&mut self) -> Result<Time, ParseError> {
        if self.eat_punct("*") {
            return Ok(Time::Any);
        }
        let rel = self.eat_punct("+");
        let t = self.seconds()?;
        if self.eat_punct("~") {
            let rel2 = self.eat_punct("+");
            let t2 = self.seconds()?;
            if rel != rel2 {
                return self.err("a time range must be both relative (`+a~+b`) or both absolute (`a~b`)");
            }
            return Ok(if rel { Time::RelativeRange(t, t2) } else { Time::AbsoluteRange(t, t2) });
        }
        Ok(if rel { Time::Relative(t) } else { Time::Absolute(t) })
    }

    /// Seconds as written, in microseconds.
    fn seconds(&mut self) -> Result<i64, ParseError> {
        let neg = self.eat_punct("-");
        match self.peek() {
            Some(Tok::Num(s)) => match parse_seconds_usecs(s) {
                Some(v) => {
                    self.pos += 1;
                    Ok(if neg { -v } else { v })
                }
                None => self.err("expected a time in seconds (e.g. `0.100`)"),
            },
            _ => self.err("expected a time in seconds (e.g. `0`, `+.1`, `*`)"),
        }
    }

    fn event(&mut self) -> Result<Event, ParseError> {
        let loc = self.loc();
        if let Some(Tok::Shell(_)) = self.peek() {
            // A command without a time (packetdrill allows it between events): runs at once.
            let Some(Token { tok: Tok::Shell(c), .. }) = self.next() else { unreachable!() };
            return Ok(Event { loc, time: Time::Relative(0), kind: EventKind::Shell(c) });
        }
        let time = self.time()?;
        let mut end = None;
        if self.eat_punct("...") {
            let rel = self.eat_punct("+") || matches!(time, Time::Relative(_));
            let t = self.seconds()?;
            end = Some(if rel { Time::Relative(t) } else { Time::Absolute(t) });
        }
        let kind = match self.peek() {
            Some(Tok::Punct("<")) => {
                self.pos += 1;
                EventKind::Packet(self.packet(Direction::Inbound)?)
            }
            Some(Tok::Punct(">")) => {
                self.pos += 1;
                EventKind::Packet(self.packet(Direction::Outbound)?)
            }
            Some(Tok::Shell(_)) => {
                let Some(Token { tok: Tok::Shell(c), .. }) = self.next() else { unreachable!() };
                EventKind::Shell(c)
            }
            Some(Tok::Code(_)) => {
                let Some(Token { tok: Tok::Code(c), .. }) = self.next() else { unreachable!() };
                EventKind::Code(c)
            }
            Some(Tok::Ident(_)) if matches!(self.peek_at(1), Some(Tok::Punct("("))) => {
                EventKind::Syscall(self.syscall(end)?)
            }
            _ => return self.err("expected a packet (`<` or `>`), a system call, a `command` or a %{ }% block"),
        };
        if end.is_some() && !matches!(kind, EventKind::Syscall(_)) {
            return Err(ParseError { loc, msg: "only a system call may have an end time (`+0...0.2`)".into() });
        }
        Ok(Event { loc, time, kind })
    }

    fn packet(&mut self, dir: Direction) -> Result<Packet, ParseError> {
        let mut unsupported = None;
        let mut ecn = None;
        // IP-level attributes: the ECN field is modelled (`ast::IpEcn`); TOS, TTL and flow labels are not.
        if self.eat_punct("[") {
            let loc = self.loc();
            let mut words = Vec::new();
            while !self.is_punct("]") {
                match self.next() {
                    Some(t) => words.push(match t.tok {
                        Tok::Ident(s) | Tok::Num(s) => s,
                        other => other.to_string(),
                    }),
                    None => return self.err("expected `]` after the packet's IP attributes"),
                }
            }
            self.pos += 1;
            let w = words.join(" ");
            ecn = match w.as_str() {
                "noecn" => Some(IpEcn::NotEct),
                "ect0" => Some(IpEcn::Ect0),
                "ect1" => Some(IpEcn::Ect1),
                "ce" => Some(IpEcn::Ce),
                "ect01" if dir == Direction::Outbound => Some(IpEcn::Ect01),
                "ect01" => {
                    return Err(ParseError { loc, msg: "[ect01] can only be used with outbound packets".into() });
                }
                _ => {
                    unsupported = Some(format!("IP attribute [{w}]"));
                    None
                }
            };
        }
        // Flags: letters, then `.` for ACK, adjacent (`S.`), or `.` alone.
        let mut flags = 0u8;
        match self.peek().cloned() {
            Some(Tok::Ident(w)) if w.chars().all(|c| flag_bit(c).is_some()) => {
                let end = self.toks[self.pos].end;
                self.pos += 1;
                for c in w.chars() {
                    flags |= flag_bit(c).unwrap_or(0);
                }
                if let Some(t) = self.toks.get(self.pos) {
                    if t.tok == Tok::Punct(".") && t.start == end {
                        flags |= 0x10;
                        self.pos += 1;
                    }
                }
            }
            Some(Tok::Punct(".")) => {
                self.pos += 1;
                flags = 0x10;
            }
            // `-`: no flags at all.
            Some(Tok::Punct("-")) => {
                self.pos += 1;
            }
            Some(Tok::Ident(w)) => {
                // A non-TCP packet (udp, icmp, gre...) is a feature, not a syntax error: marked, then skipped.
                self.skip_packet_rest();
                return Ok(Packet {
                    dir,
                    flags: 0,
                    seq: 0,
                    end: 0,
                    len: 0,
                    ack: None,
                    win: None,
                    options: Options::Any,
                    ecn,
                    unsupported: Some(format!("{w} packets")),
                });
            }
            _ => return self.err("expected TCP flags (e.g. `S`, `S.`, `.`, `P.`, `F.`, `R`)"),
        }
        let seq = self.num_u32("(the start sequence number)")?;
        self.expect_punct(":", "between the start and end sequence numbers")?;
        let end = self.num_u32("(the end sequence number)")?;
        self.expect_punct("(", "before the payload length")?;
        let len = self.num_u32("(the payload length)")?;
        self.expect_punct(")", "after the payload length")?;
        if end.wrapping_sub(seq) != len {
            return Err(ParseError {
                loc: self.toks[self.pos - 1].loc,
                msg: format!(
                    "inconsistent segment: {seq}:{end} spans {} bytes but the length is ({len})",
                    end.wrapping_sub(seq)
                ),
            });
        }
        let mut p =
            Packet { dir, flags, seq, end, len, ack: None, win: None, options: Options::None, ecn, unsupported };
        loop {
            if self.is_ident("ack") {
                self.pos += 1;
                p.ack = Some(self.num_u32("after `ack`")?);
            } else if self.is_ident("win") {
                self.pos += 1;
                if self.eat_punct("...") {
                    p.win = None;
                } else {
                    let loc = self.loc();
                    let w = self.num_u64("after `win`")?;
                    if w > 65_535 {
                        return Err(ParseError {
                            loc,
                            msg: format!("window {w} does not fit the 16-bit field (0 to 65535)"),
                        });
                    }
                    p.win = Some(w as u32);
                }
            } else if self.is_ident("urg") {
                self.pos += 1;
                self.num_u64("after `urg`")?;
                p.unsupported.get_or_insert_with(|| "the urgent pointer".into());
            } else {
                break;
            }
        }
        if self.is_punct("<") {
            self.pos += 1;
            if self.eat_punct("...") {
                self.expect_punct(">", "after `<...`")?;
                p.options = Options::Any;
            } else {
                let mut list = Vec::new();
                loop {
                    list.push(self.tcp_option()?);
                    if self.eat_punct(",") {
                        continue;
                    }
                    self.expect_punct(">", "to close the TCP options")?;
                    break;
                }
                p.options = Options::List(list);
            }
        }
        if dir == Direction::Inbound && p.win.is_none() && p.unsupported.is_none() {
            return Err(ParseError { loc: self.loc(), msg: "an inbound packet needs its window (`win N`)".into() });
        }
        if dir == Direction::Inbound && p.options == Options::Any {
            return Err(ParseError {
                loc: self.loc(),
                msg: "<...> for TCP options can only be used with outbound packets".into(),
            });
        }
        if let Options::List(l) = &p.options {
            if let Some(TcpOpt::Unsupported(n)) = l.iter().find(|o| matches!(o, TcpOpt::Unsupported(_))) {
                p.unsupported.get_or_insert_with(|| format!("TCP option `{n}`"));
            }
        }
        Ok(p)
    }

    /// Consumes the rest of a packet line this interpreter does not model, up to the next event's time.
    fn skip_packet_rest(&mut self) {
        let line = self.loc().line;
        while let Some(t) = self.toks.get(self.pos) {
            let time_start = matches!(t.tok, Tok::Punct("+") | Tok::Num(_) | Tok::Punct("*")) && t.loc.line > line;
            if time_start || matches!(t.tok, Tok::Code(_) | Tok::Shell(_)) && t.loc.line > line {
                break;
            }
            self.pos += 1;
        }
    }

    fn tcp_option(&mut self) -> Result<TcpOpt, ParseError> {
        let loc = self.loc();
        let Some(Tok::Ident(name)) = self.peek().cloned() else {
            return self.err("expected a TCP option (nop, eol, mss N, wscale N, sackOK, sack a:b..., TS val N ecr N)");
        };
        self.pos += 1;
        Ok(match name.as_str() {
            "nop" => TcpOpt::Nop,
            "eol" => TcpOpt::Eol,
            "mss" => {
                let v = self.num_u64("after `mss`")?;
                TcpOpt::Mss(
                    u16::try_from(v).map_err(|_| ParseError { loc, msg: format!("mss {v}: accepted 0 to 65535") })?,
                )
            }
            "wscale" => {
                let v = self.num_u64("after `wscale`")?;
                TcpOpt::WindowScale(
                    u8::try_from(v).map_err(|_| ParseError { loc, msg: format!("wscale {v}: accepted 0 to 255") })?,
                )
            }
            "sackOK" => TcpOpt::SackPermitted,
            "sack" => {
                let mut blocks = Vec::new();
                while let Some(Tok::Num(_)) = self.peek() {
                    let l = self.num_u32("(a SACK block's left edge)")?;
                    self.expect_punct(":", "inside a SACK block")?;
                    let r = self.num_u32("(a SACK block's right edge)")?;
                    blocks.push((l, r));
                }
                TcpOpt::Sack(blocks)
            }
            "TS" => {
                if !self.is_ident("val") {
                    return self.err("expected `val` after `TS`");
                }
                self.pos += 1;
                let val = self.num_u32("after `TS val`")?;
                if !self.is_ident("ecr") {
                    return self.err("expected `ecr` after `TS val N`");
                }
                self.pos += 1;
                let ecr = self.num_u32("after `ecr`")?;
                TcpOpt::Timestamp { val, ecr }
            }
            _ => {
                // Fast Open cookies, MD5, AccECN, experimental options: consumed up to `,` or `>`.
                let mut depth = 0;
                while let Some(t) = self.peek() {
                    match t {
                        Tok::Punct("(") | Tok::Punct("[") => depth += 1,
                        Tok::Punct(")") | Tok::Punct("]") => depth -= 1,
                        Tok::Punct(",") | Tok::Punct(">") if depth <= 0 => break,
                        _ => {}
                    }
                    self.pos += 1;
                }
                TcpOpt::Unsupported(name)
            }
        })
    }

    fn syscall(&mut self, end: Option<Time>) -> Result<Syscall, ParseError> {
        let Some(Token { tok: Tok::Ident(name), .. }) = self.next() else {
            return self.err("expected a system call name");
        };
        self.expect_punct("(", "after the system call's name")?;
        let args = self.expr_list(")")?;
        self.expect_punct("=", "and the expected return value after the system call")?;
        let ret = self.expr()?;
        // `= 0x2 (flags O_RDWR)`: a free-form note after a plain return value.
        if self.is_punct("(") {
            self.skip_parenthesized()?;
        }
        let mut errno = None;
        if let Some(Tok::Ident(e)) = self.peek().cloned() {
            if e.starts_with('E') && e.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()) {
                self.pos += 1;
                errno = Some(e);
                // `(Operation now in progress)`: the strerror text, free-form.
                if self.is_punct("(") {
                    self.skip_parenthesized()?;
                }
            }
        }
        Ok(Syscall { name, args, ret, errno, end })
    }

    /// Skips `( ... )`, nested parentheses included.
    fn skip_parenthesized(&mut self) -> Result<(), ParseError> {
        let loc = self.loc();
        let mut depth = 0;
        while let Some(t) = self.next() {
            match t.tok {
                Tok::Punct("(") => depth += 1,
                Tok::Punct(")") => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        Err(ParseError { loc, msg: "expected `)` to close the parenthesized text".into() })
    }

    fn expr_list(&mut self, close: &str) -> Result<Vec<Expr>, ParseError> {
        let mut v = Vec::new();
        if self.eat_punct(close) {
            return Ok(v);
        }
        loop {
            v.push(self.expr()?);
            if self.eat_punct(",") {
                continue;
            }
            self.expect_punct(close, "to close the list")?;
            return Ok(v);
        }
    }

    fn expr(&mut self) -> Result<Expr, ParseError> {
        let first = self.term()?;
        if !self.is_punct("|") {
            return Ok(first);
        }
        let mut v = vec![first];
        while self.eat_punct("|") {
            v.push(self.term()?);
        }
        Ok(Expr::Or(v))
    }

    fn term(&mut self) -> Result<Expr, ParseError> {
        let loc = self.loc();
        match self.next().map(|t| t.tok) {
            Some(Tok::Num(s)) => match parse_int(&s) {
                Some(v) => Ok(Expr::Int(v as i64)),
                None => Err(ParseError { loc, msg: format!("`{s}` is not an integer") }),
            },
            Some(Tok::Punct("-")) => match self.next().map(|t| t.tok) {
                Some(Tok::Num(s)) => match parse_int(&s) {
                    Some(v) => Ok(Expr::Int(-(v as i64))),
                    None => Err(ParseError { loc, msg: format!("`-{s}` is not an integer") }),
                },
                _ => Err(ParseError { loc, msg: "expected a number after `-`".into() }),
            },
            Some(Tok::Punct("...")) => Ok(Expr::Ellipsis),
            Some(Tok::Str(s)) => Ok(Expr::Str(s)),
            Some(Tok::Punct("[")) => Ok(Expr::List(self.expr_list("]")?)),
            Some(Tok::Punct("{")) => {
                let mut fields = Vec::new();
                if self.eat_punct("}") {
                    return Ok(Expr::Struct(fields));
                }
                loop {
                    let e = self.expr()?;
                    if self.eat_punct("=") {
                        let name = match e {
                            Expr::Ident(n) => n,
                            Expr::Call(n, _) => n,
                            _ => return self.err("expected a field name before `=`"),
                        };
                        fields.push((name, self.expr()?));
                    } else {
                        fields.push((String::new(), e));
                    }
                    if self.eat_punct(",") {
                        continue;
                    }
                    self.expect_punct("}", "to close the structure")?;
                    return Ok(Expr::Struct(fields));
                }
            }
            Some(Tok::Ident(n)) => {
                if self.eat_punct("(") {
                    Ok(Expr::Call(n, self.expr_list(")")?))
                } else {
                    Ok(Expr::Ident(n))
                }
            }
            Some(t) => Err(ParseError {
                loc,
                msg: format!("expected a value (number, name, `...`, [list] or {{struct}}), found {t}"),
            }),
            None => Err(ParseError { loc, msg: "expected a value, found the end of the script".into() }),
        }
    }
}

/// `123`, `0x1f`.
pub(crate) fn parse_int(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

/// `0.100` → 100000 µs; `.01` → 10000; `2` → 2000000. At most microsecond resolution (more digits are cut).
pub(crate) fn parse_seconds_usecs(s: &str) -> Option<i64> {
    if s.starts_with("0x") {
        return None;
    }
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let int: i64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let mut f = String::from(frac);
    f.truncate(6);
    while f.len() < 6 {
        f.push('0');
    }
    let frac: i64 = f.parse().ok()?;
    int.checked_mul(1_000_000)?.checked_add(frac)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_line() {
        let s = parse("+.01 < S. 0:0(0) ack 1 win 65535 <mss 1460,nop,wscale 2,nop,nop,sackOK>").unwrap();
        let e = &s.events[0];
        assert_eq!(e.time, Time::Relative(10_000));
        let EventKind::Packet(p) = &e.kind else { panic!() };
        assert_eq!(p.flags, 0x12);
        assert_eq!(p.ack, Some(1));
        assert_eq!(p.win, Some(65535));
        assert_eq!(
            p.options,
            Options::List(vec![
                TcpOpt::Mss(1460),
                TcpOpt::Nop,
                TcpOpt::WindowScale(2),
                TcpOpt::Nop,
                TcpOpt::Nop,
                TcpOpt::SackPermitted
            ])
        );
    }

    #[test]
    fn syscall_lines() {
        let s = parse(
            "+0...0.010 connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)\n\
             +0 sendmsg(4, {msg_name(...)=...,\n msg_iov(1)=[{..., 40}], msg_flags=0}, MSG_MORE) = 40\n\
             +0 fcntl(4, F_SETFL, O_RDWR|O_NONBLOCK) = 0",
        )
        .unwrap();
        let EventKind::Syscall(c) = &s.events[0].kind else { panic!() };
        assert_eq!(c.name, "connect");
        assert_eq!(c.ret, Expr::Int(-1));
        assert_eq!(c.errno.as_deref(), Some("EINPROGRESS"));
        assert_eq!(c.end, Some(Time::Relative(10_000)));
        assert_eq!(s.events[1].loc.line, 2);
        let EventKind::Syscall(c) = &s.events[2].kind else { panic!() };
        assert_eq!(c.args[2], Expr::Or(vec![Expr::Ident("O_RDWR".into()), Expr::Ident("O_NONBLOCK".into())]));
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = parse("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 > S 0:0 <mss 1460>").unwrap_err();
        assert_eq!(e.loc, Loc { line: 2, col: 12 });
        assert!(e.msg.contains("expected `(`"), "{}", e.msg);
        let e = parse("+0 > P. 1:11(5) ack 1").unwrap_err();
        assert!(e.msg.contains("inconsistent"), "{}", e.msg);
    }

    #[test]
    fn times() {
        assert_eq!(parse_seconds_usecs(".21"), Some(210_000));
        assert_eq!(parse_seconds_usecs("1.5"), Some(1_500_000));
        let s = parse("0.1~0.2 > . 1:1(0) ack 1\n* > . 1:1(0) ack 1").unwrap();
        assert_eq!(s.events[0].time, Time::AbsoluteRange(100_000, 200_000));
        assert_eq!(s.events[1].time, Time::Any);
    }
}
