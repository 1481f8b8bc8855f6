//! The default projection of a transcript to LLM messages.
