//! The HTML pages (`--html FILE` and `tailrate report INPUT --html FILE`): made from real
//! runs, sweeps, comparisons (of files and live) and merges of shards against a real
//! redis-server; self-contained (no reference to any other host), escaped, under 2 MB
//! for a sweep; the same page again from the saved results; and rendered by headless
//! Chromium at a laptop's and a phone's size into a screenshot that is not blank,
//! without a console error.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::harness::{
    RedisServer, assert_success, assert_usage_error, require_tool, run_tailrate,
    run_tailrate_with_timeout, run_with_timeout, stderr_of,
};

/// What a sweep's page may weigh: it is attached to tickets and mailed.
const MOST_SWEEP_BYTES: usize = 2 << 20;

/// The screen sizes a page is rendered at: a laptop's and a phone's (CSS pixels).
const SIZES: [(u32, u32); 2] = [(1366, 768), (390, 844)];

fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Every reference in `html` to something outside the page: a URL with a scheme or
/// protocol-relative (`//host`), in any `src`, `href`, `action` or `xlink:href`, in a
/// CSS `url(...)` or `@import`, or written out anywhere (`http://`, `https://`).
fn external_references(html: &str) -> Vec<String> {
    let lower = html.to_ascii_lowercase();
    let mut found = Vec::new();
    for needle in ["http://", "https://", "@import", "url("] {
        if let Some(at) = lower.find(needle) {
            found.push(lower[at..(at + 60).min(lower.len())].to_string());
        }
    }
    for attribute in ["src=", "href=", "action=", "xlink:href=", "srcset="] {
        let mut rest = lower.as_str();
        while let Some(at) = rest.find(attribute) {
            rest = &rest[at + attribute.len()..];
            let value = rest.trim_start_matches(['"', '\'']);
            let value: String = value
                .chars()
                .take_while(|c| !"\"' >".contains(*c))
                .collect();
            // A link to a place in the page itself is the only reference allowed.
            if !value.starts_with('#') {
                found.push(format!("{attribute}{value}"));
            }
        }
    }
    found
}

fn assert_self_contained(path: &Path) {
    let refs = external_references(&text(path));
    assert!(refs.is_empty(), "{} references {refs:?}", path.display());
}

/// `tailrate report INPUT --html OUT`, asserted to succeed; returns the page.
fn report_page(input: &Path, out: &Path) -> String {
    let args = [
        "report",
        input.to_str().unwrap(),
        "--html",
        out.to_str().unwrap(),
    ];
    assert_success(&run_tailrate(&args));
    text(out)
}

/// A one-second open-loop run of `command` into `dir`: its JSON and its page.
fn run_with_page(server: &RedisServer, dir: &Path, name: &str, command: &[&str]) -> PathBuf {
    let port = server.port().to_string();
    let json = dir.join(format!("{name}.json"));
    let html = dir.join(format!("{name}.html"));
    let mut args = vec![
        "-p",
        &port,
        "--rate",
        "1000",
        "--duration",
        "1s",
        "--no-progress",
        "-q",
        "--json",
        json.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ];
    args.extend_from_slice(command);
    assert_success(&run_tailrate(&args));
    html
}

/// The short sweep of tests/sweep.rs (two steps and the SLO search), with its page.
fn sweep_with_page(server: &RedisServer, dir: &Path) -> PathBuf {
    let port = server.port().to_string();
    let out = dir.join("sweep");
    let html = dir.join("sweep.html");
    let args = [
        "sweep",
        "-p",
        &port,
        "--seed",
        "7",
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
        "-t",
        "set",
        "-c",
        "4",
        "--rates",
        "2k,4k",
        "--duration",
        "400ms",
        "--warmup",
        "100ms",
        "--settle",
        "0s",
        "--slo",
        "p99.9<=100ms",
    ];
    assert_success(&run_tailrate_with_timeout(&args, Duration::from_secs(150)));
    html
}

/// Two runs compared, with the comparison's JSON and page.
fn compare_with_page(server: &RedisServer, dir: &Path) -> PathBuf {
    let a = run_with_page(server, dir, "a", &["-t", "get"]);
    let b = run_with_page(server, dir, "b", &["-t", "get"]);
    let (a, b) = (a.with_extension("json"), b.with_extension("json"));
    let html = dir.join("compare.html");
    let json = dir.join("compare.json");
    let args = [
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ];
    assert_success(&run_tailrate(&args));
    html
}

