//! openai_chat codec.
