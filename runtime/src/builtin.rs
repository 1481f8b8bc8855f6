//! The built-in custom kinds: `compactionSummary`, `branchSummary`, `extension`.