#[test]
fn html_of_a_run_opens_with_its_answer_escapes_its_command_line_and_is_made_again_from_its_json() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let command = ["SET", "k<script>alert('x')</script>&", "v"];
    let html_path = run_with_page(&server, dir.path(), "run", &command);
    let html = text(&html_path);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        !html.contains("<script"),
        "a tag typed on the command line reached the page"
    );
    assert!(html.contains("k&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;"));
    let report = super::harness::read_json(&html_path.with_extension("json"));
    let p99_ms = report["tests"][0]["latency"]["response"]["p99_ns"]
        .as_u64()
        .unwrap() as f64
        / 1e6;
    let answer = html.find("Open loop at 1000 req/s").expect("the answer");
    let table = html.find("Percentiles with 95% intervals").unwrap();
    let checks = html.find("Self-checks").unwrap();
    let server_view = html.find("The server's view").unwrap();
    let about = html.find("id=\"about\"").unwrap();
    assert!(answer < table && table < checks && checks < server_view && server_view < about);
    assert!(
        html[answer..table].contains(&format!("{p99_ms:.3}")),
        "p99 in the answer"
    );
    assert!(html.contains("Response-time heatmap"));
    assert!(html.contains(env!("CARGO_PKG_VERSION")));
    let version = server.info_field("server", "redis_version").unwrap();
    assert!(html.contains(&version), "the server's version {version}");
    assert_self_contained(&html_path);
    // The same page from the saved report, byte for byte.
    let again = report_page(
        &html_path.with_extension("json"),
        &dir.path().join("again.html"),
    );
    assert_eq!(again, html);
}

#[test]
fn html_of_a_sweep_opens_with_its_capacity_inlines_every_plot_and_stays_under_2_mb() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let html_path = sweep_with_page(&server, dir.path());
    let html = text(&html_path);
    assert!(html.len() < MOST_SWEEP_BYTES, "{} bytes", html.len());
    let capacity = html
        .find("Capacity at p99.9&lt;=100ms")
        .expect("the capacity line");
    let steps = html.find("id=\"steps\"").unwrap();
    let plots = html.find("id=\"plots\"").unwrap();
    assert!(capacity < steps && steps < plots);
    assert!(html[capacity..steps].contains("band"));
    assert_eq!(
        html.matches("<svg viewBox=").count(),
        5,
        "five plots inlined"
    );
    assert!(html.contains("Response-time heatmap over the sweep"));
    for word in ["2000", "4000", "self-checks", "server"] {
        assert!(html.contains(word), "{word}");
    }
    assert_self_contained(&html_path);
    // The same page from the sweep's folder, and from its sweep.json.
    let folder = dir.path().join("sweep");
    assert_eq!(report_page(&folder, &dir.path().join("again.html")), html);
    assert_eq!(
        report_page(&folder.join("sweep.json"), &dir.path().join("again2.html")),
        html
    );
}

#[test]
fn html_of_a_comparison_opens_with_its_verdicts_and_is_made_again_from_its_json() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let html_path = compare_with_page(&server, dir.path());
    let html = text(&html_path);
    let tally = html.find("B slower at ").expect("the tally");
    let table = html.find("GET: response time").expect("the table");
    assert!(tally < table);
    assert!(html.contains("a.json") && html.contains("b.json"));
    assert!(html.contains("compare"), "the command line");
    assert_self_contained(&html_path);
    let again = report_page(
        &dir.path().join("compare.json"),
        &dir.path().join("again.html"),
    );
    assert!(again.contains("Made from a saved comparison"));
    assert_self_contained(&dir.path().join("again.html"));
}

#[test]
fn the_html_check_finds_every_kind_of_external_reference() {
    for planted in [
        "<img src=\"https://example.com/a.png\">",
        "<script src=\"//cdn.example.com/x.js\"></script>",
        "<a href=\"http://example.com\">x</a>",
        "<style>@import 'x.css';</style>",
        "<style>body { background: url(x.png) }</style>",
        "<link href='fonts.css' rel=stylesheet>",
        "<svg><image xlink:href=\"pic.png\"/></svg>",
    ] {
        assert!(!external_references(planted).is_empty(), "missed {planted}");
    }
    assert!(external_references("<a href=\"#steps\">steps</a>").is_empty());
}

