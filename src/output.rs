//! Where an output goes, and how it is written: one home for every file the program
//! writes (`--json`, `--hdr-log`, the files of a sweep's `--out`, `tailrate plot --out`).
//!
//! A regular file, or a path where nothing is yet, is replaced atomically: written to a
//! temporary file beside it, synced, then renamed over it, so a reader never sees half
//! a file and a crash leaves the previous version. A symbolic link is followed and the
//! file it points to is replaced; the link stays. Anything else that exists (a device
//! such as `/dev/null`, a FIFO, a link into `/proc` as `/dev/stdout` is) is written
//! directly: renaming over it would replace the device or the pipe with a file.
//!
//! [`check`] runs before the first request, so a bad path fails the command at once
//! rather than after the run. `-` (standard output) is the callers' to handle: they hold
//! the writer it goes to ([`is_stdout`]). This module knows nothing of flags; callers
//! name them in their errors.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The path that means standard output.
pub const STDOUT: &str = "-";

/// Whether `path` is `-`, standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == STDOUT
}

/// How a write reaches an output path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// A regular file, or nothing yet: replaced atomically at this path (links resolved).
    Replace(PathBuf),
    /// Something that is not a regular file, or a link into `/proc`: written in place.
    Direct,
}

/// How writes reach `path`; an error when it is a directory or cannot be looked at.
fn target(path: &Path) -> io::Result<Target> {
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "is a directory; give a file name",
            ));
        }
        Ok(m) if !m.is_file() => return Ok(Target::Direct),
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let (resolved, through_proc) = resolve_links(path)?;
    // `/dev/stdout` is a link to `/proc/self/fd/1`, whose "target" is whatever fd 1 is:
    // replacing that file would cut it from the descriptor the shell opened.
    Ok(if through_proc {
        Target::Direct
    } else {
        Target::Replace(resolved)
    })
}

