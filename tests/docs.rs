//! The user-facing Markdown: every relative link in `README.md`, `ARCHITECTURE.md`,
//! `bench/README.md` and `docs/*.md` resolves to a file, and its `#fragment` to a heading
//! of that file as GitHub names it. That the README stays a five-minute read opening with
//! the two scripts is `readme`'s.
//!
//! The link extractor is hand-written, std only: it needs inline links and images,
//! reference definitions, fenced blocks and code spans, and nothing else of Markdown, in
//! about a hundred lines; a Markdown parser crate would be a new dependency of the
//! whole suite for that. What it does not read (setext headings, underscore emphasis in
//! headings, percent-encoded targets) the checked files do not use.

use std::collections::HashMap;
use std::fs;
use std::path::{Component, Path, PathBuf};

mod readme;

/// The repository's root, where the checked files live.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Markdown files whose links are checked: the README, ARCHITECTURE.md, the bench
/// notebook and every page of the guide.
fn checked_files(root: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "bench/README.md"]
        .iter()
        .map(|f| root.join(f))
        .collect();
    let mut pages: Vec<PathBuf> = fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("a readable docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.sort();
    files.extend(pages);
    files
}

/// Where a line of a Markdown file stands with respect to fenced code blocks.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Place<'a> {
    /// Outside any fence.
    Text,
    /// A fence opening a block, with its info string (`sh`, `console`, or empty).
    Open(&'a str),
    /// Inside a block.
    Code,
    /// The fence closing a block.
    Close,
}

/// One line of a Markdown file and its place.
struct Line<'a> {
    number: usize,
    text: &'a str,
    place: Place<'a>,
}

impl Line<'_> {
    fn in_fence(&self) -> bool {
        self.place != Place::Text
    }
}

/// The file's lines, each placed inside or outside fenced code blocks.
fn lines(markdown: &str) -> Vec<Line<'_>> {
    let mut fence: Option<(char, usize)> = None;
    let mut out = Vec::new();
    for (i, text) in markdown.lines().enumerate() {
        let trimmed = text.trim_start_matches(' ');
        let indent = text.len() - trimmed.len();
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = marker.map_or(0, |m| trimmed.chars().take_while(|c| *c == m).count());
        let is_fence = indent <= 3 && run >= 3;
        let place = match (fence, marker) {
            (None, Some(m)) if is_fence => {
                fence = Some((m, run));
                Place::Open(trimmed[run..].trim())
            }
            // A closing fence is at least as long as the opening one and has no info.
            (Some((m, n)), Some(c))
                if is_fence && c == m && run >= n && trimmed[run..].trim().is_empty() =>
            {
                fence = None;
                Place::Close
            }
            (Some(_), _) => Place::Code,
            (None, _) => Place::Text,
        };
        out.push(Line {
            number: i + 1,
            text,
            place,
        });
    }
    out
}

/// A link's target and the line it starts on.
#[derive(Debug, PartialEq)]
struct Link {
    line: usize,
    target: String,
}

/// The targets of every inline link, image and reference definition outside code.
///
/// Paragraphs (runs of non-blank lines outside fences) are read whole, so that a code
/// span or a link broken over two lines is seen as one.
fn links(markdown: &str) -> Vec<Link> {
    let mut found = Vec::new();
    let mut paragraph: Vec<&Line> = Vec::new();
    let all = lines(markdown);
    let end = Line {
        number: 0,
        text: "",
        place: Place::Text,
    };
    for line in all.iter().chain(std::iter::once(&end)) {
        if line.in_fence() || line.text.trim().is_empty() {
            if let Some(first) = paragraph.first() {
                let text: Vec<&str> = paragraph.iter().map(|l| l.text).collect();
                links_in_paragraph(&text.join("\n"), first.number, &mut found);
            }
            paragraph.clear();
        } else {
            paragraph.push(line);
        }
    }
    found
}

/// Adds the links of one paragraph whose first line is `first_line`.
fn links_in_paragraph(text: &str, first_line: usize, found: &mut Vec<Link>) {
    let chars = without_code_spans(text);
    let line_of = |at: usize| first_line + chars[..at].iter().filter(|c| **c == '\n').count();
    for (open, _) in chars.iter().enumerate().filter(|(_, c)| **c == '[') {
        if open > 0 && chars[open - 1] == '\\' {
            continue;
        }
        let Some(close) = matching(&chars, open, '[', ']') else {
            continue;
        };
        let target = match chars.get(close + 1) {
            Some('(') => matching(&chars, close + 1, '(', ')')
                .map(|end| chars[close + 2..end].iter().collect::<String>()),
            // A reference definition: `[label]: target` at the start of a line.
            Some(':') if open == 0 || chars[open - 1] == '\n' => {
                let rest: String = chars[close + 2..].iter().collect();
                rest.lines().next().map(str::to_owned)
            }
            _ => None,
        };
        if let Some(target) = target.as_deref().and_then(destination) {
            found.push(Link {
                line: line_of(open),
                target,
            });
        }
    }
}