#[test]
fn report_refuses_bad_input_naming_the_file_and_field_and_an_html_that_is_not_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        br#"{"schema_version": 1, "tests": [{"name": "GET"}]}"#,
    )
    .unwrap();
    let out = dir.path().join("out.html");
    let args = [
        "report",
        bad.to_str().unwrap(),
        "--html",
        out.to_str().unwrap(),
    ];
    let run = run_tailrate(&args);
    let err = stderr_of(&run);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad.json") && err.contains("missing field"),
        "{err}"
    );
    assert!(!out.exists());
    let tune = dir.path().join("tune.json");
    std::fs::write(&tune, br#"{"trials": []}"#).unwrap();
    assert_usage_error(
        &[
            "report",
            tune.to_str().unwrap(),
            "--html",
            out.to_str().unwrap(),
        ],
        &["tune.json", "tune report"],
    );
    assert_usage_error(
        &["report", bad.to_str().unwrap(), "--html", "-"],
        &["--html", "standard output"],
    );
    assert_usage_error(
        &["report", bad.to_str().unwrap(), "--html", "/dev/null"],
        &["--html", "not a regular file"],
    );
    // Checked before the run: no server is needed to be told.
    assert_usage_error(
        &[
            "-p",
            "1",
            "--rate",
            "10",
            "--html",
            dir.path().to_str().unwrap(),
        ],
        &["--html", "directory"],
    );
}

/// Renders `page` in headless Chromium at `width`x`height` into `png`; returns its
/// console's messages (`:CONSOLE` lines of its log).
fn chromium(bin: &Path, page: &Path, (width, height): (u32, u32), png: &Path) -> Vec<String> {
    let profile = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(bin);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--enable-logging=stderr",
        "--v=0",
        &format!("--user-data-dir={}", profile.path().display()),
        &format!("--window-size={width},{height}"),
        &format!("--screenshot={}", png.display()),
        &format!("file://{}", page.display()),
    ]);
    let out = run_with_timeout(cmd, Duration::from_secs(120));
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(png.is_file(), "chromium wrote no {}: {log}", png.display());
    log.lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(String::from)
        .collect()
}

/// The bytes of a PNG's pixels, still filtered: its IDAT chunks inflated.
fn png_pixels(png: &Path) -> Vec<u8> {
    let bytes = std::fs::read(png).unwrap();
    assert_eq!(
        &bytes[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} is not a PNG",
        png.display()
    );
    let mut idat = Vec::new();
    let mut at = 8;
    while at + 8 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        if &bytes[at + 4..at + 8] == b"IDAT" {
            idat.extend_from_slice(&bytes[at + 8..at + 8 + len]);
        }
        at += 12 + len;
    }
    let mut pixels = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::ZlibDecoder::new(&idat[..]), &mut pixels)
        .unwrap();
    pixels
}

#[test]
fn chromium_renders_each_page_at_a_laptop_and_a_phone_size_without_a_console_error() {
    let Some(bin) = require_tool(
        "chromium",
        "run scripts/test (it installs chromium) or `apt-get install -y chromium`",
    ) else {
        return;
    };
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    // The detector itself: a page whose fetch the content policy blocks logs an error.
    let planted = dir.path().join("planted.html");
    std::fs::write(
        &planted,
        "<!DOCTYPE html><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\">\
         <img src=\"https://example.com/x.png\">",
    )
    .unwrap();
    let logged = chromium(&bin, &planted, SIZES[0], &dir.path().join("planted.png"));
    assert!(
        !logged.is_empty(),
        "a blocked fetch logged nothing: the check would see nothing"
    );
    let pages = [
        run_with_page(&server, dir.path(), "run", &["-t", "set"]),
        sweep_with_page(&server, dir.path()),
        compare_with_page(&server, dir.path()),
    ];
    for page in &pages {
        for size in SIZES {
            let png = page.with_extension(format!("{}x{}.png", size.0, size.1));
            let console = chromium(&bin, page, size, &png);
            assert!(
                console.is_empty(),
                "{} at {size:?}: {console:#?}",
                page.display()
            );
            // A blank page's filtered pixels are a few values (white, the filter bytes);
            // text and plots give many.
            let pixels = png_pixels(&png);
            let mut seen = [false; 256];
            for b in &pixels {
                seen[*b as usize] = true;
            }
            let distinct = seen.iter().filter(|s| **s).count();
            assert!(
                distinct > 32,
                "{} looks blank ({distinct} byte values)",
                png.display()
            );
        }
    }
}

