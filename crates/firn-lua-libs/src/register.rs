//! [`register`], the crate's entry: the four libraries installed into a VM.
//! Apart from the crate root, which holds what every library calls (the
//! trampoline, `lib_function`, the number conversions): the libraries use
//! the root, and this file uses the libraries.

use mlua::Lua;

use crate::{bit, cjson, cmsgpack, struct_lib};

/// Installs the global tables `cjson`, `cmsgpack`, `struct` and `bit`.
pub fn register(lua: &Lua) -> mlua::Result<()> {
    let globals = lua.globals();
    globals.set("cjson", cjson::module(lua)?)?;
    globals.set("cmsgpack", cmsgpack::module(lua)?)?;
    globals.set("struct", struct_lib::module(lua)?)?;
    globals.set("bit", bit::module(lua)?)?;
    Ok(())
}
