//! The layer check's reader: each file of `src/` as the module it is, the names it
//! defines and brings in, and every crate-internal path it names, resolved from the
//! library's root.

use std::collections::{BTreeMap, BTreeSet};

use super::lex::{Tok, tokens};

/// One file as the check reads it.
#[derive(Default)]
pub(super) struct File {
    pub(super) path: String,
    /// Its module in the library (`["report", "sweep"]`); `None` for `main.rs`.
    pub(super) module: Option<Vec<String>>,
    /// Names its top level defines.
    pub(super) defines: BTreeSet<String>,
    /// Names its top level's `use`s bring in, with the absolute path each stands for.
    pub(super) exports: BTreeMap<String, Vec<String>>,
    /// Every crate-internal path it names.
    pub(super) refs: Vec<Ref>,
    /// The identifiers its code names (outside `use` declarations and test code).
    pub(super) named: BTreeSet<String>,
    /// Child modules it declares under `#[cfg(test)]` (`mod tests;`).
    pub(super) test_children: Vec<String>,
    /// Test code: a `#[cfg(test)]` module's file, or one under it.
    pub(super) test: bool,
}

/// A crate-internal path a file names.
pub(super) struct Ref {
    pub(super) line: usize,
    /// From the library's root: `["report", "sweep", "Verdict"]`.
    pub(super) abs: Vec<String>,
    /// For a `pub use`, the name it hands on: the module's face, not a use of the file it
    /// names unless the file's own code names it too.
    pub(super) handed_on: Option<String>,
}

/// A `use` tree's leaves: the path as written and the name it binds (`None`: a glob).
fn use_leaves(t: &[(Tok, usize)], k: &mut usize, prefix: &[String], out: &mut Vec<UseLeaf>) {
    let mut path = prefix.to_vec();
    let line = t.get(*k).map_or(0, |x| x.1);
    while let Some((tok, _)) = t.get(*k) {
        *k += 1;
        match tok {
            Tok::Ident(s) => {
                path.push(s.clone());
                if t.get(*k).map(|x| &x.0) == Some(&Tok::Colons) {
                    *k += 1;
                    continue;
                }
                let mut name = s.clone();
                if t.get(*k).map(|x| &x.0) == Some(&Tok::Ident("as".into())) {
                    if let Some((Tok::Ident(alias), _)) = t.get(*k + 1) {
                        name = alias.clone();
                    }
                    *k += 2;
                }
                if path.last().is_some_and(|l| l == "self") {
                    path.pop();
                    if name == "self" {
                        name = path.last().cloned().unwrap_or_default();
                    }
                }
                out.push((path, Some(name), line));
                return;
            }
            Tok::Punct('*') => {
                out.push((path, None, line));
                return;
            }
            Tok::Punct('{') => loop {
                match t.get(*k).map(|x| &x.0) {
                    Some(Tok::Punct('}')) | None => {
                        *k += 1;
                        return;
                    }
                    Some(Tok::Punct(',')) => *k += 1,
                    Some(_) => use_leaves(t, k, &path, out),
                }
            },
            Tok::Colons => {} // a leading `::`: an outside crate, never a module here
            Tok::Punct(_) => return,
        }
    }
}

type UseLeaf = (Vec<String>, Option<String>, usize);

/// The crate.
pub(super) struct Crate {
    pub(super) files: Vec<File>,
    pub(super) modules: BTreeMap<Vec<String>, usize>,
}

impl Crate {
    /// Reads `sources` (path from the repository's root, text).
    pub(super) fn read(sources: &[(String, String)]) -> Crate {
        let mut files: Vec<File> = sources
            .iter()
            .map(|(path, _)| File {
                path: path.clone(),
                module: module_of(path),
                ..File::default()
            })
            .collect();
        let modules = files
            .iter()
            .enumerate()
            .filter_map(|(i, f)| Some((f.module.clone()?, i)))
            .collect();
        let mut krate = Crate {
            files: Vec::new(),
            modules,
        };
        for (file, (_, text)) in files.iter_mut().zip(sources) {
            krate.read_file(file, &tokens(text));
        }
        let tests: Vec<Vec<String>> = files
            .iter()
            .filter_map(|f| Some((f.module.clone()?, &f.test_children)))
            .flat_map(|(m, names)| {
                names
                    .iter()
                    .map(move |n| [m.clone(), vec![n.clone()]].concat())
            })
            .collect();
        for f in &mut files {
            f.test = f
                .module
                .as_ref()
                .is_some_and(|m| tests.iter().any(|t| m.starts_with(t)));
        }
        krate.files = files;
        krate
    }

