//! Reading and writing JSON Lines transcripts.
