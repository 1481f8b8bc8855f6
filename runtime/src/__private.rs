//! Not public API. Used by generated code.
