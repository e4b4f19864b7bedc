//! The validating parse of one message, by hand: a byte scanner that reads the JSON against the models
//! (`spec.rs`) as it goes, into the arena tree of `parse.rs` (only the values the columns read are kept).
//!
//! Invariant: it accepts a subset of what the serde_json parse it replaced accepted, which accepted a subset of
//! what msgspec (the Python fast path) accepts with the same result: JSON's grammar exactly (no trailing
//! commas, no leading zeros, no control characters in strings, whitespace of space, tab, CR and LF only),
//! UTF-8 checked wherever a byte beyond ASCII may be (inside strings: anywhere else it is a syntax error),
//! numbers as 64-bit integers only where a model takes an integer (a fraction or an exponent is refused
//! there), duplicate keys refused, nesting deeper than [`DEPTH`] refused, and any `\u` escape of the D block
//! refused, as is the byte text `\ud`/`\uD` after an escaped backslash: msgspec refuses lone surrogates
//! anywhere, and the snapshot summaries Python's `json` reads again may hold them escaped once more.
//! Everything refused goes to the Python decoder, which decides the row.

use bumpalo::Bump;

use crate::parse::{same, same_bytes, Accept, Model, Refused, V};
use crate::spec::{Event, Spec};

/// The deepest nesting read (serde_json's limit was 128; real messages nest less than ten deep).
const DEPTH: u32 = 100;

type R<T> = Result<T, Refused>;

/// Bytes that end the plain run of a string: the quote, the backslash, control characters, non-ASCII.
static STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = i < 0x20 || i == b'"' as usize || i == b'\\' as usize || i >= 0x80;
        i += 1;
    }
    t
};

struct Scanner<'a, 's> {
    b: &'a [u8],
    i: usize,
    bump: &'a Bump,
    models: &'s [Model],
    depth: u32,
}

impl<'a, 's> Scanner<'a, 's> {
    #[inline]
    fn peek(&self) -> u8 {
        // a NUL past the end: never valid where a byte is looked at, so the end is refused like any bad byte
        self.b.get(self.i).copied().unwrap_or(0)
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(&c) = self.b.get(self.i) {
            if c == b' ' || c == b'\n' || c == b'\r' || c == b'\t' {
                self.i += 1;
            } else {
                break;
            }
        }
    }

    /// Whether the string at the cursor (on its opening quote) is `key` written plainly, and if so the cursor
    /// past it (`spec::load` makes sure no key holds a quote, a backslash or a control character).
    #[inline]
    fn plain_key(&mut self, key: &str) -> bool {
        let k = key.as_bytes();
        let start = self.i + 1;
        match self.b.get(start..start + k.len() + 1) {
            Some(raw) if raw[k.len()] == b'"' && same_bytes(&raw[..k.len()], k) => {
                self.i = start + k.len() + 1;
                true
            }
            _ => false,
        }
    }

    /// After a member or an item: whether another follows (a comma, read) or the container ends (`close`,
    /// read); anything else is refused.
    #[inline]
    fn more(&mut self, close: u8) -> R<bool> {
        self.ws();
        match self.peek() {
            b',' => {
                self.i += 1;
                Ok(true)
            }
            c if c == close => {
                self.i += 1;
                Ok(false)
            }
            _ => Err(Refused),
        }
    }

    /// Skips whitespace, then expects a key's opening quote (not read).
    #[inline]
    fn key_start(&mut self) -> R<()> {
        self.ws();
        if self.peek() == b'"' {
            Ok(())
        } else {
            Err(Refused)
        }
    }

    /// Skips whitespace, then expects `c`.
    #[inline]
    fn eat(&mut self, c: u8) -> R<()> {
        self.ws();
        if self.peek() == c {
            self.i += 1;
            Ok(())
        } else {
            Err(Refused)
        }
    }

