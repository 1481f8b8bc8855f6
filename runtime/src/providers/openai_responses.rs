//! openai_responses codec.