/// The text with every code span's content, backticks included, replaced by spaces
/// (newlines kept, so positions still count lines). A run of backticks with no closing
/// run of the same length is literal text, as CommonMark has it.
fn without_code_spans(text: &str) -> Vec<char> {
    let mut chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|c| **c == '`').count();
        let mut j = i + run;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let n = chars[j..].iter().take_while(|c| **c == '`').count();
                if n == run {
                    close = Some(j + n);
                    break;
                }
                j += n;
            } else {
                j += 1;
            }
        }
        match close {
            Some(end) => {
                for c in &mut chars[i..end] {
                    if *c != '\n' {
                        *c = ' ';
                    }
                }
                i = end;
            }
            None => i += run,
        }
    }
    chars
}

/// The index of the bracket closing the one at `open`, counting nested pairs and
/// skipping escaped ones.
fn matching(chars: &[char], open: usize, left: char, right: char) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &c) in chars.iter().enumerate().skip(open) {
        if i > open && chars[i - 1] == '\\' {
            continue;
        }
        if c == left {
            depth += 1;
        } else if c == right {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// A link's destination without its title (`(target "title")`) or angle brackets.
fn destination(inside: &str) -> Option<String> {
    let inside = inside.trim();
    let target = match inside.strip_prefix('<') {
        Some(rest) => rest.split('>').next()?,
        None => inside.split_whitespace().next()?,
    };
    (!target.is_empty()).then(|| target.to_owned())
}

/// GitHub's anchor for a heading's text: lowercase, every space a `-`, and every
/// character other than a letter, a digit, `-` or `_` dropped (github-slugger's rule).
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

/// The text of a heading as rendered: link and image targets dropped, their text kept.
fn rendered(heading: &str) -> String {
    let chars: Vec<char> = heading.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == ']'
            && chars.get(i + 1) == Some(&'(')
            && let Some(end) = matching(&chars, i + 1, '(', ')')
        {
            i = end + 1;
            continue;
        }
        if chars[i] != '[' && !(chars[i] == '!' && chars.get(i + 1) == Some(&'[')) {
            out.push(chars[i]);
        }
        i += 1;
    }
    out
}

/// The anchors of a file's ATX headings, a repeated one numbered `-1`, `-2`, ... as
/// GitHub numbers them.
fn anchors(markdown: &str) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for line in lines(markdown).iter().filter(|l| !l.in_fence()) {
        let trimmed = line.text.trim_start_matches(' ');
        let level = trimmed.chars().take_while(|c| *c == '#').count();
        if line.text.len() - trimmed.len() > 3 || !(1..=6).contains(&level) {
            continue;
        }
        let rest = &trimmed[level..];
        if !(rest.is_empty() || rest.starts_with(' ')) {
            continue;
        }
        // An optional closing run of `#`, after a space.
        let text = rest.trim_end();
        let unclosed = text.trim_end_matches('#');
        let text = if unclosed.is_empty() || unclosed.ends_with(' ') {
            unclosed
        } else {
            text
        };
        let base = slug(&rendered(text));
        let mut anchor = base.clone();
        while seen.contains_key(&anchor) {
            let n = seen.entry(base.clone()).or_insert(0);
            *n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor.clone(), 0);
        out.push(anchor);
    }
    out
}

/// What is wrong with each link of `file` that does not resolve, as
/// `file:line: target: why`, paths shown relative to `root`.
fn broken_links(root: &Path, file: &Path) -> Vec<String> {
    let text = fs::read_to_string(file).expect("a checked file is readable");
    let shown = |p: &Path| {
        let mut plain = PathBuf::new();
        for part in p.strip_prefix(root).unwrap_or(p).components() {
            match part {
                Component::ParentDir => _ = plain.pop(),
                Component::CurDir => {}
                other => plain.push(other),
            }
        }
        plain.display().to_string()
    };
    let mut problems = Vec::new();
    for link in links(&text) {
        let target = &link.target;
        if ["http://", "https://", "mailto:"]
            .iter()
            .any(|scheme| target.starts_with(scheme))
        {
            continue;
        }
        let (path, fragment) = match target.split_once('#') {
            Some((p, f)) => (p, Some(f)),
            None => (target.as_str(), None),
        };
        let resolved = if path.is_empty() {
            file.to_path_buf()
        } else if let Some(from_root) = path.strip_prefix('/') {
            root.join(from_root)
        } else {
            file.parent().expect("a file has a folder").join(path)
        };
        let mut why = None;
        if !resolved.exists() {
            why = Some("no such file".to_owned());
        } else if let Some(fragment) = fragment {
            let is_markdown = resolved.extension().is_some_and(|x| x == "md");
            if !resolved.is_file() || !is_markdown {
                why = Some("a fragment, but not a Markdown file".to_owned());
            } else {
                let target_text = fs::read_to_string(&resolved).expect("a readable target");
                if !anchors(&target_text).iter().any(|a| a == fragment) {
                    why = Some(format!("no heading of {} has the anchor", shown(&resolved)));
                }
            }
        }
        if let Some(why) = why {
            problems.push(format!("{}:{}: {target}: {why}", shown(file), link.line));
        }
    }
    problems
}

