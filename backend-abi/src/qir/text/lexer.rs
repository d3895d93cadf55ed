//! Tokens of the QIR text form, with positions for error messages.

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    Value(String),
    Number(String),
    Punct(char),
    Eof,
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub line: usize,
    pub col: usize,
}

pub fn lex(src: &str) -> Result<Vec<Token>, (usize, usize, String)> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line, mut col) = (0, 1, 1);
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        let (tl, tc) = (line, col);
        let start = i;
        if c == '\n' {
            line += 1;
            col = 1;
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            col += 1;
            continue;
        }
        if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        let tok = if c == '%' {
            i += 1;
            while i < chars.len() && is_ident(chars[i]) {
                i += 1;
            }
            if i == start + 1 {
                return Err((tl, tc, "expected a value name after `%`".into()));
            }
            Tok::Value(chars[start + 1..i].iter().collect())
        } else if c.is_ascii_digit()
            || (c == '-' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            i += 1;
            let hex = chars.get(i) == Some(&'x') && c == '0';
            while i < chars.len() {
                let d = chars[i];
                let exp_sign = (d == '+' || d == '-') && !hex && matches!(chars[i - 1], 'e' | 'E');
                if is_ident(d) || d == '.' || exp_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            Tok::Number(chars[start..i].iter().collect())
        } else if c.is_ascii_alphabetic() || c == '_' {
            while i < chars.len() && is_ident(chars[i]) {
                i += 1;
            }
            Tok::Ident(chars[start..i].iter().collect())
        } else if "()[]{},:=-".contains(c) {
            i += 1;
            Tok::Punct(c)
        } else {
            return Err((tl, tc, format!("unexpected character `{c}`")));
        };
        col += i - start;
        out.push(Token {
            tok,
            line: tl,
            col: tc,
        });
    }
    out.push(Token {
        tok: Tok::Eof,
        line,
        col,
    });
    Ok(out)
}
