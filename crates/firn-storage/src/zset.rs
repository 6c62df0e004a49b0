//! zset: see the collection issue (filled in by its type's work).