#[test]
fn html_of_a_live_comparison_and_of_a_merge_of_shards() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let addr = server.addr();
    let live = dir.path().join("live.html");
    assert_success(&run_tailrate(&[
        "compare",
        "--live",
        "--a",
        &addr,
        "--b",
        &addr,
        "--rate",
        "1000",
        "--rounds",
        "2",
        "--round-duration",
        "300ms",
        "-t",
        "get",
        "--no-progress",
        "--html",
        live.to_str().unwrap(),
    ]));
    let html = text(&live);
    assert!(
        html.contains("live: 2 rounds of 0.3 s per side"),
        "the duet"
    );
    assert!(html.contains("--live"), "the command line");
    assert_self_contained(&live);

    let start_at = super::shard::start_in_a_moment();
    let extra = ["--rate", "2000", "--duration", "500ms"];
    let shards: Vec<_> = (0..2)
        .map(|i| super::shard::spawn_shard(&server, dir.path(), i, 2, &start_at, &extra))
        .collect();
    for (i, child) in shards.into_iter().enumerate() {
        super::shard::finish(child, &dir.path().join(format!("shard-{i}.json")));
    }
    let merged = dir.path().join("merged.html");
    let out = dir.path().join("merged");
    assert_success(&run_tailrate(&[
        "merge",
        dir.path().join("shard-0.json").to_str().unwrap(),
        dir.path().join("shard-0.hlog").to_str().unwrap(),
        dir.path().join("shard-1.json").to_str().unwrap(),
        dir.path().join("shard-1.hlog").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--html",
        merged.to_str().unwrap(),
    ]));
    let html = text(&merged);
    assert!(html.contains("tailrate merged run"));
    assert!(html.contains("2 of 2 shards merged"));
    assert_self_contained(&merged);
    assert_eq!(
        report_page(&out.join("merged.json"), &dir.path().join("again.html")),
        html
    );
}

/// The widths Chromium lays `page` out at on a phone's screen, with the CSS of the page
/// (its content policy dropped so a script may measure): the page's and each block
/// under the headings `blocks`, as `scrollWidth/clientWidth`.
fn laid_out_widths(bin: &Path, page: &Path, blocks: &[&str]) -> String {
    let html = text(page);
    let start = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .unwrap();
    let end = start + html[start..].find('>').unwrap() + 1;
    let probe = format!(
        "<script>const w = e => e ? e.scrollWidth + '/' + e.clientWidth : 'none';\
         const d = document.documentElement; const out = ['page=' + w(d)];\
         for (const name of {names:?}) {{ const h = [...document.querySelectorAll('h3')]\
         .find(h => h.textContent === name); out.push(name + '=' + w(h && h.nextElementSibling)); }}\
         document.body.setAttribute('data-widths', out.join(';'));</script>",
        names = blocks
    );
    let measured = page.with_extension("measured.html");
    let body_end = html.rfind("</body>").unwrap();
    std::fs::write(
        &measured,
        format!(
            "{}{}{probe}{}",
            &html[..start],
            &html[end..body_end],
            &html[body_end..]
        ),
    )
    .unwrap();
    let profile = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(bin);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        &format!("--user-data-dir={}", profile.path().display()),
        &format!("--window-size={},{}", SIZES[1].0, SIZES[1].1),
        "--dump-dom",
        &format!("file://{}", measured.display()),
    ]);
    let out = run_with_timeout(cmd, Duration::from_secs(120));
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    let at = dom
        .find("data-widths=\"")
        .unwrap_or_else(|| panic!("the probe did not run: {}", stderr_of(&out)));
    dom[at + 13..].split('"').next().unwrap().to_string()
}

#[test]
fn a_run_pages_host_and_server_blocks_wrap_inside_a_phones_width() {
    let Some(bin) = require_tool(
        "chromium",
        "run scripts/test (it installs chromium) or `apt-get install -y chromium`",
    ) else {
        return;
    };
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let page = run_with_page(&server, dir.path(), "run", &["-t", "set"]);
    let blocks = ["The host", "The server's view"];
    let widths = laid_out_widths(&bin, &page, &blocks);
    // Each `scrollWidth/clientWidth` pair equal: nothing runs past its box sideways, and
    // the page scrolls only down.
    for part in widths.split(';') {
        let (name, w) = part.split_once('=').unwrap();
        assert_ne!(w, "none", "no block under {name:?}: {widths}");
        let (scroll, client) = w.split_once('/').unwrap();
        assert_eq!(scroll, client, "{name} is wider than its box: {widths}");
    }
}
