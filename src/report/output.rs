//! Writing documents without ever leaving a half-written file behind.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Why a document could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The temporary file beside the target could not be created or written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file that was being written.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The finished temporary file could not be renamed over the target.
    #[error("cannot replace {path}: {source}")]
    Persist {
        /// The file that was being written.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The picture could not be encoded.
    #[error("cannot encode the picture for {path}: {source}")]
    EncodeImage {
        /// The file that was being written.
        path: PathBuf,
        /// What the image crate said.
        source: image::ImageError,
    },
    /// The document could not be serialised.
    #[error("cannot encode the document for {path}: {source}")]
    Encode {
        /// The file that was being written.
        path: PathBuf,
        /// What serde_json said.
        source: serde_json::Error,
    },
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder, then a rename, so an
/// existing file is replaced only by a complete new one. `-` means standard output.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    if path.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(bytes)
            .and_then(|_| out.flush())
            .map_err(|source| OutputError::Write { path: PathBuf::from("standard output"), source });
    }
    let write_err = |source| OutputError::Write { path: path.to_owned(), source };
    let target = through_links(path);
    // A FIFO or device is written as it is: renaming over it would replace it with a file.
    if is_special(&target) {
        let mut f = std::fs::OpenOptions::new().write(true).open(&target).map_err(write_err)?;
        return f.write_all(bytes).and_then(|_| f.flush()).map_err(write_err);
    }
    let mut tmp = temp_file_beside(&target, "").map_err(write_err)?;
    tmp.write_all(bytes).map_err(write_err)?;
    tmp.as_file().sync_all().map_err(write_err)?;
    tmp.persist(&target).map_err(|e| OutputError::Persist { path: path.to_owned(), source: e.error })?;
    Ok(())
}

/// Where writing to `path` should land: a symbolic link is followed (to the file it names, which
/// may not exist yet), so that replacing the file keeps the link.
pub fn through_links(path: &Path) -> PathBuf {
    let mut p = path.to_owned();
    // A loop of links is left to fail where it is opened.
    for _ in 0..16 {
        match std::fs::read_link(&p) {
            Ok(t) if t.is_absolute() => p = t,
            Ok(t) => p = p.parent().unwrap_or(Path::new(".")).join(t),
            Err(_) => break,
        }
    }
    p
}

/// Whether `path` is a FIFO, device or socket (written in place, never renamed over).
pub fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// A temporary file in the same folder as `path` (so it can be renamed over it), ending in
/// `suffix`, readable like any file the user writes (0644), or with the mode of the file it will
/// replace.
pub fn temp_file_beside(path: &Path, suffix: &str) -> std::io::Result<tempfile::NamedTempFile> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.suffix(suffix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).map(|m| m.permissions().mode() & 0o7777).unwrap_or(0o644);
        builder.permissions(std::fs::Permissions::from_mode(mode));
    }
    builder.tempfile_in(dir)
}

/// Serialises `doc` as pretty JSON (with a final newline) and writes it with [`write_bytes`].
pub fn write_document<T: serde::Serialize>(path: &Path, doc: &T) -> Result<(), OutputError> {
    let mut bytes =
        serde_json::to_vec_pretty(doc).map_err(|source| OutputError::Encode { path: path.to_owned(), source })?;
    bytes.push(b'\n');
    write_bytes(path, &bytes)
}

/// Encodes `img` as PNG and writes it with [`write_bytes`].
pub fn write_png(path: &Path, img: &image::RgbImage) -> Result<(), OutputError> {
    let mut bytes = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
        .map_err(|source| OutputError::EncodeImage { path: path.to_owned(), source })?;
    write_bytes(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_existing_file_whole() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("out.json");
        std::fs::write(&path, "old")?;
        write_document(&path, &serde_json::json!({"format": "x"}))?;
        let text = std::fs::read_to_string(&path)?;
        assert!(text.contains("\"format\""));
        assert_eq!(std::fs::read_dir(dir.path())?.count(), 1, "no temporary file left behind");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path)?.permissions().mode() & 0o777, 0o644);
        }
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_followed_and_a_fifo_written_in_place() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let real = dir.path().join("real.json");
        std::fs::write(&real, "old")?;
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("real.json", &link)?;
        write_bytes(&link, b"new")?;
        assert!(std::fs::symlink_metadata(&link)?.file_type().is_symlink(), "the link is kept");
        assert_eq!(std::fs::read_to_string(&real)?, "new");
        // A FIFO: a reader gets the bytes, and the FIFO is still one afterwards.
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status()?.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo))
        };
        write_bytes(&fifo, b"through")?;
        assert_eq!(reader.join().map_err(|_| "reader panicked")??, b"through");
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::metadata(&fifo)?.file_type().is_fifo());
        Ok(())
    }

    #[test]
    fn missing_folder_is_an_error_not_a_panic() {
        let err = write_bytes(Path::new("/nonexistent/dir/out.json"), b"x").unwrap_err();
        assert!(err.to_string().contains("/nonexistent/dir/out.json"));
    }
}
