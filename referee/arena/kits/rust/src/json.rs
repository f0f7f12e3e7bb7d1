//! A small JSON reader, enough for the referee's messages: it parses one line
//! into a tree of values. Each value keeps where it was written in the line,
//! so an action of the request's `legal` list can be sent back exactly as it
//! came. The standard library only. Strings are decoded; numbers are kept as
//! text and read on demand (a game's seed is 64 bits).

const MAX_DEPTH: usize = 64;

#[derive(Debug)]
pub enum Kind {
    Null,
    True,
    False,
    Number,
    Str(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

#[derive(Debug)]
pub struct Value {
    pub kind: Kind,
    pub start: usize, // where the value is written in the line: line[start..end]
    pub end: usize,
}

impl Value {
    /// The member `key` of an object (the last one, if it appears twice).
    pub fn get(&self, key: &str) -> Option<&Value> {
        match &self.kind {
            Kind::Object(members) => members
                .iter()
                .rev()
                .find(|(name, _)| name == key)
                .map(|(_, v)| v),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match &self.kind {
            Kind::Array(items) => Some(items),
            _ => None,
        }
    }
    /// The text the value was written as.
    pub fn text<'a>(&self, line: &'a str) -> &'a str {
        &line[self.start..self.end]
    }
    /// A whole number that fits (`line` is the text it was parsed from).
    pub fn as_i64(&self, line: &str) -> Option<i64> {
        match self.kind {
            Kind::Number => self.text(line).parse().ok(),
            _ => None,
        }
    }
    pub fn as_u64(&self, line: &str) -> Option<u64> {
        match self.kind {
            Kind::Number => self.text(line).parse().ok(),
            _ => None,
        }
    }
}

/// The one value `line` holds (whitespace around it allowed), or what is wrong.
pub fn parse(line: &str) -> Result<Value, String> {
    let mut parser = Parser {
        text: line.as_bytes(),
        line,
        at: 0,
    };
    let value = parser.value(0)?;
    parser.skip_space();
    if parser.at != parser.text.len() {
        return Err("text after the value".to_string());
    }
    Ok(value)
}

struct Parser<'a> {
    text: &'a [u8],
    line: &'a str,
    at: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        self.skip_space();
        let start = self.at;
        let kind = match self.peek() {
            None => return Err("a value is missing".to_string()),
            Some(b'{') => self.object(depth)?,
            Some(b'[') => self.array(depth)?,
            Some(b'"') => Kind::Str(self.string()?),
            Some(b't') => self.literal("true", Kind::True)?,
            Some(b'f') => self.literal("false", Kind::False)?,
            Some(b'n') => self.literal("null", Kind::Null)?,
            Some(_) => self.number()?,
        };
        Ok(Value {
            kind,
            start,
            end: self.at,
        })
    }

    fn literal(&mut self, word: &str, kind: Kind) -> Result<Kind, String> {
        if self.text[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(kind)
        } else {
            Err("not a JSON value".to_string())
        }
    }

    fn digits(&mut self, why: &str) -> Result<(), String> {
        if !matches!(self.peek(), Some(b'0'..=b'9')) {
            return Err(why.to_string());
        }
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
        Ok(())
    }

    fn number(&mut self) -> Result<Kind, String> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        if self.peek() == Some(b'0') {
            self.at += 1;
        } else {
            self.digits("not a JSON value")?;
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.digits("a number has no digits after its point")?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            self.digits("a number has no digits in its exponent")?;
        }
        Ok(Kind::Number)
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .line
            .get(self.at..self.at + 4)
            .ok_or("a bad escape in a string")?;
        let code =
            u32::from_str_radix(digits, 16).map_err(|_| "a bad escape in a string".to_string())?;
        if digits.starts_with('+') {
            return Err("a bad escape in a string".to_string());
        }
        self.at += 4;
        Ok(code)
    }

    fn string(&mut self) -> Result<String, String> {
        self.at += 1; // the opening quote
        let mut out = String::new();
        loop {
            // Copy a run of plain characters at once (the line is UTF-8 already).
            let run = self.at;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.at += 1;
            }
            out.push_str(&self.line[run..self.at]);
            match self.peek() {
                None => return Err("a string is not closed".to_string()),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    let escaped = self.peek().ok_or("a string is not closed")?;
                    self.at += 1;
                    match escaped {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => out.push(self.escaped_char()?),
                        _ => return Err("a bad escape in a string".to_string()),
                    }
                }
                Some(_) => return Err("a control character in a string".to_string()),
            }
        }
    }

    fn escaped_char(&mut self) -> Result<char, String> {
        let mut code = self.hex4()?;
        if (0xD800..0xDC00).contains(&code) {
            // a surrogate pair
            if !self.text[self.at..].starts_with(b"\\u") {
                return Err("a bad escape in a string".to_string());
            }
            self.at += 2;
            let low = self.hex4()?;
            if !(0xDC00..0xE000).contains(&low) {
                return Err("a bad escape in a string".to_string());
            }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        }
        char::from_u32(code).ok_or_else(|| "a bad escape in a string".to_string())
    }

    fn array(&mut self, depth: usize) -> Result<Kind, String> {
        let mut items = Vec::new();
        self.open(depth)?;
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Kind::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            if self.close(b']')? {
                return Ok(Kind::Array(items));
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Kind, String> {
        let mut members = Vec::new();
        self.open(depth)?;
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Kind::Object(members));
        }
        loop {
            self.skip_space();
            if self.peek() != Some(b'"') {
                return Err("an object's member has no name".to_string());
            }
            let name = self.string()?;
            self.skip_space();
            if self.peek() != Some(b':') {
                return Err("a ':' is missing after a name".to_string());
            }
            self.at += 1;
            members.push((name, self.value(depth + 1)?));
            if self.close(b'}')? {
                return Ok(Kind::Object(members));
            }
        }
    }

    fn open(&mut self, depth: usize) -> Result<(), String> {
        if depth >= MAX_DEPTH {
            return Err("nested too deeply".to_string());
        }
        self.at += 1;
        self.skip_space();
        Ok(())
    }

    /// After a member: true at the closing bracket, false after a comma.
    fn close(&mut self, bracket: u8) -> Result<bool, String> {
        self.skip_space();
        match self.peek() {
            Some(b',') => {
                self.at += 1;
                Ok(false)
            }
            Some(b) if b == bracket => {
                self.at += 1;
                Ok(true)
            }
            _ => Err(format!("a ',' or '{}' is missing", bracket as char)),
        }
    }
}
