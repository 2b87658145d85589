//! Native `std::fs` storage (native tests and benches; JavaScript runtimes use their
//! own adapters with the same behaviour).

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind as IoKind, Write};
use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::{Storage, WriteOptions};

/// Paths are used as OS paths. Replacing writes go through a temporary file and a
/// rename; exclusive writes create the file with `O_EXCL`.
#[derive(Debug, Default, Clone)]
pub struct FsStorage {
    _private: (),
}

impl FsStorage {
    /// A storage over the local file system.
    pub fn new() -> Self {
        Self::default()
    }
}

fn with_path(path: &str) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |e| Error::from(e).with_path(path)
}

fn create_parents(path: &str) -> Result<()> {
    if let Some(parent) = PathBuf::from(path).parent() {
        if !parent.as_os_str().is_empty() {
            let mut builder = fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            builder.create(parent).map_err(with_path(path))?;
        }
    }
    Ok(())
}

fn open_options(exclusive: bool) -> OpenOptions {
    let mut options = OpenOptions::new();
    options.write(true);
    if exclusive {
        options.create_new(true);
    } else {
        options.create(true).truncate(true);
    }
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

impl Storage for FsStorage {
    async fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        match fs::read(path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == IoKind::NotFound => Ok(None),
            Err(e) => Err(with_path(path)(e)),
        }
    }

    async fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = match fs::File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == IoKind::NotFound => return Ok(None),
            Err(e) => return Err(with_path(path)(e)),
        };
        // The bytes there are, reserved once (read_to_end would double its way to them).
        let there = file.metadata().map_err(with_path(path))?.len().saturating_sub(offset).min(len);
        let mut bytes = Vec::with_capacity(usize::try_from(there).unwrap_or(0));
        file.seek(SeekFrom::Start(offset)).map_err(with_path(path))?;
        file.take(len).read_to_end(&mut bytes).map_err(with_path(path))?;
        Ok(Some(bytes))
    }

    fn reads_ranges(&self) -> bool {
        true
    }

    async fn write(&self, path: &str, data: &[u8], options: WriteOptions) -> Result<()> {
        create_parents(path)?;
        if options.exclusive {
            let written = open_options(true).open(path).map_err(with_path(path))?.write_all(data);
            if let Err(e) = written {
                let _ = fs::remove_file(path);
                return Err(with_path(path)(e));
            }
            return Ok(());
        }
        let tmp = format!("{path}.{}.tmp", crate::platform::random_chars(8)?);
        let result =
            open_options(true).open(&tmp).and_then(|mut f| f.write_all(data)).and_then(|()| fs::rename(&tmp, path));
        if let Err(e) = result {
            let _ = fs::remove_file(&tmp);
            return Err(with_path(path)(e));
        }
        Ok(())
    }

    /// `O_APPEND`: each append lands whole at the end, even with other appenders.
    async fn append(&self, path: &str, data: &[u8]) -> Result<()> {
        create_parents(path)?;
        let mut options = OpenOptions::new();
        options.append(true).create(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options.open(path).and_then(|mut f| f.write_all(data)).map_err(with_path(path))
    }

    async fn remove(&self, path: &str) -> Result<()> {
        match fs::remove_file(path) {
            Err(e) if e.kind() != IoKind::NotFound => Err(with_path(path)(e)),
            _ => Ok(()),
        }
    }

    async fn list(&self, dir: &str) -> Result<Vec<String>> {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == IoKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(with_path(dir)(e)),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(with_path(dir))?;
            let mut name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                name.push('/');
            }
            out.push(name);
        }
        out.sort();
        Ok(out)
    }

    async fn remove_dir(&self, path: &str) -> Result<()> {
        match fs::remove_dir(path) {
            Err(e) if e.kind() != IoKind::NotFound => Err(with_path(path)(e)),
            _ => Ok(()),
        }
    }
}
