//! The layer check's lexer: Rust source as identifiers, `::` and single punctuation,
//! each with its line, comments, strings and character literals left out.

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Ident(String),
    /// `::`
    Colons,
    Punct(char),
}

/// The tokens of Rust source with comments, strings and character literals left out,
/// each with its line.
pub(super) fn tokens(text: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = text.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let (mut out, mut i, mut line) = (Vec::new(), 0, 1);
    // Skips to `end` (exclusive), counting the lines passed.
    let skip = |from: usize, end: usize, line: &mut usize| {
        *line += c[from..end.min(c.len())]
            .iter()
            .filter(|&&x| x == '\n')
            .count();
        end
    };
    while i < c.len() {
        let ch = c[i];
        let start = i;
        if ch.is_whitespace() {
            i = skip(i, i + 1, &mut line);
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let (mut depth, mut j) = (0, i);
            while j < c.len() {
                if c[j] == '/' && at(j + 1) == '*' {
                    depth += 1;
                    j += 2;
                } else if c[j] == '*' && at(j + 1) == '/' {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            i = skip(start, j, &mut line);
        } else if let Some(end) = raw_string_end(&c, i) {
            i = skip(start, end, &mut line);
        } else if ch == '"' || (ch == 'b' && at(i + 1) == '"') {
            let mut j = if ch == 'b' { i + 2 } else { i + 1 };
            while j < c.len() && c[j] != '"' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            i = skip(start, j + 1, &mut line);
        } else if ch == '\'' || (ch == 'b' && at(i + 1) == '\'') {
            let q = if ch == 'b' { i + 1 } else { i };
            i = if at(q + 1) == '\\' {
                let mut j = q + 3;
                while j < c.len() && c[j] != '\'' {
                    j += 1;
                }
                j + 1
            } else if at(q + 2) == '\'' {
                q + 3
            } else {
                // A lifetime or a label: its name is read as an identifier.
                q + 1
            };
        } else if ch.is_alphanumeric() || ch == '_' {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push((Tok::Ident(c[start..i].iter().collect()), line));
        } else if ch == ':' && at(i + 1) == ':' {
            out.push((Tok::Colons, line));
            i += 2;
        } else {
            out.push((Tok::Punct(ch), line));
            i += 1;
        }
    }
    out
}

/// Where the raw string (`r"..."`, `r#"..."#`, `br"..."`) starting at `i` ends.
fn raw_string_end(c: &[char], i: usize) -> Option<usize> {
    let open = match (c.get(i), c.get(i + 1)) {
        (Some('r'), _) => i + 1,
        (Some('b'), Some('r')) => i + 2,
        _ => return None,
    };
    let hashes = c[open..].iter().take_while(|&&x| x == '#').count();
    if c.get(open + hashes) != Some(&'"') {
        return None;
    }
    let mut j = open + hashes + 1;
    while j < c.len() {
        if c[j] == '"' && (1..=hashes).all(|k| c.get(j + k) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(c.len())
}