    fn literal(&mut self, word: &[u8]) -> R<()> {
        if self.b[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(())
        } else {
            Err(Refused)
        }
    }

    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > DEPTH {
            return Err(Refused);
        }
        Ok(())
    }

    /// A string (the cursor on its opening quote): borrowed from the message when it has no escapes, else
    /// made in the arena.
    fn string(&mut self) -> R<&'a str> {
        self.i += 1;
        let start = self.i;
        let b = self.b;
        let mut ascii = true;
        loop {
            while self.i < b.len() && !STOP[b[self.i] as usize] {
                self.i += 1;
            }
            match b.get(self.i) {
                Some(b'"') => break,
                Some(b'\\') => return self.escaped(start),
                Some(&c) if c >= 0x80 => {
                    ascii = false;
                    self.i += 1;
                }
                _ => return Err(Refused), // a control character or the end
            }
        }
        let raw = &b[start..self.i];
        self.i += 1;
        if ascii {
            // SAFETY: ASCII bytes only
            Ok(unsafe { std::str::from_utf8_unchecked(raw) })
        } else {
            std::str::from_utf8(raw).map_err(|_| Refused)
        }
    }

    /// The rest of a string with escapes, from `start` (its first byte; the cursor on the first backslash).
    #[cold]
    fn escaped(&mut self, start: usize) -> R<&'a str> {
        let b = self.b;
        let mut out = bumpalo::collections::Vec::<u8>::with_capacity_in(self.i - start + 16, self.bump);
        out.extend_from_slice(&b[start..self.i]);
        loop {
            let c = *b.get(self.i).ok_or(Refused)?;
            match c {
                b'"' => break,
                b'\\' => {
                    let e = *b.get(self.i + 1).ok_or(Refused)?;
                    self.i += 2;
                    match e {
                        b'"' => out.push(b'"'),
                        b'/' => out.push(b'/'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'\\' => {
                            // `\\ud..`: an escape of the D block once the string is read as JSON again
                            if b.get(self.i) == Some(&b'u') && matches!(b.get(self.i + 1), Some(b'd' | b'D')) {
                                return Err(Refused);
                            }
                            out.push(b'\\')
                        }
                        b'u' => {
                            let hex = b.get(self.i..self.i + 4).ok_or(Refused)?;
                            if matches!(hex[0], b'd' | b'D') {
                                return Err(Refused); // surrogates (and the rest of the D block)
                            }
                            let mut n = 0u32;
                            for &h in hex {
                                n = n * 16 + (h as char).to_digit(16).ok_or(Refused)?;
                            }
                            self.i += 4;
                            let ch = char::from_u32(n).ok_or(Refused)?;
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        _ => return Err(Refused),
                    }
                }
                c if c < 0x20 => return Err(Refused),
                _ => {
                    let run = self.i;
                    while self.i < b.len() && !STOP[b[self.i] as usize] {
                        self.i += 1;
                    }
                    if self.i == run {
                        self.i += 1; // a byte beyond ASCII: checked below, with the whole string
                    }
                    out.extend_from_slice(&b[run..self.i]);
                }
            }
        }
        self.i += 1;
        let out = out.into_bump_slice();
        std::str::from_utf8(out).map_err(|_| Refused)
    }

    /// A number (the cursor on its first byte): `Some` of an integer within 64 bits, `None` of any other
    /// valid JSON number.
    fn number(&mut self) -> R<Option<i64>> {
        let b = self.b;
        let negative = self.peek() == b'-';
        if negative {
            self.i += 1;
        }
        let digits = self.i;
        let mut n: u64 = 0;
        let mut overflow = false;
        match self.peek() {
            b'0' => self.i += 1,
            b'1'..=b'9' => {
                while let Some(&c @ b'0'..=b'9') = b.get(self.i) {
                    match n.checked_mul(10).and_then(|n| n.checked_add(u64::from(c - b'0'))) {
                        Some(v) => n = v,
                        None => overflow = true,
                    }
                    self.i += 1;
                }
            }
            _ => return Err(Refused),
        }
        debug_assert!(self.i > digits);
        let mut whole = true;
        if self.peek() == b'.' {
            whole = false;
            self.i += 1;
            self.digits()?;
        }
        if matches!(self.peek(), b'e' | b'E') {
            whole = false;
            self.i += 1;
            if matches!(self.peek(), b'+' | b'-') {
                self.i += 1;
            }
            self.digits()?;
        }
        if !whole || overflow {
            return Ok(None);
        }
        Ok(if negative {
            if n <= 1 << 63 {
                Some((n as i64).wrapping_neg())
            } else {
                None
            }
        } else {
            i64::try_from(n).ok()
        })
    }

    fn digits(&mut self) -> R<()> {
        let start = self.i;
        while self.peek().is_ascii_digit() {
            self.i += 1;
        }
        if self.i == start {
            Err(Refused)
        } else {
            Ok(())
        }
    }

    /// Any JSON value, checked and not kept (a member no model has).
    fn skip(&mut self) -> R<()> {
        self.ws();
        match self.peek() {
            b'"' => self.string().map(|_| ()),
            b'{' => {
                self.enter()?;
                self.i += 1;
                self.ws();
                if self.peek() == b'}' {
                    self.i += 1;
                } else {
                    loop {
                        self.key_start()?;
                        self.string()?;
                        self.eat(b':')?;
                        self.skip()?;
                        if !self.more(b'}')? {
                            break;
                        }
                    }
                }
                self.depth -= 1;
                Ok(())
            }
            b'[' => {
                self.enter()?;
                self.i += 1;
                self.ws();
                if self.peek() == b']' {
                    self.i += 1;
                } else {
                    loop {
                        self.skip()?;
                        if !self.more(b']')? {
                            break;
                        }
                    }
                }
                self.depth -= 1;
                Ok(())
            }
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.number().map(|_| ()),
        }
    }

    /// One value against `accept` into `out` (the tree's slot: no copy of the value through the return, whose
    /// store the caller's load could not forward); kept there when `keep`, else `out` is left as it is.
    fn value(&mut self, accept: &'s Accept, keep: bool, out: &mut V<'a>) -> R<()> {
        let v = self.value_of(accept, keep)?;
        if keep {
            *out = v;
        }
        Ok(())
    }

    #[inline(always)]
    fn value_of(&mut self, accept: &'s Accept, keep: bool) -> R<V<'a>> {
        self.ws();
        match self.peek() {
            b'"' => {
                let s = self.string()?;
                if accept.string || accept.literals.as_ref().is_some_and(|l| l.iter().any(|x| same(x, s))) {
                    Ok(if keep { V::Str(s) } else { V::Skip })
                } else {
                    Err(Refused)
                }
            }
            b'n' if accept.null => {
                self.literal(b"null")?;
                Ok(V::Null)
            }
            b't' | b'f' if accept.boolean => {
                let v = self.peek() == b't';
                self.literal(if v { b"true" } else { b"false" })?;
                Ok(if keep { V::Bool(v) } else { V::Skip })
            }
            b'-' | b'0'..=b'9' => match (self.number()?, accept.int) {
                (Some(v), Some((lo, hi))) if lo <= v && v <= hi => Ok(V::Skip), // no column reads a number
                _ => Err(Refused),
            },
            b'[' => {
                let Some(item) = accept.list.as_deref() else {
                    return Err(Refused);
                };
                self.enter()?;
                self.i += 1;
                let mut items = bumpalo::collections::Vec::new_in(self.bump);
                self.ws();
                if self.peek() == b']' {
                    self.i += 1;
                } else {
                    loop {
                        if keep {
                            items.push(V::Null);
                            let last = items.len() - 1;
                            self.value(item, keep, &mut items[last])?;
                        } else {
                            self.value(item, keep, &mut V::Null)?;
                        }
                        if !self.more(b']')? {
                            break;
                        }
                    }
                }
                self.depth -= 1;
                Ok(if keep { V::List(items.into_bump_slice()) } else { V::Skip })
            }
            b'{' => {
                if let Some(m) = accept.model {
                    self.enter()?;
                    self.i += 1;
                    let fields = self.fields(&self.models[m], keep, None, true)?;
                    self.depth -= 1;
                    return Ok(if keep { V::Struct(fields) } else { V::Skip });
                }
                let Some(value) = accept.dict.as_deref() else {
                    return Err(Refused);
                };
                self.enter()?;
                self.i += 1;
                let entries = self.dict(value, keep)?;
                self.depth -= 1;
                Ok(if keep { V::Map(entries) } else { V::Skip })
            }
            _ => Err(Refused),
        }
    }

    /// A dict's entries (the cursor after its `{`); duplicate keys are refused (Python keeps the last value
    /// at the first key's place: it decides).
    fn dict(&mut self, value: &'s Accept, keep: bool) -> R<&'a [(&'a str, V<'a>)]> {
        let mut entries = bumpalo::collections::Vec::<(&'a str, V<'a>)>::new_in(self.bump);
        // a fingerprint per key (its length and first and last bytes): keys are compared only when they match
        let mut prints = bumpalo::collections::Vec::<u32>::new_in(self.bump);
        self.ws();
        if self.peek() == b'}' {
            self.i += 1;
            return Ok(&[]);
        }
        loop {
            self.key_start()?;
            let key = self.string()?;
            self.eat(b':')?;
            let mut v = V::Null;
            self.value(value, keep, &mut v)?;
            let kb = key.as_bytes();
            let print = match kb {
                [] => 0,
                [.., last] => (kb.len() as u32) << 16 | u32::from(kb[0]) << 8 | u32::from(*last),
            };
            if prints.iter().zip(entries.iter()).any(|(&p, (k, _))| p == print && same(k, key)) {
                return Err(Refused);
            }
            prints.push(print);
            entries.push((key, v));
            if !self.more(b'}')? {
                break;
            }
        }
        Ok(if keep { entries.into_bump_slice() } else { &[] })
    }

    /// The fields of one object of `model` (empty when not kept), the cursor after its `{`. `tag`: the
    /// envelope's: whether its `eventType` member was read already (a second one is refused; the first is
    /// checked and skipped). `open`: the cursor right after the `{` (else after a comma: a member must come).
    fn fields(&mut self, model: &'s Model, keep: bool, mut tag: Option<bool>, open: bool) -> R<&'a [V<'a>]> {
        let fields: &'a mut [V<'a>] =
            if keep { self.bump.alloc_slice_fill_copy(model.fields.len(), V::Null) } else { &mut [] };
        let mut seen: u128 = 0; // a bit per field (spec::load refuses models of more than 128 fields)
        let mut hint = 0;
        self.ws();
        if open && self.peek() == b'}' {
            self.i += 1;
        } else {
            loop {
                self.key_start()?;
                let (found, tag_member) = match model.keys.get(hint) {
                    // the member the model expects next, as plain bytes: no scan of the key, one comparison
                    Some(k) if self.plain_key(k) => (Some(hint), false),
                    _ => {
                        let key = self.string()?;
                        let found = model.find(key, hint);
                        (found, found.is_none() && tag.is_some() && same(key, "eventType"))
                    }
                };
                self.eat(b':')?;
                match found {
                    None => {
                        if tag_member {
                            if tag == Some(true) {
                                return Err(Refused);
                            }
                            tag = Some(true);
                            self.key_start()?;
                        }
                        self.skip()?;
                    }
                    Some(i) => {
                        hint = i + 1;
                        if seen & (1 << i) != 0 {
                            return Err(Refused);
                        }
                        seen |= 1 << i;
                        let f = &model.fields[i];
                        let keep = keep && f.keep;
                        if keep {
                            self.value(&f.accept, true, &mut fields[i])?;
                        } else {
                            self.value(&f.accept, false, &mut V::Null)?;
                        }
                    }
                }
                if !self.more(b'}')? {
                    break;
                }
            }
        }
        if model.required & !seen != 0 {
            return Err(Refused);
        }
        Ok(fields)
    }

    /// The end of the message: whitespace only.
    fn end(&mut self) -> R<()> {
        self.ws();
        if self.i == self.b.len() {
            Ok(())
        } else {
            Err(Refused)
        }
    }

    /// The `eventType` tag of a message whose first member is another: the whole message read once, its
    /// top-level members skipped, the tag a string met exactly once.
    #[cold]
    fn find_tag(&mut self) -> R<&'a str> {
        let mut tag = None;
        self.i = 0;
        self.eat(b'{')?;
        self.depth = 1;
        loop {
            self.key_start()?;
            let key = self.string()?;
            self.eat(b':')?;
            self.ws();
            if key == "eventType" {
                if tag.is_some() || self.peek() != b'"' {
                    return Err(Refused);
                }
                tag = Some(self.string()?);
            } else {
                self.skip()?;
            }
            if !self.more(b'}')? {
                break;
            }
        }
        self.end()?;
        tag.ok_or(Refused)
    }
}

/// One message's event type and envelope fields (in the order of its model's fields), or `Refused`.
pub fn message<'a, 's>(value: &'a [u8], bump: &'a Bump, spec: &'s Spec) -> R<(&'s Event, &'a [V<'a>])> {
    let mut p = Scanner { b: value, i: 0, bump, models: &spec.models, depth: 0 };
    p.eat(b'{')?;
    p.depth = 1;
    p.ws();
    let first = p.i;
    let (event, read, open) = if p.peek() == b'"' && p.string()? == "eventType" {
        p.eat(b':')?;
        p.ws();
        if p.peek() != b'"' {
            return Err(Refused);
        }
        let event = spec.events.get(p.string()?).ok_or(Refused)?;
        p.ws();
        match p.peek() {
            b',' => {
                p.i += 1;
                (event, true, false)
            }
            b'}' => (event, true, true),
            _ => return Err(Refused),
        }
    } else {
        let event = spec.events.get(p.find_tag()?).ok_or(Refused)?;
        p.i = first;
        p.depth = 1;
        (event, false, true)
    };
    let fields = p.fields(&spec.models[event.model], true, Some(read), open)?;
    p.end()?;
    Ok((event, fields))
}