#[test]
fn every_relative_link_in_the_docs_resolves_to_a_file_and_a_heading() {
    let root = root();
    let problems: Vec<String> = checked_files(&root)
        .iter()
        .flat_map(|f| broken_links(&root, f))
        .collect();
    assert!(
        problems.is_empty(),
        "broken links:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn the_guide_has_the_pages_the_help_texts_link_to() {
    for page in [
        "sweep.md",
        "compare.md",
        "tune.md",
        "scale-out.md",
        "install.md",
        "outputs.md",
        "html.md",
        "README.md",
    ] {
        let path = root().join("docs").join(page);
        assert!(path.is_file(), "{} is missing", path.display());
    }
}

#[test]
fn anchors_follow_githubs_slugs_and_number_repeated_headings() {
    let md = "# tailrate\n\
              ## How much load at a latency target? (sweep)\n\
              ## Capacity with its band: scripts/sweep on a noisy host\n\
              ### `--threads` on this machine\n\
              ## Two shards (`--shard`, `tailrate merge`)\n\
              ## The [guide](docs/README.md) ##\n\
              ## Notes\n\
              ```\n# not a heading\n```\n\
              ## Notes\n\
              ## Notes\n\
              ## schedule_lag, µs\n";
    assert_eq!(
        anchors(md),
        [
            "tailrate",
            "how-much-load-at-a-latency-target-sweep",
            "capacity-with-its-band-scriptssweep-on-a-noisy-host",
            "--threads-on-this-machine",
            "two-shards---shard-tailrate-merge",
            "the-guide",
            "notes",
            "notes-1",
            "notes-2",
            "schedule_lag-µs",
        ]
    );
}

#[test]
fn links_are_found_outside_code_and_not_inside_it() {
    let md = "See [a](a.md#x) and ![plot](../plots/p.svg \"title\"), `[not](code.md)`.\n\
              A link over [two\nlines](b.md) and <not-a-link>.\n\
              \n\
              ```sh\n[not](fenced.md)\n```\n\
              [ref]: <c.md>\n\
              [external](https://example.com) [mail](mailto:a@b.c) [same](#top)\n";
    let found: Vec<(usize, String)> = links(md).into_iter().map(|l| (l.line, l.target)).collect();
    let expected = [
        (1, "a.md#x"),
        (1, "../plots/p.svg"),
        (2, "b.md"),
        (8, "c.md"),
        (9, "https://example.com"),
        (9, "mailto:a@b.c"),
        (9, "#top"),
    ]
    .map(|(n, t)| (n, t.to_owned()));
    assert_eq!(found, expected);
}

#[test]
fn a_missing_file_a_missing_heading_and_a_fragment_on_a_non_markdown_file_are_reported() {
    let dir = std::env::temp_dir().join(format!("tailrate-docs-links-{}", std::process::id()));
    fs::create_dir_all(dir.join("docs")).unwrap();
    fs::write(dir.join("plot.svg"), "<svg/>").unwrap();
    fs::write(
        dir.join("docs/guide.md"),
        "# Guide\n## Sweep\n[up](../README.md#top) [self](#sweep) [gone](#sweeps)\n",
    )
    .unwrap();
    fs::write(
        dir.join("README.md"),
        "# Top\n[ok](docs/guide.md#sweep) [no file](docs/gone.md)\n\
         [no heading](docs/guide.md#tune) ![plot](plot.svg) [bad](plot.svg#x) [abs](/plot.svg)\n",
    )
    .unwrap();
    let mut problems = broken_links(&dir, &dir.join("README.md"));
    problems.extend(broken_links(&dir, &dir.join("docs/guide.md")));
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        problems,
        [
            "README.md:2: docs/gone.md: no such file",
            "README.md:3: docs/guide.md#tune: no heading of docs/guide.md has the anchor",
            "README.md:3: plot.svg#x: a fragment, but not a Markdown file",
            "docs/guide.md:3: #sweeps: no heading of docs/guide.md has the anchor",
        ]
    );
}
