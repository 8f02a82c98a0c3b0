//! The README stays a five-minute read, counted in words with its code and outputs, and
//! opens with the two scripts; its links are checked with the rest of the docs by the
//! parent module, whose reading of fenced blocks this one shares.

use std::fs;

use super::{Place, lines, root};

/// The most words the README may hold, code blocks and outputs included: what a reader
/// gets through in about five minutes (at about 250 words a minute, slower in code).
const README_MAX_WORDS: usize = 1250;

/// The first command of each fenced shell block, in order: its first line that is not
/// blank or a comment, without a `$ ` prompt or a trailing `# comment`.
fn first_commands(markdown: &str) -> Vec<String> {
    let mut commands = Vec::new();
    // Whether the current block is a shell block still waiting for its first command.
    let mut waiting = false;
    for line in lines(markdown) {
        match line.place {
            Place::Open(info) => waiting = matches!(info, "sh" | "bash" | "shell" | "console"),
            Place::Code if waiting => {
                let trimmed = line.text.trim();
                if !trimmed.is_empty() && !trimmed.starts_with('#') {
                    let command = trimmed.strip_prefix("$ ").unwrap_or(trimmed);
                    let command = command.split(" #").next().unwrap_or(command).trim();
                    commands.push(command.to_owned());
                    waiting = false;
                }
            }
            _ => {}
        }
    }
    commands
}

/// The words of a Markdown text as a reader counts them: every run of characters between
/// spaces, in prose and code alike.
fn words(markdown: &str) -> usize {
    markdown.split_whitespace().count()
}

#[test]
fn the_readme_is_a_five_minute_read_of_at_most_1250_words() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let count = words(&readme);
    assert!(
        count <= README_MAX_WORDS,
        "README.md has {count} words, code included; at most {README_MAX_WORDS}: move the \
         detail into docs/"
    );
}

#[test]
fn words_are_counted_in_prose_and_code_alike() {
    assert_eq!(
        words("# Title\n\nTwo words.\n\n```sh\nscripts/sweep --out x\n```\n"),
        9
    );
}

#[test]
fn the_readme_opens_with_scripts_sweep_then_scripts_test() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let commands = first_commands(&readme);
    assert_eq!(
        commands.get(..2),
        Some(&["scripts/sweep".to_owned(), "scripts/test".to_owned()][..]),
        "the README's first two command blocks must start with scripts/sweep and scripts/test"
    );
}

#[test]
fn first_commands_are_read_from_shell_blocks_without_prompts_or_comments() {
    let md = "```toml\nx = 1\n```\n\
              ```sh\n# setup\nscripts/sweep    # the main job\nscripts/other\n```\n\
              ```console\n$ scripts/test\noutput\n```\n";
    assert_eq!(first_commands(md), ["scripts/sweep", "scripts/test"]);
}
