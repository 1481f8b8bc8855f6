//! What a model sees of a transcript: the default projection of custom messages
//! ([`to_llm`]) and the preparation of those messages for one target model
//! ([`prepare()`]).

mod convert;

pub use crate::preparation::{
    prepare, validate, AppendTarget, Change, ChangeKind, EditError, IdMap, IdRule, LastAssistant,
    LastUser, PartOf, Prepared, Problem, ProblemKind, PromptEditor, PromptMessage, Provenance,
    Report, Target, ThinkingPolicy, Validator, NO_RESULT_TEXT,
};
pub use convert::{to_llm, to_llm_with_report, LlmProjection};
