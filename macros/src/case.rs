//! serde's `rename_all` rules (serde_derive's `case.rs`): the key serde gives a
//! field, so the reserved-key check sees what serde will write.

use self::RenameRule::*;

/// A `#[serde(rename_all = "…")]` rule.
#[allow(clippy::enum_variant_names)] // serde_derive's names, each a case style
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RenameRule {
    LowerCase,
    UpperCase,
    PascalCase,
    CamelCase,
    SnakeCase,
    ScreamingSnakeCase,
    KebabCase,
    ScreamingKebabCase,
}

static RENAME_RULES: &[(&str, RenameRule)] = &[
    ("lowercase", LowerCase),
    ("UPPERCASE", UpperCase),
    ("PascalCase", PascalCase),
    ("camelCase", CamelCase),
    ("snake_case", SnakeCase),
    ("SCREAMING_SNAKE_CASE", ScreamingSnakeCase),
    ("kebab-case", KebabCase),
    ("SCREAMING-KEBAB-CASE", ScreamingKebabCase),
];

impl RenameRule {
    /// The rule named `name`; `None` for a name serde does not know (serde
    /// reports it).
    pub fn from_name(name: &str) -> Option<Self> {
        RENAME_RULES
            .iter()
            .find(|(rule_name, _)| *rule_name == name)
            .map(|&(_, rule)| rule)
    }

    /// The key of a field named `field` (without `r#`).
    pub fn apply_to_field(self, field: &str) -> String {
        match self {
            LowerCase => field.to_ascii_lowercase(),
            UpperCase | ScreamingSnakeCase => field.to_ascii_uppercase(),
            PascalCase => {
                let mut pascal = String::new();
                let mut capitalize = true;
                for ch in field.chars() {
                    if ch == '_' {
                        capitalize = true;
                    } else if capitalize {
                        pascal.extend(ch.to_uppercase());
                        capitalize = false;
                    } else {
                        pascal.push(ch);
                    }
                }
                pascal
            }
            CamelCase => {
                let pascal = PascalCase.apply_to_field(field);
                let mut chars = pascal.chars();
                match chars.next() {
                    Some(first) => first.to_lowercase().chain(chars).collect(),
                    None => String::new(),
                }
            }
            SnakeCase => field.to_owned(),
            KebabCase => field.replace('_', "-"),
            ScreamingKebabCase => ScreamingSnakeCase.apply_to_field(field).replace('_', "-"),
        }
    }
}