/// Follows the symbolic links at the end of `path`; also says whether one pointed into `/proc`.
fn resolve_links(path: &Path) -> io::Result<(PathBuf, bool)> {
    let mut at = path.to_path_buf();
    let mut through_proc = false;
    // The kernel's own limit (MAXSYMLINKS) is 40.
    for _ in 0..40 {
        match fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&at)?;
                at = match at.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
                through_proc |= at.starts_with("/proc");
            }
            _ => return Ok((at, through_proc)),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Whether `path` is rewritten in place of the last version (a regular file or a new
/// path), rather than a stream that should be written once (`-`, a device, a FIFO).
pub fn is_file(path: &Path) -> bool {
    !is_stdout(path) && matches!(target(path), Ok(Target::Replace(_)))
}

/// Writes `bytes` to `path` (never `-`): atomically when it is a regular file or a new
/// path, directly when it is a device, a FIFO or another non-file. The error names the path.
pub fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let written = match target(path) {
        Ok(Target::Replace(resolved)) => replace(&resolved, bytes),
        Ok(Target::Direct) => write_directly(path, bytes),
        Err(e) => Err(e),
    };
    written.map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

/// Writes into what is already at `path` (a device, a FIFO), without creating or truncating.
fn write_directly(path: &Path, bytes: &[u8]) -> io::Result<()> {
    // Appending: a regular file reached through `/proc` (a redirected stdout) keeps what
    // was written to it before; a device or a FIFO ignores the flag.
    let mut file = OpenOptions::new().append(true).open(path)?;
    file.write_all(bytes)?;
    file.flush()
}

/// Replaces `target` (a regular file or a new path, links resolved) through a temporary
/// file beside it; the temporary file is removed again when any step fails.
fn replace(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = temp_beside(target, "tmp");
    let kept_mode = fs::metadata(target).ok().map(|m| m.permissions());
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        if let Some(mode) = kept_mode {
            file.set_permissions(mode)?;
        }
        file.sync_all()?;
        fs::rename(&tmp, target)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// `DIR/.NAME.KIND-PID`: a hidden name beside `path` that no other process uses.
fn temp_beside(path: &Path, kind: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    directory_of(path).join(format!(".{name}.{kind}-{}", std::process::id()))
}

/// The directory `path` is in (`.` for a bare file name).
fn directory_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Checks, before anything runs, that an output can be written at `path` (`-` always
/// can): it is a device or a FIFO, or its directory exists and takes a new file (tried
/// with a file created and removed at once). The error says what is wrong, without the path.
pub fn check(path: &Path) -> Result<(), String> {
    if is_stdout(path) {
        return Ok(());
    }
    let resolved = match target(path) {
        Ok(Target::Direct) => return Ok(()),
        Ok(Target::Replace(resolved)) => resolved,
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
            return Err(match path.ancestors().skip(1).find(|a| a.is_file()) {
                Some(file) => format!("{} is a file, not a directory", file.display()),
                None => e.to_string(),
            });
        }
        Err(e) if e.kind() == io::ErrorKind::IsADirectory => return Err(e.to_string()),
        Err(e) => return Err(format!("cannot look at it ({e})")),
    };
    let dir = directory_of(&resolved);
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(format!("{} is not a directory", dir.display())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(format!(
                "the directory {} does not exist (create it first)",
                dir.display()
            ));
        }
        Err(e) => return Err(format!("cannot look at {} ({e})", dir.display())),
    }
    let probe = temp_beside(&resolved, "check");
    match File::create(&probe) {
        Ok(_) => {
            let _ = fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(format!("cannot create a file in {} ({e})", dir.display())),
    }
}

/// Whether two output paths end in the same place: the same name, the same existing
/// file or device (links followed), or both standard output (`-`, or a path to what
/// standard output is).
pub fn same_place(a: &Path, b: &Path) -> bool {
    a == b || matches!((place(a), place(b)), (Some(x), Some(y)) if x == y)
}

/// Where an output lands: an inode when something is there, else a normalised path.
#[derive(Debug, PartialEq, Eq)]
enum Place {
    Inode(u64, u64),
    Path(PathBuf),
}

fn place(path: &Path) -> Option<Place> {
    let meta = if is_stdout(path) {
        let fd = std::os::fd::AsFd::as_fd(&io::stdout()).try_clone_to_owned();
        fd.ok().and_then(|fd| File::from(fd).metadata().ok())
    } else {
        fs::metadata(path).ok()
    };
    if let Some(m) = meta {
        return Some(Place::Inode(m.dev(), m.ino()));
    }
    if is_stdout(path) {
        return None;
    }
    let (resolved, _) = resolve_links(path).ok()?;
    let dir = fs::canonicalize(directory_of(&resolved)).ok()?;
    Some(Place::Path(dir.join(resolved.file_name()?)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_regular_file_is_replaced_and_only_the_target_remains() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        write_file(&path, b"one").unwrap();
        write_file(&path, b"two").unwrap();
        assert_eq!(names(dir.path()), ["r.json"]);
        assert_eq!(fs::read(&path).unwrap(), b"two");
    }

    #[test]
    fn a_replaced_file_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        fs::write(&path, b"old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        write_file(&path, b"new").unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }

    #[test]
    fn a_link_is_followed_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        let link = dir.path().join("link.json");
        fs::write(&real, b"old").unwrap();
        std::os::unix::fs::symlink("real.json", &link).unwrap();
        write_file(&link, b"new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(&real).unwrap(), b"new");
        // A dangling link: the file it names is created, the link stays.
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink("made.json", &dangling).unwrap();
        write_file(&dangling, b"made").unwrap();
        assert!(
            fs::symlink_metadata(&dangling)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(dir.path().join("made.json")).unwrap(), b"made");
        assert_eq!(
            names(dir.path()),
            ["dangling.json", "link.json", "made.json", "real.json"]
        );
    }

    #[test]
    fn a_failed_replace_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // Renaming a file over a directory that is not empty fails after the temporary
        // file is written.
        let target = dir.path().join("busy");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("x"), b"").unwrap();
        assert!(replace(&target, b"data").is_err());
        assert_eq!(names(dir.path()), ["busy"]);
        // Through the public path a directory is refused before anything is written.
        let e = write_file(&target, b"data").unwrap_err().to_string();
        assert!(e.contains("busy") && e.contains("directory"), "{e}");
        assert_eq!(names(dir.path()), ["busy"]);
    }

    #[test]
    fn the_check_names_what_is_wrong_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("FILE");
        fs::write(&file, b"").unwrap();
        assert_eq!(check(&dir.path().join("new.json")), Ok(()));
        assert_eq!(check(&file), Ok(()));
        assert_eq!(check(Path::new("-")), Ok(()));
        let under_file = check(&file.join("x.json")).unwrap_err();
        assert!(under_file.contains("FILE is a file"), "{under_file}");
        let missing = check(&dir.path().join("missing/x.json")).unwrap_err();
        assert!(missing.contains("missing does not exist"), "{missing}");
        let a_dir = check(dir.path()).unwrap_err();
        assert!(a_dir.contains("directory"), "{a_dir}");
        assert_eq!(names(dir.path()), ["FILE"]);
    }

    #[test]
    fn two_spellings_of_one_path_are_the_same_place() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("x.json");
        let dotted = dir.path().join(".").join("x.json");
        assert!(same_place(&new, &dotted));
        fs::write(&new, b"").unwrap();
        let link = dir.path().join("l.json");
        std::os::unix::fs::symlink(&new, &link).unwrap();
        assert!(same_place(&new, &link));
        assert!(same_place(Path::new("-"), Path::new("-")));
        assert!(!same_place(&new, &dir.path().join("y.json")));
        assert!(!same_place(Path::new("-"), &new));
    }

    #[test]
    fn devices_and_standard_output_are_not_rewritten_files() {
        assert!(!is_file(Path::new("-")));
        assert!(!is_file(Path::new("/dev/null")));
        let dir = tempfile::tempdir().unwrap();
        assert!(is_file(&dir.path().join("new.json")));
    }
}
