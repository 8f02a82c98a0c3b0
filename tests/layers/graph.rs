//! The layer check's graph: the file-to-file imports, the arrows that run back up the
//! floors, and the circles of files (Tarjan's strongly connected components).

use std::collections::BTreeMap;

use super::FLOORS;
use super::read::{Crate, Ref};

impl Crate {
    /// The file that defines what `path` names, following `use`s and `pub use`s; `None`
    /// for a module itself (a `use` of a module ties nothing until a path through it
    /// names an item, which is counted where it is named).
    pub(super) fn resolve(&self, path: &[String], hops: usize) -> Option<usize> {
        let m = (0..=path.len())
            .rev()
            .find(|&i| self.modules.contains_key(&path[..i]))
            .unwrap_or(0);
        let file = *self.modules.get(&path[..m])?;
        if m == path.len() {
            return None;
        }
        if hops > 16 || self.files[file].defines.contains(&path[m]) {
            return Some(file);
        }
        match self.files[file].exports.get(&path[m]) {
            Some(target) if target.as_slice() != path => {
                let mut next = target.clone();
                next.extend(path[m + 1..].iter().cloned());
                self.resolve(&next, hops + 1)
            }
            _ => Some(file),
        }
    }

    /// Whether file `face` is the `mod.rs` (or `lib.rs`) of a module that holds `part`.
    pub(super) fn face_and_part(&self, face: usize, part: usize) -> bool {
        match (&self.files[face].module, &self.files[part].module) {
            (Some(outer), Some(inner)) => inner.len() > outer.len() && inner.starts_with(outer),
            _ => false,
        }
    }

    /// The file-to-file imports: (from, to) with the first line and path of each.
    pub(super) fn edges(&self) -> BTreeMap<(usize, usize), (usize, String)> {
        let mut edges = BTreeMap::new();
        for (i, f) in self.files.iter().enumerate().filter(|(_, f)| !f.test) {
            for r in &f.refs {
                if r.handed_on.as_ref().is_some_and(|n| !f.named.contains(n)) {
                    continue;
                }
                let Some(to) = self.resolve(&r.abs, 0) else {
                    continue;
                };
                if to != i {
                    edges
                        .entry((i, to))
                        .or_insert((r.line, format!("crate::{}", r.abs.join("::"))));
                }
            }
        }
        edges
    }

    /// Each import that runs back up the floors, and each file or module on no floor.
    pub(super) fn arrows_back_up(&self) -> Vec<String> {
        let floor = |module: &str| FLOORS.iter().position(|f| f.contains(&module));
        let mut found = Vec::new();
        for f in self.files.iter().filter(|f| !f.test) {
            let own = match &f.module {
                None => "main",
                Some(m) if m.is_empty() => continue, // lib.rs declares the modules
                Some(m) => m[0].as_str(),
            };
            let Some(own_floor) = floor(own) else {
                found.push(format!("{}: module {own} stands on no floor", f.path));
                continue;
            };
            for Ref { line, abs, .. } in &f.refs {
                let Some(target) = abs.first() else { continue };
                match floor(target) {
                    Some(up) if up < own_floor => found.push(format!(
                        "{}:{line}: {own} (floor {} from the top) imports crate::{}, and \
                         {target} stands above it (floor {})",
                        f.path,
                        own_floor + 1,
                        abs.join("::"),
                        up + 1
                    )),
                    Some(_) => {}
                    None => found.push(format!(
                        "{}:{line}: crate::{} is in no module on a floor",
                        f.path,
                        abs.join("::")
                    )),
                }
            }
        }
        found
    }

    /// The circles of files (strongly connected components of two files or more), each
    /// with the imports that tie it.
    pub(super) fn circles(&self) -> Vec<String> {
        let mut edges = self.edges();
        edges.retain(|&(a, b), _| !self.face_and_part(a, b) && !self.face_and_part(b, a));
        let n = self.files.len();
        let mut next: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &(a, b) in edges.keys() {
            next[a].push(b);
        }
        let components = strongly_connected(&next);
        components
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| {
                let ties: Vec<String> = edges
                    .iter()
                    .filter(|((a, b), _)| c.contains(a) && c.contains(b))
                    .map(|((a, b), (line, path))| {
                        let (from, to) = (&self.files[*a].path, &self.files[*b].path);
                        format!("  {from}:{line} -> {to} ({path})")
                    })
                    .collect();
                format!("a circle of {} files:\n{}", c.len(), ties.join("\n"))
            })
            .collect()
    }
}

/// Tarjan's strongly connected components of the graph `next` (node -> successors).
fn strongly_connected(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        next: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        count: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State, v: usize) {
        s.index[v] = Some(s.count);
        s.low[v] = s.count;
        s.count += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &s.next[v] {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(i) if s.on_stack[w] => s.low[v] = s.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let n = next.len();
    let mut s = State {
        next,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        count: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}
