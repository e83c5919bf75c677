//! What the command-line tests share.

use std::path::PathBuf;

/// A fresh temporary directory, removed when dropped.
pub struct Dir(pub PathBuf);

impl Dir {
    /// `triskel-{name}-{pid}` under the system's temporary directory.
    pub fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("triskel-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }

    /// A file in it, as a string argument.
    pub fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
