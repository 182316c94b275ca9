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
            .map_err(|source| OutputError::Write { path: path.to_owned(), source });
    }
    let write_err = |source| OutputError::Write { path: path.to_owned(), source };
    let mut tmp = temp_file_beside(path, "").map_err(write_err)?;
    tmp.write_all(bytes).map_err(write_err)?;
    tmp.as_file().sync_all().map_err(write_err)?;
    tmp.persist(path).map_err(|e| OutputError::Persist { path: path.to_owned(), source: e.error })?;
    Ok(())
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

    #[test]
    fn missing_folder_is_an_error_not_a_panic() {
        let err = write_bytes(Path::new("/nonexistent/dir/out.json"), b"x").unwrap_err();
        assert!(err.to_string().contains("/nonexistent/dir/out.json"));
    }
}
