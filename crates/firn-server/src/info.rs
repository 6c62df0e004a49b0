//! INFO: Redis's sections plus `storage` with RocksDB's own figures.

use crate::server::Server;

/// The text of INFO for the given section names (empty = default set).
pub fn render(_server: &Server, _sections: &[String]) -> String {
    String::new()
}
