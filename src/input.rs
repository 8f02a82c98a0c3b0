//! The files tailrate reads back (run reports, sweeps, interval logs): regular files of a
//! bounded size only, checked before a byte is read. A FIFO would block until some writer
//! came, a device would never end, and a file of gigabytes is no report; each is refused
//! with what it is, for the caller to name the file.

use std::io;
use std::path::Path;

/// The largest file read back: a day-long sweep's report, or an hour-long shard's
/// interval log, is tens of megabytes; four gibibytes is no tailrate file.
pub const MAX_INPUT_BYTES: u64 = 4 << 30;

/// The bytes of the regular file at `path` (a symbolic link followed), refusing anything
/// else and a file over [`MAX_INPUT_BYTES`].
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a directory, not a file",
        ));
    }
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO or a device would block or never end): save it to a file first",
        ));
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{} bytes, more than the {MAX_INPUT_BYTES} a tailrate report or log can have",
                meta.len()
            ),
        ));
    }
    std::fs::read(path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_fifo_and_a_directory_are_refused_before_reading_and_a_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("r.json");
        std::fs::write(&file, b"{}").unwrap();
        assert_eq!(read(&file).unwrap(), b"{}");
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo {}", fifo.display());
        // Opening it would block with no writer: the check must come first.
        let e = read(&fifo).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(
            read(dir.path())
                .unwrap_err()
                .to_string()
                .contains("directory")
        );
        assert!(read(&dir.path().join("gone")).is_err());
    }
}
