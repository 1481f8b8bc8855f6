//! Recognising the context-overflow errors of each provider.
