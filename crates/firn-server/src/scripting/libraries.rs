//! The function libraries a VM holds (FUNCTION LOAD adds them, FCALL
//! finds its function here). Loading and storing them is `functions.rs`.

use bytes::Bytes;
use mlua::Function;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use super::flags::ScriptFlags;
use super::shared::Shared;

pub struct FunctionDef {
    pub func: Function,
    pub flags: ScriptFlags,
    pub description: Option<Bytes>,
}

pub struct Library {
    pub code: Bytes,
    pub functions: BTreeMap<String, FunctionDef>,
}

#[derive(Default)]
pub struct Libraries {
    pub by_name: BTreeMap<String, Library>,
    /// Function name (lowercase: FCALL finds functions whatever their
    /// case, as Redis's dictionary does) → library name.
    pub index: BTreeMap<String, String>,
}

impl Libraries {
    /// Forgets the library `name` and its functions; false if there is none.
    pub fn remove(&mut self, name: &str) -> bool {
        let Some(old) = self.by_name.remove(name) else {
            return false;
        };
        for function in old.functions.keys() {
            self.index.remove(&function.to_ascii_lowercase());
        }
        true
    }

    /// Publishes the counts INFO and FUNCTION STATS read.
    pub fn publish(&self, shared: &Shared) {
        shared
            .libraries_count
            .store(self.by_name.len() as u64, Ordering::Relaxed);
        shared
            .functions_count
            .store(self.index.len() as u64, Ordering::Relaxed);
        let bytes: usize = self.by_name.values().map(|l| l.code.len()).sum();
        *shared.function_flags.write() = self
            .by_name
            .values()
            .flat_map(|library| library.functions.iter())
            .map(|(name, def)| (name.to_ascii_lowercase(), def.flags))
            .collect();
        shared
            .functions_bytes
            .store(bytes as u64, Ordering::Relaxed);
    }
}