    /// Fills `file` from its tokens.
    fn read_file(&self, file: &mut File, t: &[(Tok, usize)]) {
        let here = file.module.clone().unwrap_or_default();
        let is_main = file.module.is_none();
        let ident = |k: usize| match t.get(k) {
            Some((Tok::Ident(s), _)) => Some(s.as_str()),
            _ => None,
        };
        // Inline modules open at a brace depth: `mod tests { .. }`.
        let (mut depth, mut inline): (usize, Vec<(String, usize)>) = (0, Vec::new());
        // `#[cfg(test)]` marks the next item; its block (from this depth) is test code.
        let (mut cfg_test, mut test_at): (bool, Option<usize>) = (false, None);
        let cfg_test_attr = [
            Tok::Punct('#'),
            Tok::Punct('['),
            Tok::Ident("cfg".into()),
            Tok::Punct('('),
            Tok::Ident("test".into()),
            Tok::Punct(')'),
            Tok::Punct(']'),
        ];
        let mut aliases: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut code_paths = Vec::new();
        let mut k = 0;
        while k < t.len() {
            let cur: Vec<String> = here
                .iter()
                .cloned()
                .chain(inline.iter().map(|m| m.0.clone()))
                .collect();
            let top = depth == 0 && inline.is_empty();
            let in_test = cfg_test || test_at.is_some();
            if t.len() >= k + 7 && t[k..k + 7].iter().map(|x| &x.0).eq(cfg_test_attr.iter()) {
                cfg_test = true;
                k += 7;
                continue;
            }
            if let (Tok::Ident(w), false) = (&t[k].0, in_test) {
                file.named.insert(w.clone());
            }
            match &t[k].0 {
                Tok::Punct('{') => {
                    if cfg_test && test_at.is_none() {
                        test_at = Some(depth);
                    }
                    cfg_test = false;
                    depth += 1;
                }
                Tok::Punct('}') => {
                    depth = depth.saturating_sub(1);
                    if inline.last().is_some_and(|m| m.1 > depth) {
                        inline.pop();
                    }
                    if test_at == Some(depth) {
                        test_at = None;
                    }
                    cfg_test = false;
                }
                Tok::Punct(';' | ',') => cfg_test = false,
                Tok::Ident(w) if w == "use" => {
                    let mut leaves = Vec::new();
                    let mut j = k + 1;
                    use_leaves(t, &mut j, &[], &mut leaves);
                    cfg_test = false;
                    // `pub use` or `pub(crate) use`: a name handed on.
                    let public =
                        k > 0 && (ident(k - 1) == Some("pub") || t[k - 1].0 == Tok::Punct(')'));
                    for (path, name, line) in leaves.into_iter().filter(|_| !in_test) {
                        let Some(abs) = self.absolute(&path, &cur, is_main, &aliases) else {
                            continue;
                        };
                        file.refs.push(Ref {
                            line,
                            abs: abs.clone(),
                            handed_on: name.clone().filter(|_| public),
                        });
                        if let Some(name) = name {
                            if top {
                                file.exports.insert(name.clone(), abs.clone());
                            }
                            aliases.insert(name, abs);
                        }
                    }
                    k = j;
                    continue;
                }
                Tok::Ident(w) if w == "mod" => match (ident(k + 1), t.get(k + 2).map(|x| &x.0)) {
                    (Some(name), Some(Tok::Punct('{'))) => {
                        if cfg_test && test_at.is_none() {
                            test_at = Some(depth);
                        }
                        cfg_test = false;
                        depth += 1;
                        inline.push((name.to_string(), depth));
                        k += 3;
                        continue;
                    }
                    (Some(name), Some(Tok::Punct(';'))) if cfg_test => {
                        file.test_children.push(name.to_string());
                    }
                    _ => {}
                },
                Tok::Ident(w)
                    if top
                        && matches!(
                            w.as_str(),
                            "struct"
                                | "enum"
                                | "fn"
                                | "const"
                                | "static"
                                | "trait"
                                | "type"
                                | "union"
                                | "macro_rules"
                        ) =>
                {
                    let at = if w == "macro_rules" { k + 2 } else { k + 1 };
                    if let Some(name) = ident(at) {
                        file.defines.insert(name.to_string());
                    }
                }
                Tok::Ident(first)
                    if t.get(k + 1).map(|x| &x.0) == Some(&Tok::Colons)
                        && !matches!(t.get(k.wrapping_sub(1)).map(|x| &x.0), Some(Tok::Colons)) =>
                {
                    let mut path = vec![first.clone()];
                    let mut j = k + 1;
                    while let (Some((Tok::Colons, _)), Some(next)) = (t.get(j), ident(j + 1)) {
                        path.push(next.to_string());
                        j += 2;
                    }
                    if !in_test {
                        code_paths.push((t[k].1, path, cur));
                    }
                    k = j;
                    continue;
                }
                _ => {}
            }
            k += 1;
        }
        for (line, path, cur) in code_paths {
            if let Some(abs) = self.absolute(&path, &cur, is_main, &aliases) {
                file.refs.push(Ref {
                    line,
                    abs,
                    handed_on: None,
                });
            }
        }
    }

    /// `path` as written in module `cur` as a path from the library's root; `None` for a
    /// path outside it (another crate, a local type, `main.rs`'s own items).
    pub(super) fn absolute(
        &self,
        path: &[String],
        cur: &[String],
        is_main: bool,
        aliases: &BTreeMap<String, Vec<String>>,
    ) -> Option<Vec<String>> {
        let first = path.first()?.as_str();
        let (mut base, rest): (Vec<String>, &[String]) = match first {
            "tailrate" if is_main => (Vec::new(), &path[1..]),
            _ if is_main && !aliases.contains_key(first) => return None,
            "crate" => (Vec::new(), &path[1..]),
            "self" => (cur.to_vec(), &path[1..]),
            "super" => {
                let mut base = cur.to_vec();
                let supers = path.iter().take_while(|s| *s == "super").count();
                for _ in 0..supers {
                    base.pop()?;
                }
                (base, &path[supers..])
            }
            _ => {
                let mut child = cur.to_vec();
                child.push(first.to_string());
                if self.modules.contains_key(&child) {
                    (child, &path[1..])
                } else {
                    (aliases.get(first)?.clone(), &path[1..])
                }
            }
        };
        base.extend(rest.iter().cloned());
        Some(base)
    }
}

/// A file's module in the library by the standard layout; `None` for `main.rs`.
fn module_of(path: &str) -> Option<Vec<String>> {
    let inside = path.strip_prefix("src/")?.strip_suffix(".rs")?;
    if inside == "main" {
        return None;
    }
    let mut parts: Vec<String> = inside.split('/').map(str::to_string).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    Some(parts)
}
