//! gemini codec.
